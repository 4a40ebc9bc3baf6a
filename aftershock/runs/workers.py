"""`--workers N`: N shards of one run at once on this machine, each a child `aftershock` with
its own cluster and run dir, their output interleaved line by line under a `[K/N]` prefix, then
joined by `aftershock merge`. A child dies with its parent (a SIGKILLed parent leaves no
exploration running on), and Ctrl-C or SIGTERM reaches every child, which removes what it
started."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from aftershock.runs.shards import Shard

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_shards(count: int, command_for: Callable[[Shard], list[str]],
               say: Callable[[str], None]) -> list[int]:
    """Runs ``count`` shards at once; returns their exit codes, in shard order."""
    children: list[subprocess.Popen] = []
    readers: list[threading.Thread] = []
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: _forward(children, signal.SIGTERM))
    try:
        for index in range(1, count + 1):
            shard = Shard(index, count)
            child = subprocess.Popen(
                command_for(shard), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, text=True, bufsize=1, preexec_fn=die_with_parent,
                env=child_environment())
            children.append(child)
            reader = threading.Thread(target=relay, args=(child, f"[{shard}] ", say),
                                      daemon=True)
            reader.start()
            readers.append(reader)
        codes = [_wait(child, children) for child in children]
    finally:
        signal.signal(signal.SIGTERM, previous)
    for reader in readers:
        reader.join(timeout=5)
    return codes


def child_environment() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def _wait(child: subprocess.Popen, children: list[subprocess.Popen]) -> int:
    try:
        return child.wait()
    except KeyboardInterrupt:  # the terminal's Ctrl-C reached every child too: let them clean
        _forward(children, signal.SIGINT)
        for other in children:
            other.wait()
        raise


def _forward(children: list[subprocess.Popen], sig: int) -> None:
    for child in children:
        if child.poll() is None:
            child.send_signal(sig)


def relay(child: subprocess.Popen, prefix: str, say: Callable[[str], None]) -> None:
    assert child.stdout is not None
    for line in child.stdout:
        say(prefix + line.rstrip("\n"))


def aftershock_command(*arguments: str) -> list[str]:
    """This aftershock, as a child process."""
    return [sys.executable, "-m", "aftershock.cli", *arguments]


def without(argv: list[str], *options: str) -> list[str]:
    """``argv`` without the given options and their values (`--out X` or `--out=X`)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in options:
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def shard_dir(run: Path, shard: Shard) -> Path:
    return run / f"shard-{shard.index}-of-{shard.count}"
