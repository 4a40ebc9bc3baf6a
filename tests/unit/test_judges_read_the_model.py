"""The judges read a recorded history only through its model (aftershock.history): beside the
import contract `make lint` runs, no module of the properties, checks, concepts or phrases
touches what the recorder appended as it is (the entries, their kinds, their arrival times or
sequence). Such a judge would read the order things arrived in, not the cluster's."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
JUDGES = ("properties", "checks", "concepts", "phrases")
# What only the raw record has: its entries, each one's kind, when it arrived and in which
# order (the model gives each change its moment on the cluster's clock and its place in the
# cluster's order instead).
RAW = {"entries", "kind", "mono", "wall", "seq"}


def raw_reads(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in RAW:
            found.append((node.lineno, node.attr))
    return found


def test_no_judge_reads_the_raw_record():
    found = {}
    for package in JUDGES:
        for path in sorted((REPO / "aftershock" / package).rglob("*.py")):
            reads = raw_reads(path.read_text())
            if reads:
                found[str(path.relative_to(REPO))] = reads
    assert not found, found


def test_the_scan_finds_a_judge_reading_arrival_times():
    source = "def judge(history):\n    return [e.mono for e in history.entries]\n"
    assert sorted(raw_reads(source)) == [(2, "entries"), (2, "mono")]
    assert raw_reads("x = change.lo + change.hi") == []
