"""A long reference-pair run as the integration tests make it: `aftershock run --workers 2`,
each shard its own cluster at once (the pairs' scenarios mostly wait: "12 seconds pass"), read
back as one output (every shard's lines, unprefixed, one shard after another, then the run's
own) and pytest's counts summed over the shards."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

WORKERS = 2
PREFIX = re.compile(r"^\[(\d+)/\d+\] ")
SUMMARY = re.compile(r"^=+ (.*) in [\d.]+s")


@dataclass
class Sharded:
    returncode: int
    stdout: str
    counts: Counter[str]


def run(arguments: list[str], cwd: Path, timeout: float, sharded: bool = True) -> Sharded:
    """`aftershock run --workers 2 <arguments>` (or, not ``sharded``, one run of them all)."""
    workers = ["--workers", str(WORKERS)] if sharded else []
    done = subprocess.run([sys.executable, "-m", "aftershock.cli", "run", *workers, *arguments],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return read(done.returncode, done.stdout, done.stderr)


def read(returncode: int, stdout: str, stderr: str) -> Sharded:
    shards: dict[int, list[str]] = {}
    own: list[str] = []
    for line in stderr.splitlines():
        prefix = PREFIX.match(line)
        if prefix:
            shards.setdefault(int(prefix.group(1)), []).append(line[prefix.end():])
        else:
            own.append(line)
    counts: Counter[str] = Counter()
    for lines in (shards.values() if shards else [stdout.splitlines()]):  # or a run unsharded
        summary = next(filter(None, map(SUMMARY.match, reversed(lines))), None)
        if summary:
            for number, what in re.findall(r"(\d+) (\w+)", summary.group(1)):
                counts[what] += int(number)
    text = [line for index in sorted(shards) for line in shards[index]]
    return Sharded(returncode, "\n".join([*text, *own, stdout]), counts)
