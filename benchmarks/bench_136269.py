"""kubernetes/kubernetes#136269 shown when asked: features/kubernetes/dra_double_allocation.feature
run `--repeat N` at the version with the bug (1.35.0) and at its fix (1.35.4), as
tests/integration/test_dra_double_allocation.py runs it when asked; prints how many runs of each
judged D2 VIOLATED and PASS, side by side with the target (at least 8 of 10 VIOLATED where the
bug is, every run PASS at the fix) and the wall time. Both toolchains must be built here
(`aftershock toolchain build --kubernetes-version 1.35.0`, and 1.35.4).

    .venv/bin/python benchmarks/bench_136269.py [--repeat 10] [--run-dir reports/bench-136269]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.integration.test_dra_double_allocation import BUGGY, FEATURE, FIXED, d2

REPO = Path(__file__).resolve().parents[1]
TARGET = {BUGGY: ("violated", 0.8), FIXED: ("pass", 1.0)}  # the status, and its share of runs


def counts(run_dir: Path) -> dict[str, Counter[str]]:
    """Per Kubernetes version, how many runs had each D2 status (the test's reading of them:
    a violation of an earlier run's claims is "earlier")."""
    found: dict[str, Counter[str]] = {}
    for version, status, _ in d2(run_dir):
        found.setdefault(version, Counter())[status] += 1
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--run-dir", type=Path, default=REPO / "reports" / "bench-136269")
    parser.add_argument("--kubernetes-version", choices=(BUGGY, FIXED), action="append",
                        help="only this version (repeatable; default: both)")
    args = parser.parse_args()
    versions = args.kubernetes_version or [BUGGY, FIXED]
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "aftershock.cli", "run", FEATURE, "-p",
                    "no:cacheprovider", "--kubernetes-version", ",".join(versions), "--repeat",
                    str(args.repeat), "--run-dir", str(args.run_dir)], cwd=REPO, check=False,
                   capture_output=True)
    seconds = time.monotonic() - began
    found = counts(args.run_dir)
    print(f"{'Kubernetes':<11} {'runs':>4} {'violated':>8} {'pass':>4} {'earlier':>7} "
          f"{'other':>5}   target")
    worst = 0
    for version, (status, share) in TARGET.items():
        if version not in versions:
            continue
        seen = found.get(version, Counter())
        runs = sum(seen.values())
        other = runs - seen["violated"] - seen["pass"] - seen["earlier"]
        met = runs == args.repeat and seen[status] >= share * runs
        worst = worst if met else 1
        print(f"{version:<11} {runs:>4} {seen['violated']:>8} {seen['pass']:>4} "
              f"{seen['earlier']:>7} {other:>5}   "
              f"{status} in at least {share:.0%}: {'met' if met else 'NOT met'} "
              f"({seen[status] / max(runs, 1):.0%})")
    print(f"wall time {seconds:.0f} s for {len(versions) * args.repeat} runs")
    return worst


if __name__ == "__main__":
    sys.exit(main())
