"""Implementations built from their published Go modules, pinned in the profile
(``build: {go: "github.com/org/operator/cmd@v1.2.3"}``): built once with ``go build`` into
~/.cache/aftershock/impl/<package@version, go version>/ (written to a temp dir, then renamed),
with progress; ``{binary}`` names the built program and ``{module_dir}`` the module's own files
(CRDs, RBAC) in the Go module cache."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from aftershock.errors import UserError

Progress = Callable[[str], None]
PINNED = re.compile(r"^(?P<package>[a-z0-9.-]+\.[a-z]+(?:/[A-Za-z0-9_.~+-]+)+)"
                    r"@(?P<version>v\d+\.\d+\.\d+\S*)$")


@dataclass(frozen=True)
class GoBuild:
    package: str
    version: str
    binary: str

    @classmethod
    def parse(cls, text: str, binary: str | None = None) -> GoBuild:
        found = PINNED.match(text)
        if not found:
            raise ValueError(f"'{text}' is not a pinned Go package (expected "
                             "module/path/cmd@vX.Y.Z)")
        package = found["package"]
        name = binary or package.rsplit("/", 1)[-1]
        if re.fullmatch(r"v\d+", name):  # a major-version suffix: the element before names it
            name = package.rsplit("/", 2)[-2]
        return cls(package, found["version"], name)

    @property
    def pinned(self) -> str:
        return f"{self.package}@{self.version}"


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _env() -> dict[str, str]:
    return {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}


@cache
def go_version() -> str:
    try:
        found = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True,
                               check=True, env=_env())
    except (OSError, subprocess.CalledProcessError) as exc:
        raise UserError(f"building an implementation from its Go module needs go: {exc}") \
            from None
    return found.stdout.strip()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aftershock" / "impl"


def _slug(build: GoBuild) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", build.pinned) + f"_{go_version()}"


@cache
def module_of(build: GoBuild) -> tuple[str, Path]:
    """The module holding the package (its path, and its files as downloaded into the Go
    module cache): the longest prefix of the package the proxy serves at that version."""
    parts = build.package.split("/")
    tried = []
    for end in range(len(parts), 1, -1):
        module = "/".join(parts[:end])
        result = subprocess.run(["go", "mod", "download", "-json", f"{module}@{build.version}"],
                                capture_output=True, text=True, env=_env(),
                                cwd=tempfile.gettempdir())
        info = json.loads(result.stdout or "{}")
        if result.returncode == 0 and info.get("Dir"):
            return module, Path(info["Dir"])
        tried.append(f"{module}: {(info.get('Error') or result.stderr).strip()[:200]}")
    raise UserError(f"no module of {build.pinned} could be downloaded: " + "; ".join(tried))


def module_dir(build: GoBuild) -> Path:
    return module_of(build)[1]


def built(build: GoBuild) -> Path | None:
    found = cache_dir() / _slug(build) / build.binary
    return found if found.is_file() else None


def ensure(build: GoBuild, progress: Progress | None = None) -> Path:
    """The built program, built now (with progress) if it is not cached yet."""
    say = progress or _say
    ready = built(build)
    if ready is not None:
        return ready
    final = cache_dir() / _slug(build)
    final.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-{_slug(build)}-", dir=final.parent))
    say(f"building {build.pinned} with {go_version()} (once; cached in {final})")
    began = time.monotonic()
    try:
        _install(build, scratch, say, began)
        if not (scratch / build.binary).is_file():
            made = sorted(p.name for p in scratch.iterdir())
            raise UserError(f"building {build.pinned} made {made or 'nothing'}, not "
                            f"{build.binary} (set build.binary in the profile)")
        shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"built {build.pinned} in {time.monotonic() - began:.0f}s")
    return final / build.binary


def _install(build: GoBuild, into: Path, say: Progress, began: float) -> None:
    """Build in a module of our own that requires the implementation's module at its version:
    the build list is the module's own, and no `go install pkg@version` (which asks the proxy
    for the module's version list, refused here)."""
    module, _ = module_of(build)
    consumer = into / "src"
    consumer.mkdir()
    (consumer / "go.mod").write_text(f"module aftershock.local/build\n\ngo "
                                     f"{_language(go_version())}\n\nrequire {module} "
                                     f"{build.version}\n")
    proc = subprocess.Popen(["go", "build", "-v", "-trimpath", "-ldflags", "-s -w", "-o",
                             str(into / build.binary), build.package], env=_env(),
                            cwd=consumer, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True)
    assert proc.stderr is not None
    compiled, shown, tail = 0, time.monotonic(), []
    for line in proc.stderr:
        tail = [*tail[-40:], line.rstrip()]
        if line.startswith(("go: downloading", "#", " ", "\t")):
            continue
        compiled += 1
        if time.monotonic() - shown >= 10:
            shown = time.monotonic()
            say(f"  {build.pinned}: {compiled} packages compiled "
                f"({shown - began:.0f}s)")
    if proc.wait() != 0:
        raise UserError(f"building {build.pinned} failed:\n" + "\n".join(tail))
    shutil.rmtree(consumer)


def _language(version: str) -> str:
    """go1.26.8 → 1.26 (the go line of our own go.mod)."""
    found = re.match(r"go(\d+\.\d+)", version)
    return found.group(1) if found else "1.22"
