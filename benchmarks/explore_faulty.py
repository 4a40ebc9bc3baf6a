"""Does `aftershock explore` find each seeded bug with a workload that names no fault, and does
the scenario it writes tell the faulty variant from the correct one? (issue 15's acceptance)

For each faulty reference implementation: `explore -x --budget 30m` on its workload (stop at
the first finding that reproduces as a bug), then the finding's feature run with
`aftershock run` against the faulty profile (must fail) and the correct one (must pass).
Prints the time to the first bug, the plan that found it, what it broke, its replays, and both
replays' exit codes.

    .venv/bin/python benchmarks/explore_faulty.py [--budget 30m] [--only gang ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# implementation → its workload
FAULTY = {
    "replicagroup": "replica_group",
    "storage": "storage_scale_down",
    "noderecords": "node_records",
    "gang": "gang",
    "dradriver": "dra_devices",
}


def aftershock(*args: str, timeout: float, log: Path) -> int:
    with log.open("w") as out:
        try:
            return subprocess.run(["timeout", str(int(timeout)), sys.executable, "-m",
                                   "aftershock.cli", *args], cwd=REPO, stdout=out,
                                  stderr=subprocess.STDOUT).returncode
        finally:
            subprocess.run([sys.executable, "-m", "aftershock.cli", "cluster", "gc"], cwd=REPO,
                           capture_output=True)


def one(name: str, workload: str, budget: str, seconds: float, root: Path) -> dict:
    out = root / name
    began = time.monotonic()
    aftershock("explore", "--profile", f"profiles/{name}-faulty.yaml", "--workload",
               f"workloads/{workload}.steps", "-x", "--budget", budget, "--out", str(out),
               timeout=seconds + 900, log=root / f"{name}-explore.log")
    took = time.monotonic() - began
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() \
        else {"list": []}
    bug = next((f for f in summary["list"] if f["verdict"] == "bug"), None)
    row = {"implementation": name, "seconds": round(took), "bug": bug,
           "first_bug_after": summary.get("first_bug_after"),
           "plans_run": summary.get("plans_run", 0)}
    if bug is None:
        return row
    for variant in ("faulty", "correct"):
        row[variant] = aftershock("run", bug["feature"], "--profile",
                                  f"profiles/{name}-{variant}.yaml", "-p", "no:cacheprovider",
                                  timeout=1200, log=root / f"{name}-replay-{variant}.log")
    return row


def main() -> None:
    from aftershock.cli.explore import budget_seconds

    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", default="30m")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    root = REPO / "reports" / time.strftime("explore-faulty-%Y%m%d-%H%M%S")
    root.mkdir(parents=True)
    rows = []
    for name, workload in FAULTY.items():
        if args.only and name not in args.only:
            continue
        rows.append(one(name, workload, args.budget, budget_seconds(args.budget), root))
        print(json.dumps(rows[-1]), flush=True)
    print(f"\n{'implementation':<16}{'first bug':>10}{'plans':>7}  {'broke':<16}{'replays':>8}"
          f"{'faulty':>8}{'correct':>9}  plan")
    for row in rows:
        bug = row["bug"]
        if bug is None:
            print(f"{row['implementation']:<16}{'none':>10}{row['plans_run']:>7}  (no bug found "
                  f"in {row['seconds']}s)")
            continue
        faulty = "fails" if row["faulty"] == 1 else f"rc {row['faulty']}"
        correct = "passes" if row["correct"] == 0 else f"rc {row['correct']}"
        print(f"{row['implementation']:<16}{row['first_bug_after']:>9}s{row['plans_run']:>7}  "
              f"{','.join(sorted(bug['violated'])):<16}{bug['reproduced']:>4}/{bug['replayed']:<3}"
              f"{faulty:>8}{correct:>9}  {bug['plan'] or 'none: the unperturbed runs'}")
    (root / "results.json").write_text(json.dumps(rows, indent=1))
    print(f"run dirs: {root}")


if __name__ == "__main__":
    main()
