"""How fast `aftershock explore` runs its plans, beside Sieve's published figure, and what
--workers and --shard give.

1. For each (profile, workload) pair, one explore run with the budget given (default 5
   minutes), one after another on this machine (2 cores); prints plans run, plans per minute,
   time per plan (mean, p50, max), findings and the false-positive count (findings on a correct
   implementation), the bugs among them and the time to the first (`first_bug_after`: from the
   run's start, its reference runs included), and the ratio of the mean time per plan to
   Sieve's (about 8 machine-minutes per test plan, OSDI'22: 11-67 machine-hours per
   controller).
2. Workers: the first pair again with --workers 1 and --workers 2, the same budget and seed;
   prints plans per hour of wall time (reference runs included) and the time to the first bug
   side by side, and the ratio.
3. Shards: the faulty replica group, seed 0: its reference runs and plans made once
   (--plan-only), then the first --shard-plans plans with no budget to cut them, run whole
   and as two shards (--workers 2, merged), both --from that planning; prints the findings of
   each and whether the merged findings equal the whole run's (the plan and the properties it
   broke, for every finding).

Each run is bounded by `timeout`.

    .venv/bin/python benchmarks/bench_explore.py [--budget 5m] [--skip-pairs] [profile:workload ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIEVE_SECONDS_PER_PLAN = 8 * 60
DEFAULT = [
    ("profiles/replicagroup-correct.yaml", "workloads/replica_group.steps", False),
    ("profiles/replicagroup-faulty.yaml", "workloads/replica_group.steps", True),
    ("profiles/kube-replicaset.yaml", "workloads/replica_group.steps", False),
]


def explore(profile: str, workload: str, budget: str, seconds: float, *extra: str) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-explore-", dir=REPO / "reports"))
    began = time.monotonic()
    subprocess.run(["timeout", str(int(seconds * 1.5 + 600)), sys.executable, "-m",
                    "aftershock.cli", "explore", "--profile", profile, "--workload", workload,
                    "--budget", budget, "--replays", "3", "--out", str(out), *extra], cwd=REPO,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - began
    summary = out / "summary.json"
    if not summary.exists():
        raise SystemExit(f"explore {profile} left no summary in {out}")
    return json.loads(summary.read_text()) | {"out": str(out), "wall": wall}


def workers(profile: str, workload: str, budget: str, seconds: float) -> None:
    print(f"\nworkers: {Path(profile).stem}, budget {budget} each, seed 0")
    print(f"{'workers':>7} {'plans':>6} {'wall s':>7} {'plans/hour':>11} {'findings':>8} "
          f"{'first bug':>10}  run dir")
    rates = []
    for count in (1, 2):
        s = explore(profile, workload, budget, seconds, "--workers", str(count), "--seed", "0")
        rate = 3600 * s["plans_run"] / s["wall"]
        rates.append(rate)
        print(f"{count:>7} {s['plans_run']:>6} {s['wall']:>7.0f} {rate:>11.0f} "
              f"{s['findings']:>8} {first_bug(s):>10}  {s['out']}")
    print(f"--workers 2 / --workers 1: {rates[1] / rates[0]:.2f}x plans per hour"
          if rates[0] else "no plan ran with one worker")


def first_bug(summary: dict) -> str:
    after = summary.get("first_bug_after")
    return f"{after:.0f}s" if after is not None else "none"


def found(summary: dict) -> set[tuple[str, str]]:
    """Each finding as (its plan, its verdict after the replays)."""
    return {(f["plan"] or "references", f["verdict"]) for f in summary["list"]}


def broke(summary: dict) -> dict[str, tuple[str, ...]]:
    """What the first run of each finding's plan broke (one run: a faulty implementation
    breaks some properties in some runs of a plan and not in others)."""
    return {f["plan"] or "references": tuple(sorted(f["violated"])) for f in summary["list"]}


def shards(plans: int) -> None:
    profile, workload = "profiles/replicagroup-faulty.yaml", "workloads/replica_group.steps"
    print(f"\nshards: {Path(profile).stem}, seed 0, the first {plans} plans of one planning "
          "(--plan-only), whole and as 2 shards merged")
    planned = explore(profile, workload, "2h", 7200, "--plan-only", "--seed", "0")["out"]
    whole = explore(profile, workload, "2h", 7200, "--max-plans", str(plans), "--seed", "0",
                    "--from", planned)
    split = explore(profile, workload, "2h", 7200, "--max-plans", str(plans), "--seed", "0",
                    "--workers", "2", "--from", planned)
    for name, s in (("whole", whole), ("2 shards", split)):
        print(f"{name:>9}: {s['plans_run']} plans, {s['findings']} findings "
              f"({s['bugs']} bugs, {s.get('as_with_no_fault', 0)} as with no fault, "
              f"{s.get('unfired_replays', 0)} unfired replays), {s['wall']:.0f}s wall "
              f"({s['out']})")
        for plan, properties in sorted(broke(s).items()):
            print(f"{'':>11}{', '.join(properties)} under: {plan}")
    same = found(whole) == found(split)
    print(f"merged findings (plan and verdict) {'EQUAL' if same else 'DIFFER from'} the whole "
          "run's")
    if not same:
        print(f"  only whole: {sorted(found(whole) - found(split))}")
        print(f"  only shards: {sorted(found(split) - found(whole))}")
    differ = [plan for plan in broke(whole) if broke(whole)[plan] != broke(split).get(plan)]
    if differ:
        print(f"  what the first run broke differs for {len(differ)} of them (a run of a plan "
              "breaks more properties in some runs than in others):")
        for plan in differ:
            print(f"    {plan}: whole {', '.join(broke(whole)[plan])}; shards "
                  f"{', '.join(broke(split).get(plan, ()))}")


def main() -> None:
    from aftershock.cli.explore import budget_seconds

    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", default="5m")
    parser.add_argument("pairs", nargs="*", help="profile:workload[:faulty]")
    parser.add_argument("--skip-pairs", action="store_true", help="only workers and shards")
    parser.add_argument("--skip-workers", action="store_true")
    parser.add_argument("--skip-shards", action="store_true")
    parser.add_argument("--shard-plans", type=int, default=12)
    args = parser.parse_args()
    pairs = [(p.split(":")[0], p.split(":")[1], p.endswith(":faulty")) for p in args.pairs] \
        or DEFAULT
    seconds = budget_seconds(args.budget)
    if not args.skip_pairs:
        pairs_table(pairs, args.budget, seconds)
    if not args.skip_workers:
        workers(pairs[0][0], pairs[0][1], args.budget, seconds)
    if not args.skip_shards:
        shards(args.shard_plans)


def pairs_table(pairs: list[tuple[str, str, bool]], budget: str, seconds: float) -> None:
    print(f"{'profile':<24} {'plans':>5} {'per min':>8} {'mean s':>7} {'p50 s':>6} "
          f"{'max s':>6} {'findings':>8} {'bugs':>5} {'first bug':>10} {'vs Sieve':>9}")
    for profile, workload, faulty in pairs:
        s = explore(profile, workload, budget, seconds)
        per = s["seconds_per_plan"]
        ratio = f"{SIEVE_SECONDS_PER_PLAN / per['mean']:.0f}x" if per["mean"] else "-"
        kind = "bugs" if faulty else "false positives"
        print(f"{Path(profile).stem:<24} {s['plans_run']:>5} {s['plans_per_minute'] or 0:>8} "
              f"{per['mean'] or 0:>7} {per['p50'] or 0:>6} {per['max'] or 0:>6} "
              f"{s['findings']:>8} {s['bugs']:>5} {first_bug(s):>10} {ratio:>9}   "
              f"({kind}; {s.get('as_with_no_fault', 0)} as with no fault, "
              f"{s.get('flaky', 0)} flaky, {s.get('unfired_replays', 0)} unfired replays; "
              f"{s['out']})")
    print(f"Sieve: about {SIEVE_SECONDS_PER_PLAN}s per plan; goal here: <= 30s per plan")


if __name__ == "__main__":
    main()
