"""How fast the property registry judges a long history, and how fast a saved one loads.

A synthetic history of 1,000,000 watch events over 10,000 pods of one replica group (each pod
created, then updated ~98 times, some deleted and replaced), saved as a timeline.jsonl, is
loaded and judged through the registry (the one rule included) by:
- R1: never_more_than over the group's live pods;
- R5: eventually "the replica group web has N live pods" (it holds only at the very end);
- R5: stays_for "at most N pods of web are live" over the whole history.
Prints events per second per property and over all three (each property reads every event),
with the ratio against the goal (100,000 events/s) and against Elle's published rate (about
22M transactions in ~2 min), and the load time against its goal (10 s). No cluster is needed.

    .venv/bin/python benchmarks/bench_judge.py [--events 1000000] [--pods 10000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aftershock import properties
from aftershock.properties import Judgement
from aftershock.properties.context import Context
from aftershock.timeline import Timeline, load
from aftershock.timeline.entry import WATCH, Entry

GOAL, ELLE, LOAD_GOAL = 100_000, 22_000_000 / 120, 10.0
NS = "bench"
CONCEPTS = {"replica_group": {
    "resource": {"group": "x.io", "version": "v1", "plural": "groups", "kind": "Group"},
    "replicas_path": "spec.replicas", "pod_selector": {"app": "{name}"}}}


def pod(name: str, uid: str, rv: int, phase: str, node: str, deleting: bool) -> dict:
    meta = {"name": name, "namespace": NS, "uid": uid, "resourceVersion": str(rv),
            "labels": {"app": "web", "app.kubernetes.io/name": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-23T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]}}


def history(events: int, pods: int, seed: int = 7) -> list[Entry]:
    """Every pod ADDED first; then updates at random; every 50th update deletes a pod (its
    terminating update, then DELETED) and creates its replacement."""
    rng = random.Random(seed)
    entries: list[Entry] = []
    alive = {f"web-{i}": f"uid-{i}" for i in range(pods)}
    serial = [pods]

    def add(name: str, kind: str, phase: str = "Running", deleting: bool = False) -> None:
        rv = len(entries) + 1
        entries.append(Entry(len(entries), rv * 1e-3, 1.8e9 + rv * 1e-3, WATCH, "pods", NS,
                             name, alive[name], str(rv), kind,
                             pod(name, alive[name], rv, phase, f"node-{rv % 1000}", deleting)))

    for name in list(alive):
        add(name, "ADDED", "Pending")
    names = list(alive)
    while len(entries) < events - 3:
        name = names[rng.randrange(len(names))]
        if rng.random() < 0.02:
            add(name, "MODIFIED", deleting=True)
            add(name, "DELETED", deleting=True)
            del alive[name]
            fresh = f"web-{serial[0]}"
            serial[0] += 1
            alive[fresh] = f"uid-{fresh}"
            names[names.index(name)] = fresh
            add(fresh, "ADDED", "Pending")
        else:
            add(name, "MODIFIED", rng.choice(("Running", "Running", "Pending")))
    return entries[:events]


def judgements(pods: int, end: float) -> dict[str, tuple[list[str], Judgement]]:
    context = Context(NS, "bench", CONCEPTS).to_json()
    return {
        "R1 never_more_than": (["R1"], Judgement("never_more_than", {
            "namespace": NS, "selector": {"app": "web"}, "limit": pods})),
        "R5 eventually": (["R5"], Judgement("eventually", {
            "condition": f"the replica group web has {pods + 1} live pods",
            "context": context, "start": 0.0, "within": end + 1, "now": end + 2})),
        "R5 stays_for": (["R5"], Judgement("stays_for", {
            "condition": f"at most {pods} pods of web are live", "context": context,
            "start": 0.0, "duration": end, "now": end + 1})),
    }


def write(path: Path, events: int, pods: int) -> None:
    timeline = Timeline()
    timeline._entries = history(events, pods)  # what a recorder would have appended
    timeline.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write(Path(args.write), args.events, args.pods)
        return
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        # Made in another process: judged from the file, as `aftershock judge` does.
        subprocess.run([sys.executable, __file__, "--write", tmp, "--events", str(args.events),
                        "--pods", str(args.pods)], check=True)
        path = Path(tmp) / "timeline.jsonl"
        size = path.stat().st_size
        print(f"history: {args.events:,} watch events over {args.pods:,}+ pods, made and saved "
              f"in {time.perf_counter() - began:.1f}s")
        times = []
        for _ in range(3):  # this machine's memory is noisy: three loads, the median counts
            entries = None
            began = time.perf_counter()
            entries = load(path)
            times.append(time.perf_counter() - began)
    loaded = statistics.median(times)
    print(f"load:  {len(entries):,} entries ({size / 2**20:.0f} MiB) in "
          f"{', '.join(f'{t:.2f}' for t in times)}s, median {loaded:.2f}s "
          f"(goal <= {LOAD_GOAL:.0f}s: {'met' if loaded <= LOAD_GOAL else 'MISSED'})")
    total = 0.0
    print(f"{'property':<22} {'verdict':<8} {'seconds':>8} {'events/s':>12} {'x goal':>7} "
          f"{'x Elle':>7}")
    for title, (ids, judgement) in judgements(args.pods, entries[-1].mono).items():
        began = time.perf_counter()
        verdict = properties.judge(ids, judgement, entries)
        seconds = time.perf_counter() - began
        total += seconds
        rate = len(entries) / seconds
        print(f"{title:<22} {verdict.status:<8} {seconds:8.2f} {rate:12,.0f} "
              f"{rate / GOAL:7.2f} {rate / ELLE:7.2f}")
    rate = 3 * len(entries) / total
    print(f"{'all three':<22} {'':<8} {total:8.2f} {rate:12,.0f} {rate / GOAL:7.2f} "
          f"{rate / ELLE:7.2f}   (goal >= {GOAL:,} events/s per property: "
          f"{'met' if rate >= GOAL else 'MISSED'})")


if __name__ == "__main__":
    main()
