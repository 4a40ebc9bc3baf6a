"""The metamorphic fuzz of every property at length (tests/unit/test_metamorphic.py runs it
briefly in `make test`): N histories drawn as what happened in a cluster, each recorded, then
recorded again (a, b: other delays and interleavings), with an unrelated earlier life under a
used name (c), with unrelated objects and requests beside it (d), and with a stretch lost to a
gap (e). Every property of the registry is judged on each (so N examples per property) by one
of its checks; a flip is a verdict that changed under (a)-(d), or became anything but UNKNOWN
under (e). Prints, per property, how often it was PASS, VIOLATED and UNKNOWN on the history as
first recorded, and the flips found (the goal: none); then the flips themselves, if any.

    .venv/bin/python benchmarks/bench_metamorphic.py [--examples 10000] [--workers 2] [--seed 0]

Worker i draws from seed+i, so a run is repeatable and another --seed draws other histories.
With AFTERSHOCK_METAMORPHIC_SHOW=<directory> every flip is also pickled there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def work(examples: int, seed: int) -> dict:
    """One worker: ``examples`` histories from ``seed``; its counts and flips."""
    sys.path.insert(0, str(REPO))
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    from tests import histories as made
    from tests.unit import test_metamorphic as fuzz

    counts: Counter[str] = Counter()
    flips: list[str] = []

    @seeded(seed)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(made.truths(), st.data())
    def body(truth, data) -> None:
        for flip in fuzz.relations(truth, data, counts):
            flips.append(flip)
            counts["flip:" + flip.split(" ", 2)[1]] += 1

    body()
    return {"counts": dict(counts), "flips": flips[:50]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="histories, in all")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0, help="worker i draws from seed+i")
    parser.add_argument("--work", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.work:
        print(json.dumps(work(*args.work)))
        return
    began = time.perf_counter()
    share = -(-args.examples // args.workers)
    children = [subprocess.Popen([sys.executable, __file__, "--work", str(share), str(seed)],
                                 stdout=subprocess.PIPE, text=True, cwd=REPO)
                for seed in range(args.seed, args.seed + args.workers)]
    results = [json.loads(child.communicate()[0].strip().splitlines()[-1])
               for child in children]
    counts: Counter[str] = Counter()
    flips: list[str] = []
    for result in results:
        counts.update(result["counts"])
        flips += result["flips"]
    report(counts, flips, time.perf_counter() - began)


def report(counts: Counter[str], flips: list[str], seconds: float) -> None:
    sys.path.insert(0, str(REPO))
    from aftershock.properties.base import sorted_ids
    from tests.unit.test_metamorphic import fuzzed

    histories = counts["histories"]
    print(f"{histories:,} histories, each recorded five ways, every property judged on each, "
          f"in {seconds:.0f}s")
    print(f"{'property':<26} {'examples':>9} {'pass':>7} {'violated':>9} {'unknown':>8} "
          f"{'flips':>6}")
    total = 0
    for id in sorted_ids(fuzzed()):
        statuses = {s: counts.get(f"{id}:{s}", 0) for s in ("pass", "violated", "unknown")}
        found = counts.get(f"flip:{id}", 0)
        total += found
        print(f"{id:<26} {sum(statuses.values()):>9,} {statuses['pass']:>7,} "
              f"{statuses['violated']:>9,} {statuses['unknown']:>8,} {found:>6}")
    print(f"flips: {total} (goal: 0)")
    for flip in flips:
        print(f"  {flip}")


if __name__ == "__main__":
    main()
