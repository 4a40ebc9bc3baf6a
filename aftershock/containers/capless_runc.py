"""An OCI runtime that is runc, minus the capabilities this machine cannot grant.

A privileged container (a kind node is one) asks for every capability the engine knows. Where
the host's bounding set lacks one (CAP_SYS_RESOURCE in some VMs), runc fails with "unable to
apply caps: operation not permitted". The managed engine registers this file as its default
runtime: before runc creates a container or execs into one, the capabilities the bounding set
lacks are removed from the bundle's config.json (create, run) or the --process file (exec).

Standalone on purpose (stdlib only): it is copied next to the engine and runs for every runc
call, so it must start fast and must not depend on where aftershock is installed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

RUNC = "runc"
NAMES = (
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
    "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
    "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
    "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
    "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
    "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
)
SETS = ("bounding", "effective", "inheritable", "permitted", "ambient")
# runc's global options that take a value (they come before the command)
VALUED = {"--root", "--log", "--log-format", "--criu", "--rootless"}


def missing(status: str) -> set[str]:
    """Capabilities (CAP_*) absent from the bounding set in a /proc/<pid>/status text."""
    line = next((ln for ln in status.splitlines() if ln.startswith("CapBnd:")), "CapBnd: 0")
    bounding = int(line.split(":", 1)[1].strip(), 16)
    return {f"CAP_{name}" for bit, name in enumerate(NAMES) if not bounding >> bit & 1}


def strip(capabilities: dict, drop: set[str]) -> bool:
    """Remove ``drop`` from every set of an OCI process's capabilities; whether any changed."""
    changed = False
    for key in SETS:
        kept = [cap for cap in capabilities.get(key) or () if cap not in drop]
        if key in capabilities and capabilities[key] is not None \
                and len(kept) != len(capabilities[key]):
            capabilities[key], changed = kept, True
    return changed


def command_of(argv: list[str]) -> tuple[str | None, list[str]]:
    """runc's command and the arguments after it (global options skipped)."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in VALUED:
            index += 2
        elif arg.startswith("-"):
            index += 1
        else:
            return arg, argv[index + 1:]
    return None, []


def option(args: list[str], *names: str) -> str | None:
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(f"{name}="):
                return arg.split("=", 1)[1]
    return None


def target(argv: list[str], cwd: str) -> tuple[Path, str] | None:
    """The JSON file to edit and where its capabilities are (``process`` for a bundle's
    config.json, the top level for an exec's process file), or None for other commands."""
    command, args = command_of(argv)
    if command in ("create", "run"):
        return Path(option(args, "--bundle", "-b") or cwd) / "config.json", "process"
    if command == "exec":
        process = option(args, "--process", "-p")
        return (Path(process), "") if process else None
    return None


def edit(path: Path, where: str, drop: set[str]) -> None:
    spec = json.loads(path.read_text())
    process = spec.get(where) if where else spec
    if isinstance(process, dict) and strip(process.get("capabilities") or {}, drop):
        path.write_text(json.dumps(spec))


def main() -> None:
    argv = sys.argv[1:]
    drop = missing(Path("/proc/self/status").read_text())
    found = target(argv, os.getcwd()) if drop else None
    if found and found[0].is_file():
        edit(*found, drop)
    runc = RUNC  # fixed when the runtime was written: nothing in the environment picks it
    os.execvp(runc, [runc, *argv])


if __name__ == "__main__":
    main()
