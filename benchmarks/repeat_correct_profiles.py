"""Stability of the operator features on the correct implementations: each correct profile runs
its feature `--repeat N` times through `aftershock run`; prints the flake tables and, side by
side, the wall time per profile and per scenario run. Too long for `make test` (a full pass is
about an hour at N=10); CI runs one pass of each.

    .venv/bin/python benchmarks/repeat_correct_profiles.py [--repeat 10] [--only storage-correct]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = {
    "replicagroup-correct": "features/operator/replica_group_stale_cache.feature",
    "kube-replicaset": "features/operator/replica_group_stale_cache.feature",
    "storage-correct": "features/operator/storage_scale_down.feature",
    "noderecords-correct": "features/operator/node_record_reclaim.feature",
    "kube-statefulset": "features/operator",
}


def run(profile: str, feature: str, repeat: int, select: str | None) -> tuple[int, float, str]:
    command = [sys.executable, "-m", "aftershock.cli", "run", feature, "--profile",
               f"profiles/{profile}.yaml", "--repeat", str(repeat), "-p", "no:cacheprovider"]
    if select:
        command += ["-k", select]
    began = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    return result.returncode, time.monotonic() - began, result.stdout


def flake_table(stdout: str) -> str:
    found = re.search(r"^\s*passed\s+verdict\s+scenario$.*?(?=^=)", stdout, re.M | re.S)
    return found.group(0).rstrip() if found else "(no flake table)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--only", choices=sorted(RUNS), action="append")
    parser.add_argument("-k", dest="select", help="pytest -k expression within each feature")
    args = parser.parse_args()
    worst = 0
    rows = []
    for profile in args.only or RUNS:
        code, seconds, stdout = run(profile, RUNS[profile], args.repeat, args.select)
        passed = re.search(r"(\d+) passed", stdout)
        count = int(passed.group(1)) if passed else 0
        print(f"== {profile}: exit {code}, {seconds:.0f} s")
        print(flake_table(stdout))
        rows.append((profile, code, seconds, count))
        worst = max(worst, code)
    print(f"\n{'profile':<22} {'exit':>4} {'wall s':>7} {'passed':>6} {'s/run':>6}")
    for profile, code, seconds, count in rows:
        per = seconds / count if count else float("nan")
        print(f"{profile:<22} {code:>4} {seconds:>7.0f} {count:>6} {per:>6.1f}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
