"""``aftershock doctor``: what this machine has and lacks for running the harness."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass

from aftershock.containers import engine
from aftershock.errors import UserError
from aftershock.go import kind_binary, toolchain
from aftershock.machine import cache

MIN_FREE_GIB = 5


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def _version_of(binary: str, *flags: str) -> str:
    try:
        out = subprocess.run([binary, *flags], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unusable: {exc}"
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else f"exit {out.returncode}"


def _go() -> Check:
    go = shutil.which("go")
    if not go:
        return Check("go", False, "not installed: needed once to build the control plane")
    return Check("go", True, _version_of(go, "version"))


def _binaries() -> list[Check]:
    try:
        found = toolchain.find()
    except UserError as exc:
        return [Check("binaries", False, str(exc))]
    if found is None:
        return [Check("binaries", False, "not built: run 'aftershock toolchain build'")]
    checks = [Check("binaries", True, str(found.directory))]
    flags = {"etcd": ("--version",), "kwok": ("--version",), "kwokctl": ("--version",)}
    for name in toolchain.ALL_BINARIES:
        checks.append(Check(f"  {name}", True, _version_of(found.path(name),
                                                             *flags.get(name, ("--version",)))))
    return checks


def _kubectl() -> Check:
    kubectl = toolchain.system_kubectl()
    if kubectl:
        return Check("kubectl", True, f"{kubectl}: {_version_of(kubectl, 'version', '--client')}",
                     required=False)
    return Check("kubectl", True, "none on PATH: built with the toolchain", required=False)


def _disk() -> Check:
    root = cache.cache_root()
    probe = root if root.exists() else root.parent
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free / 2**30
    return Check("free disk", free >= MIN_FREE_GIB, f"{free:.1f} GiB free at {probe}")


def container_engine() -> Check:
    """Whether a container engine answers (kind needs one; the local provider does not)."""
    answer = engine.ask()
    if answer.ok:
        return Check("container engine", True, f"{answer.engine} answers", required=False)
    return Check("container engine", False, answer.problem, required=False)


def _kind() -> Check:
    found = kind_binary.find()
    if found:
        return Check("kind", True, f"{found}: {_version_of(found, 'version')}", required=False)
    return Check("kind", True, f"not installed: --cluster=kind builds "
                 f"{kind_binary.KIND_MODULE}@{kind_binary.KIND_VERSION} with go install",
                 required=False)


def report() -> list[Check]:
    python = sys.version.split()[0]
    return [
        Check("python", sys.version_info >= (3, 11), python),
        _go(),
        *_binaries(),
        _kubectl(),
        _disk(),
        container_engine(),
        _kind(),
    ]


def cmd_doctor(args: argparse.Namespace) -> int:
    checks = report()
    width = max(len(check.name) for check in checks)
    for check in checks:
        mark = "ok  " if check.ok else ("FAIL" if check.required else "warn")
        print(f"{mark} {check.name:<{width}}  {check.detail}")
    return 0 if all(check.ok or not check.required for check in checks) else 1


def add_parser(sub) -> None:
    sub.add_parser("doctor", help="check this machine").set_defaults(func=cmd_doctor)
