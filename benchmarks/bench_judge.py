"""How fast the property registry judges a long history, and how fast a saved one loads, side
by side with the code of another commit (by default 7c7e79e, the last before the history
model of issue 64) judging the same file in the same run.

A synthetic history of 1,000,000 watch events over 10,000 pods of one replica group (each pod
created, then updated ~98 times, some deleted and replaced; each event stamped with the second
it was written in, as the recorder keeps it from managedFields), saved as a timeline.jsonl, is
loaded and judged through the registry (the one rule included) by:
- R1: never_more_than over the group's live pods;
- R5: eventually "the replica group web has N live pods" (it holds only at the very end);
- R5: stays_for "at most N pods of web are live" over the whole history.
Each code judges the three from one history it read (its model built once, for all three).
Prints events per second per property and over all three for each code, the ratio of this
code's rate to the reference's (the goal: at least 0.9), against the goal of 100,000 events/s
and Elle's published rate (about 22M transactions in ~2 min), and the load time against its
goal (10 s). The reference runs from a git worktree of its commit, in another process; the
order of the two alternates over ``--rounds`` and each figure is the median. No cluster.

    .venv/bin/python benchmarks/bench_judge.py [--events 1000000] [--pods 10000]
        [--reference 7c7e79e] [--rounds 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL, ELLE, LOAD_GOAL, RATIO_GOAL = 100_000, 22_000_000 / 120, 10.0, 0.9
NS = "bench"
EPOCH = 1.8e9
CONCEPTS = {"replica_group": {
    "resource": {"group": "x.io", "version": "v1", "plural": "groups", "kind": "Group"},
    "replicas_path": "spec.replicas", "pod_selector": {"app": "{name}"}}}
TITLES = ("R1 never_more_than", "R5 eventually", "R5 stays_for")


def pod(name: str, uid: str, rv: int, phase: str, node: str, deleting: bool) -> dict:
    meta = {"name": name, "namespace": NS, "uid": uid, "resourceVersion": str(rv),
            "labels": {"app": "web", "app.kubernetes.io/name": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-23T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]}}


def history(events: int, pods: int, seed: int = 7) -> list:
    """Every pod ADDED first; then updates at random; every 50th update deletes a pod (its
    terminating update, then DELETED) and creates its replacement."""
    from aftershock.timeline.entry import WATCH, Entry

    rng = random.Random(seed)
    entries: list[Entry] = []
    alive = {f"web-{i}": f"uid-{i}" for i in range(pods)}
    serial = [pods]
    seconds: dict[int, str] = {}

    def stamp(at: float) -> str:
        whole = int(at)
        if whole not in seconds:
            seconds[whole] = dt.datetime.fromtimestamp(whole, dt.UTC).strftime(
                "%Y-%m-%dT%H:%M:%SZ")
        return seconds[whole]

    def add(name: str, kind: str, phase: str = "Running", deleting: bool = False) -> None:
        rv = len(entries) + 1
        wall = EPOCH + rv * 1e-3
        entries.append(Entry(len(entries), rv * 1e-3, wall, WATCH, "pods", NS, name,
                             alive[name], str(rv), kind,
                             pod(name, alive[name], rv, phase, f"node-{rv % 1000}", deleting),
                             extra={"written": stamp(wall)}))

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


def judgements(pods: int, end: float) -> dict:
    from aftershock.properties import Judgement
    from aftershock.properties.context import Context

    context = Context(NS, "bench", CONCEPTS).to_json()
    return {
        TITLES[0]: (["R1"], Judgement("never_more_than", {
            "namespace": NS, "selector": {"app": "web"}, "limit": pods})),
        TITLES[1]: (["R5"], Judgement("eventually", {
            "condition": f"the replica group web has {pods + 1} live pods",
            "context": context, "start": 0.0, "within": end + 1, "now": end + 2})),
        TITLES[2]: (["R5"], Judgement("stays_for", {
            "condition": f"at most {pods} pods of web are live", "context": context,
            "start": 0.0, "duration": end, "now": end + 1})),
    }


def write(path: Path, events: int, pods: int) -> None:
    from aftershock.timeline import Timeline

    timeline = Timeline()
    timeline._entries = history(events, pods)  # what a recorder would have appended
    timeline.save(path)


def measure(path: Path, pods: int) -> dict:
    """Load the saved history (median of three loads), then judge the three from one history
    (whatever model the code builds, built once): seconds per judgement and verdicts."""
    from aftershock import properties
    from aftershock.timeline import load

    times = []
    entries = None
    for _ in range(3):  # this machine's memory is noisy: three loads, the median counts
        entries = None
        began = time.perf_counter()
        entries = load(path)
        times.append(time.perf_counter() - began)
    history = properties.History(entries)
    judged = {}
    for title, (ids, judgement) in judgements(pods, entries[-1].mono).items():
        began = time.perf_counter()
        verdict = properties.judge(ids, judgement, history)
        judged[title] = (time.perf_counter() - began, verdict.status)
    return {"load": statistics.median(times), "events": len(entries), "judged": judged}


def reference(commit: str, folder: Path) -> Path:
    """A worktree of this repository at ``commit``."""
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet",
                    str(folder), commit], check=True)
    return folder


def run(code: Path, path: Path, pods: int) -> dict:
    """``measure`` in a process of its own, importing aftershock from ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run([sys.executable, "-c",
                          "import json, sys; sys.path.insert(0, sys.argv[1]); "
                          "sys.path.insert(0, sys.argv[2]); import bench_judge; "
                          "print(json.dumps(bench_judge.measure(__import__('pathlib')"
                          ".Path(sys.argv[3]), int(sys.argv[4]))))",
                          str(code), str(Path(__file__).parent), str(path), str(pods)],
                         env=env, cwd=code, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--reference", default="7c7e79e",
                        help="the commit whose code judges the same file beside this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write(Path(args.write), args.events, args.pods)
        return
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        # Made in another process: judged from the file, as `aftershock judge` does.
        subprocess.run([sys.executable, __file__, "--write", tmp, "--events", str(args.events),
                        "--pods", str(args.pods)], check=True, env={
                            **os.environ, "PYTHONPATH": str(REPO)})
        path = Path(tmp) / "timeline.jsonl"
        print(f"history: {args.events:,} watch events over {args.pods:,}+ pods, made and saved "
              f"in {time.perf_counter() - began:.1f}s ({path.stat().st_size / 2**20:.0f} MiB)")
        old = reference(args.reference, Path(tmp) / "reference")
        try:
            rounds: dict[str, list[dict]] = {"this": [], "reference": []}
            for round in range(args.rounds):  # alternate, so neither always runs warm
                order = [("this", REPO), ("reference", old)]
                for name, code in order if round % 2 == 0 else reversed(order):
                    rounds[name].append(run(code, path, args.pods))
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)],
                           check=False)
    report(rounds, args.reference)


def report(rounds: dict[str, list[dict]], commit: str) -> None:
    events = rounds["this"][0]["events"]
    totals = {}
    print(f"{'code':<10} {'property':<22} {'verdict':<8} {'seconds':>8} {'events/s':>12} "
          f"{'x goal':>7} {'x Elle':>7}")
    for name, label in (("reference", f"{commit}"), ("this", "this")):
        runs = rounds[name]
        load = statistics.median(r["load"] for r in runs)
        total = 0.0
        for title in TITLES:
            seconds = statistics.median(r["judged"][title][0] for r in runs)
            total += seconds
            rate = events / seconds
            print(f"{label:<10} {title:<22} {runs[0]['judged'][title][1]:<8} {seconds:8.2f} "
                  f"{rate:12,.0f} {rate / GOAL:7.2f} {rate / ELLE:7.2f}")
        rate = 3 * events / total
        totals[name] = rate
        print(f"{label:<10} {'all three':<22} {'':<8} {total:8.2f} {rate:12,.0f} "
              f"{rate / GOAL:7.2f} {rate / ELLE:7.2f}   load {load:.2f}s (goal <= "
              f"{LOAD_GOAL:.0f}s: {'met' if load <= LOAD_GOAL else 'MISSED'})")
    ratio = totals["this"] / totals["reference"]
    print(f"ratio of this code's rate to {commit}'s, measured side by side: {ratio:.2f} "
          f"(goal >= {RATIO_GOAL}: {'met' if ratio >= RATIO_GOAL else 'MISSED'})")


if __name__ == "__main__":
    main()
