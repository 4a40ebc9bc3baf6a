"""``aftershock.local/python:3.11``: the base of the images aftershock builds for Python code
that runs inside a kind cluster (the watch-delay sidecar, the reference implementations
installed in the cluster), made here with no registry.

Debian bookworm's python3 (3.11, the minor version the harness itself runs) from a root file
system made with mmdebstrap, plus the client libraries at the versions this environment runs:
the kubernetes client and PyYAML, installed by pip for that Python and this machine's
architecture into /usr/local/lib/python3.11/dist-packages (on Debian's sys.path). A Dockerfile
says ``FROM aftershock.local/python:3.11``; `ensure` builds it first when the engine lacks it.
Cached by its inputs (a label on the image).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from aftershock.containers.images.base import MIRROR, SUITE, Say, ensure_mmdebstrap, say_to_stderr
from aftershock.containers.images.docker import Docker
from aftershock.errors import UserError
from aftershock.machine.cache import cache_root

TAG = "aftershock.local/python:3.11"
PYTHON = "3.11"  # bookworm's python3
PACKAGES = ("python3", "ca-certificates")
LIBRARIES = ("kubernetes", "PyYAML")
GLIBC = 36  # bookworm's glibc is 2.36: any manylinux wheel up to it runs there
REVISION = 1  # bump when what this module puts in the image changes
LABEL = "io.aftershock.inputs"


def requirements() -> list[str]:
    """The libraries, pinned at the versions installed here (what the harness is tested with)."""
    return [f"{name}=={metadata.version(name)}" for name in LIBRARIES]


def key() -> str:
    text = json.dumps([SUITE, PACKAGES, requirements(), platform.machine(), REVISION])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def platforms(machine: str) -> list[str]:
    """pip takes a --platform as it is, never the older ones it implies: name them all."""
    tags = [f"manylinux_2_{minor}_{machine}" for minor in range(GLIBC, 16, -1)]
    return [*tags, f"manylinux2014_{machine}"]


def pip_command(target: Path) -> list[str]:
    """pip, installing wheels for the image's Python and platform (not this process's)."""
    chosen = [word for tag in platforms(platform.machine()) for word in ("--platform", tag)]
    return [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-compile", "--target", str(target), "--only-binary=:all:",
            "--python-version", PYTHON, "--implementation", "cp", "--abi", "cp311",
            *chosen, *requirements()]


def ensure(docker: Docker, say: Say) -> str:
    """The image's tag, built unless the engine holds one made of the same inputs."""
    wanted = key()
    if docker.has_image(TAG) and docker.run("image", "inspect", "-f",
                                            f'{{{{ index .Config.Labels "{LABEL}" }}}}', TAG,
                                            check=False) == wanted:
        return TAG
    ensure_mmdebstrap(say)
    # named as the other image builds' scratch, which `cluster gc` removes if we were killed
    cache = cache_root() / "kind"
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=cache))
    try:
        root = scratch / "rootfs"
        say(f"{TAG}: debian {SUITE} with python3 (mmdebstrap)")
        done = subprocess.run(["mmdebstrap", "--variant=minbase", "--quiet",
                               f"--include={','.join(PACKAGES)}", SUITE, str(root), MIRROR],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise UserError(f"mmdebstrap failed ({done.returncode}): "
                            f"{done.stderr.strip()[-600:]}")
        say(f"{TAG}: {', '.join(requirements())} (pip, wheels for python {PYTHON})")
        site = root / "usr" / "local" / "lib" / f"python{PYTHON}" / "dist-packages"
        done = subprocess.run(pip_command(site), capture_output=True, text=True)
        if done.returncode != 0:
            raise UserError(f"pip could not install the image's libraries: "
                            f"{done.stderr.strip()[-800:]}")
        for package in (root / "var" / "cache" / "apt" / "archives").glob("*.deb"):
            package.unlink()
        imported = f"{TAG}-import"
        docker.import_tree(root, imported, ["ENV PYTHONUNBUFFERED=1"])
        docker.build(scratch / "context", f"FROM {imported}\nLABEL {LABEL}={wanted}\n", TAG)
        docker.run("rmi", imported, check=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"{TAG}: built")
    return TAG


def needed_by(dockerfile: Path) -> bool:
    """Whether a Dockerfile builds on this image (a FROM line naming it)."""
    for line in dockerfile.read_text().splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].upper() == "FROM" and TAG in words[1:]:
            return True
    return False


def ensure_for(engine: str, dockerfile: Path, say: Say = say_to_stderr) -> None:
    """Build the base first when ``dockerfile`` builds on it."""
    if needed_by(dockerfile):
        ensure(Docker(engine), say)
