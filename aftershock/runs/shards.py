"""Splitting a run across machines, as CI systems split a test suite: `--shard K/N` keeps the
K-th of N parts, so every shard of every machine agrees on the split without talking.

- Scenarios: every shard collects the same list, so they are dealt out in turn, in the order of
  a hash of each one's id (shards differ by at most one scenario, and which scenarios share a
  shard does not follow the order of the files).
- Explore's plans: a plan's shard is its hash alone, the same whatever else was planned (the
  shards of one exploration share one planning, `explore --from`; a shard that planned for
  itself still agrees on every plan both made).

`--workers N` runs N shards at once here."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from aftershock.errors import UserError
from aftershock.machine.limits import GIB, USABLE, Machine, gib, need
from aftershock.machine.shape import default_shape, load_shape

MAX_SHARDS = 256


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as the option says it
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, key: str) -> bool:
        """Whether the plan named ``key`` falls in this shard (by its hash alone)."""
        return _hash(key) % self.count == self.index - 1

    def deal(self, keys: list[str]) -> set[str]:
        """This shard's share of ``keys`` (scenario ids, the same list in every shard): dealt
        out in turn, in the order of their hashes."""
        ordered = sorted(set(keys), key=lambda key: (_hash(key), key))
        return {key for position, key in enumerate(ordered)
                if position % self.count == self.index - 1}


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def parse(text: str, option: str = "--shard") -> Shard:
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if found is None:
        raise UserError(f"{option} {text}: expected K/N, the K-th of N shards (e.g. 2/4)")
    index, count = int(found[1]), int(found[2])
    if not 1 <= count <= MAX_SHARDS:
        raise UserError(f"{option} {text}: between 1 and {MAX_SHARDS} shards")
    if not 1 <= index <= count:
        raise UserError(f"{option} {text}: K is between 1 and {count}")
    return Shard(index, count)


# One worker's own cluster, harness and implementation under test: the measured cluster and
# harness (limits.BASE_MEMORY, per node) plus what an operator and its pods were seen to take.
IMPLEMENTATION_MEMORY = 0.5 * GIB


def workers_problem(workers: int, nodes: int, machine: Machine | None = None) -> str | None:
    """Why ``workers`` clusters of ``nodes`` nodes, each with its run, cannot run at once
    here, or None."""
    machine = machine or Machine.here()
    if workers < 1:
        return f"--workers {workers}: at least 1"
    if workers > machine.cores:
        return (f"--workers {workers}: each worker runs its own cluster, which keeps a core "
                f"busy; this machine has {machine.cores} cores")
    wanted = workers * (need(nodes) + IMPLEMENTATION_MEMORY)
    if wanted > USABLE * machine.memory:
        return (f"--workers {workers}: {workers} clusters of {nodes} nodes with their runs "
                f"need about {gib(wanted)} of memory; this machine has {gib(machine.memory)} "
                "available")
    return None


def require_workers(workers: int, shape: str | Path | None, project: Path) -> None:
    """--workers N for clusters of ``shape`` (None: the project's default shape), refused in
    one line when this machine cannot hold them."""
    chosen = load_shape(shape) if shape else default_shape(project)
    problem = workers_problem(workers, len(chosen.nodes))
    if problem:
        raise UserError(problem)
