"""The wheel carries the profiles aftershock ships ({aftershock} in a profile: Kubernetes' own
controllers and the third-party implementations built from their published sources), which
the repository keeps in profiles/ beside the reference implementations' own, and its cluster
shapes (clusters/: a `@shape:` tag of a feature in no project), each where the repository
keeps it relative to the other (kube-replicaset.yaml names ../implementations/kube/)."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PROFILES = Path(__file__).resolve().parent / "profiles"
# What needs nothing of this repository but the package: not a profile that starts or builds a
# reference implementation from implementations/
SHIPPED = ("thirdparty", "kube-replicaset.yaml", "kube-statefulset.yaml",
           "kube-scheduler-gang.yaml")
LEFT = ("k8s-dra-test-driver*",)  # built from implementations/: a checkout's alone


class WithProfiles(build_py):
    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "aftershock"
        shutil.rmtree(package / "clusters", ignore_errors=True)
        shutil.copytree(PROFILES.parent / "clusters", package / "clusters")
        shutil.rmtree(package / "implementations", ignore_errors=True)
        shutil.copytree(PROFILES.parent / "implementations" / "kube",
                        package / "implementations" / "kube")  # Kubernetes' own: manifests
        into = package / "profiles"
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        for name in SHIPPED:
            source = PROFILES / name
            if source.is_dir():
                shutil.copytree(source, into / name, ignore=shutil.ignore_patterns(
                    *LEFT, "__pycache__"))
            else:
                shutil.copy2(source, into / name)


setup(cmdclass={"build_py": WithProfiles})
