"""The kind binary: the one on PATH, else ours, built once with `go install` at a pinned tag into
the cache (next to the control-plane binaries, never into the user's GOPATH/bin)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from aftershock.errors import ToolchainMissing
from aftershock.machine.cache import cache_root

KIND_MODULE = "sigs.k8s.io/kind"
KIND_VERSION = "v0.33.0"


def cached_path() -> Path:
    return cache_root() / "bin" / "tools" / f"kind-{KIND_VERSION}" / "kind"


def install_command() -> list[str]:
    return ["go", "install", f"{KIND_MODULE}@{KIND_VERSION}"]


def install_env(gobin: Path) -> dict[str, str]:
    """GOBIN decides where `go install` writes; CGO off gives a static binary."""
    return {**os.environ, "GOBIN": str(gobin), "CGO_ENABLED": "0"}


def find(path: str | None = None) -> str | None:
    """kind on PATH, else the one we installed earlier."""
    on_path = shutil.which("kind", path=path)
    if on_path:
        return on_path
    cached = cached_path()
    return str(cached) if cached.is_file() else None


def install() -> str:
    """Build kind into the cache (a temp dir renamed when complete); minutes, once."""
    if not shutil.which("go"):
        raise ToolchainMissing(f"kind is not on PATH and Go is not installed to build it "
                               f"({KIND_MODULE}@{KIND_VERSION})")
    target = cached_path()
    # Named like the toolchain's temp dirs, so `aftershock cluster gc` removes an abandoned one.
    scratch = cache_root() / "bin" / f".tmp-kind-{KIND_VERSION}-pid{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    built = subprocess.run(install_command(), env=install_env(scratch),
                           capture_output=True, text=True)
    if built.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise ToolchainMissing(f"go install {KIND_MODULE}@{KIND_VERSION} failed: "
                               f"{built.stderr.strip()[-800:]}")
    shutil.rmtree(target.parent, ignore_errors=True)
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    scratch.rename(target.parent)
    return str(target)


def require() -> str:
    return find() or install()
