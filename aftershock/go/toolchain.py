"""Build and cache the control-plane binaries from Go modules (no release archives here).

Three Go modules live in ``aftershock/toolchain/`` (package data, copied into the cache to build):
``kubernetes`` (kube-apiserver, kube-controller-manager, kube-scheduler, and kubectl when the
machine has none), ``etcd`` and ``kwok`` (kwok, kwokctl).
They are separate modules so each binary is built with exactly its upstream's dependency set.
Another Kubernetes patch or minor is built from a go.mod generated from that tag's own go.mod.
Binaries land in ``<cache>/bin/<key>/`` where the key names every version, written to a temp
dir and renamed when complete.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from aftershock.errors import ToolchainMissing, UserError
from aftershock.machine.cache import cache_root

TOOLCHAIN_DIR = Path(__file__).resolve().parents[1] / "toolchain"  # go.mod files: package data
KUBE_SERVERS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
ALL_BINARIES = (*KUBE_SERVERS, "etcd", "kwok", "kwokctl")
VERSION_RE = re.compile(r"^v?(1)\.([0-9]+)\.([0-9]+)$")

Progress = Callable[[str], None]


def _required_version(go_mod: Path, module: str) -> str:
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", go_mod.read_text(), re.M)
    if not match:
        raise RuntimeError(f"{go_mod} does not require {module}")
    return match.group(1)


def pinned_kubernetes() -> str:
    return _required_version(TOOLCHAIN_DIR / "kubernetes" / "go.mod", "k8s.io/kubernetes")[1:]


def normalise_kubernetes(version: str | None) -> str:
    """'1.37.2' or 'v1.37.2' → '1.37.2'; None → the pinned version."""
    if version is None:
        return pinned_kubernetes()
    match = VERSION_RE.match(version.strip())
    if not match and "," in version:
        raise UserError(f"--kubernetes-version {version}: a list of versions is for 'aftershock "
                        "run', which runs the features on each version in turn")
    if not match:
        raise UserError(f"--kubernetes-version must look like 1.37.2, got '{version}'")
    return ".".join(match.groups())


def go_env(name: str) -> str:
    go = shutil.which("go")
    if not go:
        raise ToolchainMissing("Go is not installed; the control plane is built with 'go build'")
    found = subprocess.run([go, "env", name], capture_output=True, text=True, check=True)
    return found.stdout.strip()


@dataclass(frozen=True)
class Versions:
    kubernetes: str
    etcd: str
    kwok: str
    go: str
    platform: str

    @classmethod
    def resolve(cls, kubernetes: str | None = None) -> Versions:
        return cls(
            kubernetes=normalise_kubernetes(kubernetes),
            etcd=_required_version(TOOLCHAIN_DIR / "etcd" / "go.mod",
                                   "go.etcd.io/etcd/server/v3")[1:],
            kwok=_required_version(TOOLCHAIN_DIR / "kwok" / "go.mod", "sigs.k8s.io/kwok")[1:],
            go=go_env("GOVERSION"),
            platform=f"{go_env('GOOS')}-{go_env('GOARCH')}",
        )

    @classmethod
    def resolve_without_go(cls, kubernetes: str | None = None) -> Versions:
        """The versions a toolchain is looked up by where no Go is (its ``go`` unknown)."""
        machine = platform.machine()
        return cls(
            kubernetes=normalise_kubernetes(kubernetes),
            etcd=_required_version(TOOLCHAIN_DIR / "etcd" / "go.mod",
                                   "go.etcd.io/etcd/server/v3")[1:],
            kwok=_required_version(TOOLCHAIN_DIR / "kwok" / "go.mod", "sigs.k8s.io/kwok")[1:],
            go="",
            platform=f"{sys.platform}-{GOARCH.get(machine, machine)}",
        )

    @property
    def key(self) -> str:
        return (
            f"k8s-v{self.kubernetes}_etcd-v{self.etcd}_kwok-v{self.kwok}_{self.go}_{self.platform}"
        )


@dataclass(frozen=True)
class Binaries:
    """Absolute paths of every binary a local cluster runs."""

    directory: Path
    versions: Versions
    kubectl: str

    def path(self, name: str) -> str:
        return str(self.directory / name)


def bin_dir(versions: Versions) -> Path:
    return cache_root() / "bin" / versions.key


def system_kubectl() -> str | None:
    return shutil.which("kubectl")


def find(kubernetes: str | None = None) -> Binaries | None:
    """The built binaries for these versions, or None if not built. Where there is no Go (the
    image that runs aftershock in a pod, `containers/images/harness.py`), the binaries are the
    ones built elsewhere and copied into the cache: found by their manifest's versions."""
    if shutil.which("go") is None:
        return _built_elsewhere(kubernetes)
    versions = Versions.resolve(kubernetes)
    directory = bin_dir(versions)
    if not (directory / "manifest.json").is_file():
        return None
    return _binaries(directory, versions)


# Go's names for this machine's architecture (GOARCH), as the key of a toolchain has it
GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "ppc64le": "ppc64le",
          "s390x": "s390x"}


def _built_elsewhere(kubernetes: str | None) -> Binaries | None:
    """A toolchain in the cache whose manifest names these Kubernetes, etcd and kwok versions
    and this machine's platform, whatever Go built it; None when there is none."""
    wanted = Versions.resolve_without_go(kubernetes)
    root = cache_root() / "bin"
    for directory in sorted(root.glob("k8s-*")) if root.is_dir() else []:
        try:
            built = Versions(**json.loads((directory / "manifest.json").read_text())["versions"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if (built.kubernetes, built.etcd, built.kwok, built.platform) == (
                wanted.kubernetes, wanted.etcd, wanted.kwok, wanted.platform):
            return _binaries(directory, built)
    return None


def _binaries(directory: Path, versions: Versions) -> Binaries:
    kubectl = directory / "kubectl"
    chosen = str(kubectl) if kubectl.is_file() else system_kubectl()
    return Binaries(directory, versions, chosen or "kubectl")


def require(kubernetes: str | None = None) -> Binaries:
    found = find(kubernetes)
    if found is None:
        hint = f" --kubernetes-version {kubernetes}" if kubernetes else ""
        raise ToolchainMissing(
            f"the control-plane binaries are not built; run 'aftershock toolchain build{hint}' "
            "(or 'make toolchain')"
        )
    return found


# --- generating the consumer module for a Kubernetes tag ---------------------------------


def staging_modules(kubernetes_go_mod: str) -> list[str]:
    """The staging modules a k8s.io/kubernetes go.mod replaces with ./staging/src/…"""
    pattern = r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/src/"
    return sorted(set(re.findall(pattern, kubernetes_go_mod, re.M)))


def consumer_go_mod(version: str, upstream_go_mod: str) -> str:
    """A go.mod that builds the servers of k8s.io/kubernetes@v<version> from the module proxy."""
    _, minor, patch = version.split(".")
    go_line = re.search(r"^go\s+(\S+)", upstream_go_mod, re.M)
    replaces = "\n".join(
        f"\t{module} => {module} v0.{minor}.{patch}" for module in staging_modules(upstream_go_mod)
    )
    tool_lines = "\n".join(f"\tk8s.io/kubernetes/cmd/{tool}" for tool in (*KUBE_SERVERS, "kubectl"))
    godebug = "".join(f"{line}\n" for line in re.findall(r"^godebug .*$", upstream_go_mod, re.M))
    return (
        "module aftershock.local/toolchain/kubernetes\n\n"
        f"go {go_line.group(1) if go_line else '1.24.0'}\n\n"
        f"{godebug}{chr(10) if godebug else ''}"
        f"require k8s.io/kubernetes v{version}\n\n"
        f"replace (\n{replaces}\n)\n\n"
        f"tool (\n{tool_lines}\n)\n"
    )


def _go(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        ["go", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if result.returncode != 0:
        missing = sorted(set(re.findall(r"(\S+@v[^:\s]+): (?:reading|verifying)", result.stderr)))
        if missing:
            raise UserError(f"'go {' '.join(args)}' cannot fetch {', '.join(missing)} from the "
                            "Go module proxy (not available there); try another patch release")
        raise UserError(f"'go {' '.join(args)}' failed in {cwd}:\n{result.stderr.strip()[-4000:]}")
    return result.stdout


def pinned_module(name: str) -> Path:
    """A committed module (package data) copied into the cache to build in: go may write to
    go.sum, and an installed package's files are not the build's to change."""
    source = TOOLCHAIN_DIR / name
    target = _ensure(cache_root() / "src" / f"pinned-{name}")
    for file in ("go.mod", "go.sum"):
        content = (source / file).read_bytes()
        if not (target / file).is_file() or (target / file).read_bytes() != content:
            (target / file).write_bytes(content)
    return target


def kubernetes_module_dir(version: str, progress: Progress) -> Path:
    """The committed module for the pinned version, or one generated for another tag."""
    if version == pinned_kubernetes():
        return pinned_module("kubernetes")
    target = cache_root() / "src" / f"kubernetes-v{version}"
    if (target / "go.sum").is_file():
        return target
    progress(f"generating a Go module for k8s.io/kubernetes v{version}")
    scratch = Path(tempfile.mkdtemp(prefix="modgen-", dir=_ensure(cache_root() / "src")))
    info = json.loads(_go(["mod", "download", "-json", f"k8s.io/kubernetes@v{version}"], scratch))
    if info.get("Error"):
        raise UserError(f"k8s.io/kubernetes v{version} is not available: {info['Error']}")
    (scratch / "go.mod").write_text(consumer_go_mod(version, Path(info["GoMod"]).read_text()))
    progress("resolving its dependencies (go mod tidy)")
    try:
        _go(["mod", "tidy"], scratch)
    except UserError:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    shutil.rmtree(target, ignore_errors=True)
    scratch.rename(target)
    return target


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def kubernetes_ldflags(version: str) -> str:
    _, minor, _ = version.split(".")
    info = Path(go_env("GOMODCACHE")) / "cache/download/k8s.io/kubernetes/@v" / f"v{version}.info"
    build_date = json.loads(info.read_text()).get("Time", "") if info.is_file() else ""
    values = {"gitVersion": f"v{version}", "gitMajor": "1", "gitMinor": minor,
              "gitTreeState": "clean", "buildDate": build_date}
    flags = [
        f"-X '{package}.{key}={value}'"
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
        for key, value in values.items()
    ]
    return " ".join(["-s", "-w", *flags])


@dataclass(frozen=True)
class BuildStep:
    label: str
    module: Path
    packages: tuple[str, ...]
    ldflags: str
    cgo: bool = False  # most binaries are static; a few need C (and gcc)
    tags: str = ""  # Go build tags, space-separated


def plan(versions: Versions, with_kubectl: bool, progress: Progress) -> list[BuildStep]:
    kube_dir = kubernetes_module_dir(versions.kubernetes, progress)
    kube_tools = [*KUBE_SERVERS, *(["kubectl"] if with_kubectl else [])]
    kwok_flags = (
        f"-s -w -X 'sigs.k8s.io/kwok/pkg/consts.Version=v{versions.kwok}' "
        f"-X 'sigs.k8s.io/kwok/pkg/consts.KubeVersion=v{versions.kubernetes}'"
    )
    return [
        BuildStep(f"kubernetes v{versions.kubernetes} ({', '.join(kube_tools)})", kube_dir,
                  tuple(f"k8s.io/kubernetes/cmd/{tool}" for tool in kube_tools),
                  kubernetes_ldflags(versions.kubernetes)),
        BuildStep(f"etcd v{versions.etcd}", pinned_module("etcd"),
                  ("go.etcd.io/etcd/server/v3",), "-s -w"),
        BuildStep(f"kwok v{versions.kwok} (kwok, kwokctl)", pinned_module("kwok"),
                  ("sigs.k8s.io/kwok/cmd/kwok", "sigs.k8s.io/kwok/cmd/kwokctl"), kwok_flags),
    ]


def run_step(step: BuildStep, out: Path, index: int, total: int, progress: Progress) -> float:
    env = {**os.environ, "CGO_ENABLED": "1" if step.cgo else "0", "GOFLAGS": "-mod=mod"}
    listed = subprocess.run(["go", "list", "-deps", *(["-tags", step.tags] if step.tags else []),
                             *step.packages], cwd=step.module, env=env, capture_output=True,
                            text=True)
    count = max(len(listed.stdout.split()), 1)
    progress(f"[{index}/{total}] building {step.label}: {count} packages")
    started = time.monotonic()
    # A single package names the output file; several need a directory.
    target = str(out / "etcd") if step.packages == ("go.etcd.io/etcd/server/v3",) else f"{out}/"
    tags = ["-tags", step.tags] if step.tags else []
    proc = subprocess.Popen(
        ["go", "build", "-v", "-trimpath", *tags, "-ldflags", step.ldflags, "-o", target,
         *step.packages],
        cwd=step.module, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    assert proc.stderr is not None
    compiled, shown, tail = 0, -1, []
    for line in proc.stderr:
        tail = [*tail[-40:], line.rstrip()]
        if line.startswith(("#", " ", "\t")) or " " in line.strip():
            continue
        compiled += 1
        percent = min(99, compiled * 100 // count)
        if percent // 10 != shown:
            shown = percent // 10
            elapsed = time.monotonic() - started
            progress(f"[{index}/{total}]   {step.label}: {compiled}/{count} packages compiled "
                     f"({elapsed:.0f}s)")
    if proc.wait() != 0:
        raise UserError(f"building {step.label} failed:\n" + "\n".join(tail))
    elapsed = time.monotonic() - started
    progress(f"[{index}/{total}] built {step.label} in {elapsed:.0f}s")
    return elapsed


def build_into(final: Path, steps: list[BuildStep], say: Progress) -> dict[str, float]:
    """Every step built into a scratch directory beside ``final`` (named so that `cluster gc`
    removes it if we were killed), which then replaces ``final`` whole; the seconds each
    step took."""
    final.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=final.parent))
    try:
        seconds = {step.label: round(run_step(step, scratch, index, len(steps), say), 1)
                   for index, step in enumerate(steps, start=1)}
        (scratch / "manifest.json").write_text(json.dumps({"seconds": seconds}, indent=2))
        shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return seconds


def build(kubernetes: str | None = None, progress: Progress | None = None,
          force: bool = False) -> Binaries:
    """Build every binary for these versions unless already cached; idempotent and atomic."""
    say = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    versions = Versions.resolve(kubernetes)
    final = bin_dir(versions)
    if (final / "manifest.json").is_file() and not force:
        say(f"toolchain {versions.key}: already built in {final}")
        return require(kubernetes)
    with_kubectl = system_kubectl() is None
    steps = plan(versions, with_kubectl, say)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-{versions.key}-pid{os.getpid()}-",
                                    dir=_ensure(final.parent)))
    try:
        timings = {
            step.label: round(run_step(step, scratch, index, len(steps), say), 1)
            for index, step in enumerate(steps, start=1)
        }
        manifest = {"versions": asdict(versions), "seconds": timings,
                    "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (scratch / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if force:
            shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"toolchain {versions.key}: ready in {final}")
    return require(kubernetes)


def status() -> list[dict[str, object]]:
    """Every built toolchain in the cache, with its manifest."""
    root = cache_root() / "bin"
    found = []
    for directory in sorted(root.glob("k8s-*")) if root.is_dir() else []:
        manifest = directory / "manifest.json"
        if manifest.is_file():
            entry = json.loads(manifest.read_text())
            entry["directory"] = str(directory)
            entry["binaries"] = sorted(
                path.name for path in directory.iterdir() if path.name != "manifest.json")
            found.append(entry)
    return found
