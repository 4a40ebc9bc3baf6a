"""Implementations built from Go, pinned in the profile: a published module
(``build: {go: "github.com/org/operator/cmd@v1.2.3"}``), a source tree at one commit
(``build: {git: URL, commit: <40 hex>, dir: operator, package: ./cmd}``, cloned shallow into
~/.cache/aftershock/src/ and built in the module's own directory, so its own ``replace``
lines and go.sum hold), or a module of the project's own (``build: {path: <folder>}``,
relative to the profile, pinned by the hash of its files). A published module or a source
tree may carry ``patches`` (diffs kept beside the profile, ``patch -p1`` from the module's, or
the repository's, root): applied to a copy, which is built in its own module, the patches'
hash in the cache key, so a fix can be tried on the very version a bug was found in.
Built once with ``go build`` into ~/.cache/aftershock/impl/<what, go version>/ (written to a
temp dir, then renamed), with progress; ``{binary}`` names the built program,
``{module_dir}`` the module's own files (CRDs, RBAC; unpatched) and, for a source tree,
``{source_dir}`` the whole checkout.

git and Go read their own settings untouched: a machine that cannot reach a repository maps
its URL to a mirror (``git config url.<mirror>.insteadOf <URL>``), and a module the proxy
refuses is served from a file proxy (``GOPROXY=file:///dir,https://proxy.golang.org``)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from aftershock.errors import UserError

Progress = Callable[[str], None]
PINNED = re.compile(r"^(?P<package>[a-z0-9.-]+\.[a-z]+(?:/[A-Za-z0-9_.~+-]+)+)"
                    r"@(?P<version>v\d+\.\d+\.\d+\S*)$")


COMMIT = re.compile(r"^[0-9a-f]{40}$")


class SourceUnreachable(UserError):
    """A profile's source tree could not be fetched (no network to its host, no mirror), or a
    module its build needs was refused by the module proxy."""


REFUSED = re.compile(r"403 Forbidden|404 Not Found|not available|unrecognized import path")


@dataclass(frozen=True)
class GoBuild:
    package: str
    version: str
    binary: str
    # Built in the module's own directory (its go.mod and go.sum, so its replace lines hold),
    # not in a module of ours that requires it (where a dependency's replace lines are ignored)
    own_module: bool = False
    patches: tuple[Path, ...] = ()
    # GOTOOLCHAIN for a module that needs a newer Go ("" for the machine's), as the profile
    # loader checked it (profile/files.py)
    toolchain: str = ""

    @classmethod
    def parse(cls, text: str, binary: str | None = None, own_module: bool = False,
              patches: tuple[Path, ...] = (), toolchain: str = "") -> GoBuild:
        found = PINNED.match(text)
        if not found:
            raise ValueError(f"'{text}' is not a pinned Go package (expected "
                             "module/path/cmd@vX.Y.Z)")
        package = found["package"]
        name = binary or package.rsplit("/", 1)[-1]
        if re.fullmatch(r"v\d+", name):  # a major-version suffix: the element before names it
            name = package.rsplit("/", 2)[-2]
        return cls(package, found["version"], name, own_module or bool(patches), patches,
                   toolchain)

    @property
    def pinned(self) -> str:
        own = " in its own module" if self.own_module and not self.patches else ""
        return f"{self.package}@{self.version}{own}{patched(self.patches)}"


@dataclass(frozen=True)
class SourceBuild:
    """A Go package built from a git repository at one commit, in its module's directory."""

    git: str
    commit: str
    dir: str = "."
    package: str = "."
    binary: str = ""
    patches: tuple[Path, ...] = ()
    toolchain: str = ""

    @classmethod
    def parse(cls, raw: dict[str, str], patches: tuple[Path, ...] = ()) -> SourceBuild:
        """From a profile's build map; a ValueError's args are (the field that is wrong,
        why)."""
        commit = str(raw.get("commit", ""))
        if not COMMIT.match(commit):
            raise ValueError("commit", f"'{commit}' is not a full commit id (40 hex digits)")
        folder = str(raw.get("dir", ".")).strip("/") or "."
        if folder.startswith("..") or Path(folder).is_absolute():
            raise ValueError("dir", f"'{folder}' is not a folder inside the repository")
        package = str(raw.get("package", "."))
        repository = str(raw["git"]).rstrip("/").removesuffix(".git")
        name = raw.get("binary") or posixpath.basename(posixpath.normpath(
            f"{folder}/{package}")).replace(".", "") or posixpath.basename(repository)
        try:
            toolchain = checked_toolchain(str(raw.get("toolchain", "")))
        except ValueError as exc:
            raise ValueError("toolchain", str(exc)) from None
        return cls(str(raw["git"]), commit, folder, package, str(name), patches, toolchain)

    @property
    def pinned(self) -> str:
        where = "" if self.dir == "." else f" {self.dir}"
        return f"{self.git}@{self.commit[:12]}{where} {self.package}{patched(self.patches)}"


TOOLCHAIN = re.compile(r"go\d+\.\d+(?:\.\d+)?")


def checked_toolchain(name: str) -> str:
    """A profile's build.toolchain: '' or a Go toolchain's name (go1.27.3)."""
    if name and not TOOLCHAIN.fullmatch(name):
        raise ValueError(f"'{name}' is not a Go toolchain (expected a name such as go1.27.3)")
    return name


def patched(patches: tuple[Path, ...]) -> str:
    """' patched with a.patch, b.patch@<hash of their text>', or nothing."""
    if not patches:
        return ""
    found = hashlib.sha256()
    for patch in patches:
        found.update(patch.name.encode() + b"\0" + patch.read_bytes())
    return f" patched with {', '.join(p.name for p in patches)}@{found.hexdigest()[:12]}"


@dataclass(frozen=True)
class LocalBuild:
    """A Go module kept in the project beside its profiles (a reference implementation of
    aftershock's own), built in its own directory from its go.mod and go.sum; cached under the
    hash of its files, so an edited program is built again."""

    path: Path
    package: str = "."
    binary: str = ""
    toolchain: str = ""

    @property
    def pinned(self) -> str:
        return f"{self.path.name}@{self.digest()[:12]}"

    def digest(self) -> str:
        files = sorted(p for p in self.path.rglob("*") if p.is_file()
                       and (p.suffix == ".go" or p.name in ("go.mod", "go.sum")))
        found = hashlib.sha256()
        for file in files:
            found.update(str(file.relative_to(self.path)).encode() + b"\0" + file.read_bytes())
        return found.hexdigest()


Build = GoBuild | SourceBuild | LocalBuild


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _env(toolchain: str = "") -> dict[str, str]:
    """The go command's environment: the machine's Go, or the toolchain a profile names
    (which the go command takes from the Go module proxy the first time, as any module)."""
    return {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod",
            "GOTOOLCHAIN": toolchain or "local"}


@cache
def go_version(toolchain: str = "") -> str:
    if toolchain:
        _say(f"using Go {toolchain} (fetched from the Go module proxy once, as GOTOOLCHAIN "
             "does)")
    try:
        found = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True,
                               check=True, env=_env(toolchain), cwd=tempfile.gettempdir())
    except (OSError, subprocess.CalledProcessError) as exc:
        said = (exc.stderr if isinstance(exc, subprocess.CalledProcessError) else "") or exc
        raise UserError(f"building an implementation from its Go module needs go"
                        f"{' ' + toolchain if toolchain else ''}: {str(said).strip()}") \
            from None
    return found.stdout.strip()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aftershock" / "impl"


def _slug(build: Build) -> str:
    """One cache folder per program: a source tree's package built under two names (two
    profiles' placeholders) is two programs, or each build would remove the other's."""
    named = f"_{build.binary}" if isinstance(build, SourceBuild | LocalBuild) else ""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", build.pinned) + named + \
        f"_{go_version(build.toolchain)}"


def source_root() -> Path:
    return cache_dir().parent / "src"


@contextlib.contextmanager
def _alone(final: Path) -> Iterator[None]:
    """Held while ``final`` is made, so two runs at once (pytest-xdist's workers, explore's)
    make it once: the second waits, then finds it made."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f".lock-{final.name}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _tree(build: SourceBuild) -> Path:
    return source_root() / re.sub(r"[^A-Za-z0-9_.-]+", "_", build.git) / build.commit


def is_fetched(build: SourceBuild) -> bool:
    return (_tree(build) / ".git").is_dir()


def source_tree(build: SourceBuild, progress: Progress | None = None) -> Path:
    """The repository's files at the commit: fetched once (shallow, that commit only) into
    ~/.cache/aftershock/src/<repository>/<commit>/."""
    final = _tree(build)
    if (final / ".git").is_dir():
        return final
    with _alone(final):
        if (final / ".git").is_dir():
            return final
        return _fetch(build, final, progress or _say)


def _fetch(build: SourceBuild, final: Path, say: Progress) -> Path:
    scratch = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
    say(f"fetching {build.git} at {build.commit[:12]} (once; cached in {final})")
    try:
        for command in (["init", "-q"], ["fetch", "-q", "--depth", "1", build.git,
                                         build.commit], ["checkout", "-q", "FETCH_HEAD"]):
            done = subprocess.run(["git", *command], cwd=scratch, capture_output=True,
                                  text=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
            if done.returncode != 0:
                raise SourceUnreachable(_unreachable(build, done.stderr))
        shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def _unreachable(build: SourceBuild, stderr: str) -> str:
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    return (f"cannot fetch {build.git} at {build.commit}: {said[-1] if said else 'git failed'}"
            f" (a machine that cannot reach it maps the URL to a mirror: git config --global "
            f"url.<mirror>.insteadOf {build.git}; or for one run only, in its environment: "
            f"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=url.<mirror>.insteadOf "
            f"GIT_CONFIG_VALUE_0={build.git})")


@cache
def module_of(build: GoBuild) -> tuple[str, Path]:
    """The module holding the package (its path, and its files as downloaded into the Go
    module cache): the longest prefix of the package the proxy serves at that version."""
    parts = build.package.split("/")
    tried = []
    for end in range(len(parts), 1, -1):
        module = "/".join(parts[:end])
        result = subprocess.run(["go", "mod", "download", "-json", f"{module}@{build.version}"],
                                capture_output=True, text=True, env=_env(build.toolchain),
                                cwd=tempfile.gettempdir())
        info = json.loads(result.stdout or "{}")
        if result.returncode == 0 and info.get("Dir"):
            return module, Path(info["Dir"])
        tried.append(f"{module}: {(info.get('Error') or result.stderr).strip()[:200]}")
    raise UserError(f"no module of {build.pinned} could be downloaded: " + "; ".join(tried))


def module_dir(build: Build) -> Path:
    if isinstance(build, LocalBuild):
        return build.path
    if isinstance(build, SourceBuild):
        return source_tree(build) / build.dir
    return module_of(build)[1]


def values(build: Build | None) -> dict[str, str]:
    """The placeholders a build gives a profile's paths."""
    if build is None:
        return {}
    if isinstance(build, SourceBuild):
        return {"module_dir": str(module_dir(build)), "source_dir": str(source_tree(build))}
    return {"module_dir": str(module_dir(build))}


def built(build: Build) -> Path | None:
    found = cache_dir() / _slug(build) / build.binary
    return found if found.is_file() else None


def ensure(build: Build, progress: Progress | None = None) -> Path:
    """The built program, built now (with progress) if it is not cached yet."""
    ready = built(build)
    if ready is not None:
        return ready
    final = cache_dir() / _slug(build)
    with _alone(final):
        return built(build) or _build(build, final, progress or _say)


def _build(build: Build, final: Path, say: Progress) -> Path:
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-{_slug(build)}-", dir=final.parent))
    say(f"building {build.pinned} with {go_version(build.toolchain)} (once; cached in "
        f"{final})")
    began = time.monotonic()
    try:
        if isinstance(build, SourceBuild | LocalBuild) or build.own_module:
            _compile(build, ["go", "build", "-v", "-trimpath", "-ldflags", "-s -w", "-o",
                             str(scratch / build.binary), build.package],
                     _patched_copy(build, scratch / ".tree", say), say, began,
                     {**_env(build.toolchain), "GOFLAGS": "-mod=readonly -buildvcs=false"})
            shutil.rmtree(scratch / ".tree", ignore_errors=True)
        else:
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


def _patched_copy(build: Build, tree: Path, say: Progress) -> Path:
    """Where the build runs: the module's own folder, or with patches a writable copy of it
    (of the whole repository for a source tree), each patch applied in order."""
    if isinstance(build, LocalBuild) or not build.patches:
        return module_dir(build)
    root = source_tree(build) if isinstance(build, SourceBuild) else module_dir(build)
    # The module cache is read-only; a copy that keeps its modes could not be patched.
    subprocess.run(["cp", "-R", "--no-preserve=mode,ownership", str(root), str(tree)],
                   check=True)
    for patch in build.patches:
        done = subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch",
                               "-i", str(patch)], cwd=tree, capture_output=True, text=True)
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip().splitlines()
            raise UserError(f"patch {patch} does not apply to {build.pinned}: "
                            f"{said[-1] if said else 'patch failed'}")
        say(f"  applied {patch.name}")
    return tree / build.dir if isinstance(build, SourceBuild) else tree


def _install(build: GoBuild, into: Path, say: Progress, began: float) -> None:
    """Build in a module of our own that requires the implementation's module at its version:
    the build list is the module's own, and no `go install pkg@version` (which asks the proxy
    for the module's version list, refused here)."""
    module, _ = module_of(build)
    consumer = into / "src"
    consumer.mkdir()
    (consumer / "go.mod").write_text(f"module aftershock.local/build\n\ngo "
                                     f"{_language(go_version(build.toolchain))}\n\n"
                                     f"require {module} "
                                     f"{build.version}\n")
    _compile(build, ["go", "build", "-v", "-trimpath", "-ldflags", "-s -w", "-o",
                     str(into / build.binary), build.package], consumer, say, began,
             _env(build.toolchain))
    shutil.rmtree(consumer)


def _compile(build: Build, command: list[str], cwd: Path, say: Progress, began: float,
             env: dict[str, str]) -> None:
    """Run the build, saying every 10 s how many packages it compiled."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True)
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
        refused = next((line for line in tail if REFUSED.search(line)), None)
        if refused:
            raise SourceUnreachable(f"building {build.pinned}: a module it needs was refused: "
                                    f"{refused.strip()} (serve it from a file proxy: "
                                    "GOPROXY=file:///dir,https://proxy.golang.org,direct)")
        raise UserError(f"building {build.pinned} failed:\n" + "\n".join(tail))


def _language(version: str) -> str:
    """go1.26.8 → 1.26 (the go line of our own go.mod)."""
    found = re.match(r"go(\d+\.\d+)", version)
    return found.group(1) if found else "1.22"
