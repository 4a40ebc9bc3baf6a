"""helm, built here from its Go module (the wrapper module `aftershock/toolchain/kind/helm`
pins it): what installs a profile's chart into a kind cluster (``install_in_cluster.helm``).
Built once into the cache, with progress."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from aftershock.cache import cache_root
from aftershock.providers import toolchain
from aftershock.providers.toolchain import BuildStep, Progress

PACKAGE = "helm.sh/helm/v3/cmd/helm"


def directory() -> Path:
    return cache_root() / "kind" / "helm" / toolchain.go_env("GOVERSION")


def ensure(say: Progress) -> Path:
    """The helm program, built unless cached."""
    final = directory()
    if (final / "helm").is_file():
        return final / "helm"
    final.parent.mkdir(parents=True, exist_ok=True)
    # named as the image builds' scratch, which `cluster gc` removes if we were killed
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=final.parent))
    try:
        toolchain.run_step(BuildStep("helm", toolchain.pinned_module("kind/helm"), (PACKAGE,),
                                     "-s -w"), scratch, 1, 1, say)
        shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final / "helm"
