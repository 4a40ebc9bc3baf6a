"""helm, built here from its Go module (the wrapper module `aftershock/toolchain/kind/helm`
pins it): what installs a profile's chart into a kind cluster (``install_in_cluster.helm``).
Built once into the cache, with progress."""

from __future__ import annotations

from pathlib import Path

from aftershock.go import toolchain
from aftershock.go.toolchain import BuildStep, Progress
from aftershock.machine.cache import cache_root

PACKAGE = "helm.sh/helm/v3/cmd/helm"


def directory() -> Path:
    return cache_root() / "kind" / "helm" / toolchain.go_env("GOVERSION")


def ensure(say: Progress) -> Path:
    """The helm program, built unless cached."""
    final = directory()
    if (final / "helm").is_file():
        return final / "helm"
    toolchain.build_into(final, [BuildStep("helm", toolchain.pinned_module("kind/helm"),
                                           (PACKAGE,), "-s -w")], say)
    return final / "helm"
