"""containerd for the kind node, built here from its Go module at the version kind's own base
image builds (the wrapper module `aftershock/toolchain/kind/containerd` pins it), with the
build tags kind uses. Debian bookworm's containerd (1.6) ignores CDI specs, so on it a driver's
CDI spec that is gone changes nothing a pod shows; containerd 2 reads them by default
(``enable_cdi``), as the nodes users run do. Built once into the cache, with progress."""

from __future__ import annotations

from pathlib import Path

from aftershock.go import toolchain
from aftershock.go.toolchain import BuildStep, Progress
from aftershock.machine.cache import cache_root

MODULE = "github.com/containerd/containerd/v2"
BINARIES = ("containerd", "ctr", "containerd-shim-runc-v2")
TAGS = "no_aufs no_zfs no_btrfs no_devmapper"  # snapshotters a kind node never selects


def version() -> str:
    go_mod = toolchain.TOOLCHAIN_DIR / "kind" / "containerd" / "go.mod"
    for line in go_mod.read_text().splitlines():
        words = line.replace("require", "").split()
        if words[:1] == [MODULE]:
            return words[1].removeprefix("v")
    raise ValueError(f"{go_mod} does not require {MODULE}")


def directory() -> Path:
    return cache_root() / "kind" / "containerd" / (
        f"v{version()}_{toolchain.go_env('GOVERSION')}")


def ensure(say: Progress) -> Path:
    """The directory holding containerd, ctr and the runc shim, built unless cached."""
    final = directory()
    if all((final / name).is_file() for name in BINARIES):
        return final
    flags = f"-s -w -X {MODULE}/version.Version=v{version()}"
    step = BuildStep(f"containerd v{version()}", toolchain.pinned_module("kind/containerd"),
                     tuple(f"{MODULE}/cmd/{name}" for name in BINARIES), flags, tags=TAGS)
    toolchain.build_into(final, [step], say)
    return final
