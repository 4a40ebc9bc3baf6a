"""Where aftershock keeps what it builds and what a process must write for a while: the cache
root, and per-process scratch dirs named by pid and kernel start time, so that `cluster gc`
removes a killed process's scratch and never a live one's."""

from __future__ import annotations

import atexit
import os
import shutil
from pathlib import Path


def cache_root() -> Path:
    if os.environ.get("AFTERSHOCK_CACHE"):
        return Path(os.environ["AFTERSHOCK_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aftershock"


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), None if it is gone.

    Pids are reused; a pid only names our process if its start time is the recorded one.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may contain spaces and parentheses; fields after the last ')' are fixed.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def scratch_for_this_process(kind: str) -> Path:
    """A directory (mode 0700) for what this process must write and nobody may keep: named
    by its pid and start time, so `gc` removes it once the process is gone."""
    pid = os.getpid()
    path = cache_root() / kind / f"pid{pid}-{start_time(pid)}"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def dead_process_scratch() -> list[str]:
    removed = []
    for kind in ("clients", "credentials"):
        for path in (cache_root() / kind).glob("pid*-*"):
            pid, _, started = path.name.removeprefix("pid").partition("-")
            if not pid.isdigit() or str(start_time(int(pid))) != started:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(str(path))
    return removed
