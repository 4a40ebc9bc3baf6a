"""The flake table of a repeated run: per scenario, how many runs passed."""

from __future__ import annotations

import re
from collections import defaultdict


def flake_table(reports) -> list[str]:
    """One line per scenario: passed/total and a verdict (stable, FLAKY, failing)."""
    outcome: dict[str, dict[str, str]] = defaultdict(dict)
    for report in reports:
        base = re.sub(r"\[run\d+\]$|(?<=\[)run\d+-|-run\d+(?=\]$)", "", report.nodeid)
        run = re.search(r"run\d+", report.nodeid)
        key = run.group(0) if run else report.nodeid
        if report.when == "call" or report.outcome != "passed":
            previous = outcome[base].get(key)
            if previous not in ("failed", "error"):
                outcome[base][key] = "failed" if report.outcome == "failed" else report.outcome
    lines = [f"{'passed':>8}  {'verdict':<8}  scenario"]
    for scenario, runs in sorted(outcome.items()):
        passed = sum(value == "passed" for value in runs.values())
        total = len(runs)
        verdict = "stable" if passed == total else "failing" if passed == 0 else "FLAKY"
        lines.append(f"{passed:>4}/{total:<3}  {verdict:<8}  {scenario}")
    return lines
