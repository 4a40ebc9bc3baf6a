"""How fast `aftershock explore` runs its plans, beside Sieve's published figure.

For each (profile, workload) pair, one explore run with the budget given (default 5 minutes),
one after another on this machine (2 cores); prints plans run, plans per minute, time per plan
(mean, p50, max), findings and the false-positive count (findings on a correct implementation),
and the ratio of the mean time per plan to Sieve's (about 8 machine-minutes per test plan,
OSDI'22: 11-67 machine-hours per controller). Each run is bounded by `timeout`.

    .venv/bin/python benchmarks/bench_explore.py [--budget 5m] [profile:workload ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIEVE_SECONDS_PER_PLAN = 8 * 60
DEFAULT = [
    ("profiles/replicagroup-correct.yaml", "workloads/replica_group.steps", False),
    ("profiles/replicagroup-faulty.yaml", "workloads/replica_group.steps", True),
    ("profiles/kube-replicaset.yaml", "workloads/replica_group.steps", False),
]


def explore(profile: str, workload: str, budget: str, seconds: float) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-explore-", dir=REPO / "reports"))
    subprocess.run(["timeout", str(int(seconds * 1.5 + 600)), sys.executable, "-m",
                    "aftershock.cli", "explore", "--profile", profile, "--workload", workload,
                    "--budget", budget, "--replays", "3", "--out", str(out)], cwd=REPO,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    summary = out / "summary.json"
    if not summary.exists():
        raise SystemExit(f"explore {profile} left no summary in {out}")
    return json.loads(summary.read_text()) | {"out": str(out)}


def main() -> None:
    from aftershock.explore.command import budget_seconds

    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", default="5m")
    parser.add_argument("pairs", nargs="*", help="profile:workload[:faulty]")
    args = parser.parse_args()
    pairs = [(p.split(":")[0], p.split(":")[1], p.endswith(":faulty")) for p in args.pairs] \
        or DEFAULT
    seconds = budget_seconds(args.budget)
    print(f"{'profile':<24} {'plans':>5} {'per min':>8} {'mean s':>7} {'p50 s':>6} "
          f"{'max s':>6} {'findings':>8} {'vs Sieve':>9}")
    for profile, workload, faulty in pairs:
        s = explore(profile, workload, args.budget, seconds)
        per = s["seconds_per_plan"]
        ratio = f"{SIEVE_SECONDS_PER_PLAN / per['mean']:.0f}x" if per["mean"] else "-"
        kind = "bugs" if faulty else "false positives"
        print(f"{Path(profile).stem:<24} {s['plans_run']:>5} {s['plans_per_minute'] or 0:>8} "
              f"{per['mean'] or 0:>7} {per['p50'] or 0:>6} {per['max'] or 0:>6} "
              f"{s['findings']:>8} {ratio:>9}   ({kind}; {s['out']})")
    print(f"Sieve: about {SIEVE_SECONDS_PER_PLAN}s per plan; goal here: <= 30s per plan")


if __name__ == "__main__":
    main()
