"""`aftershock judge` on a run saved before judgements were recorded (two scenarios of a real
`make demo` run, kept in tests/data): each Then step is replayed against the saved history and
the matrix comes out as it was recorded — N1 and N5 violated by the faulty node-records
operator, S2 and S3 by the faulty storage operator (its data probe's saved answers)."""

from __future__ import annotations

import tarfile
from pathlib import Path

from aftershock import rejudge
from aftershock.report import matrix

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path) -> Path:
    with tarfile.open(REPO / "tests" / "data" / "legacy-run.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / "legacy-run"


def test_a_run_saved_before_judgements_were_recorded_is_judged_the_same(tmp_path):
    run = _run(tmp_path)
    result = rejudge.rejudge(run, [REPO / "profiles"])
    assert result.legacy == 2
    assert rejudge.differences(matrix.load(run), result.rows) == []
    by_profile = {row.profile: row.outcomes for row in result.rows}
    assert by_profile["noderecords-faulty"] == {"N1": "violated", "N5": "violated",
                                                "N2": "pass", "N4": "pass"}
    assert by_profile["storage-faulty"]["S2"] == "violated"
    verdicts = [v for vs in result.verdicts.values() for v in vs]
    n1 = next(v for v in verdicts if v.property == "N1, N5")
    assert "index 0 no longer held by node/" in n1.summary, n1.summary


def test_a_changed_property_shows_as_a_difference(tmp_path, monkeypatch):
    """The point of judging again: today's properties may say otherwise, and it is shown."""
    from aftershock.properties import base

    run = _run(tmp_path)
    never = base.CHECKS["never_reclaimed_early"]
    monkeypatch.setitem(base.CHECKS, "never_reclaimed_early", base.Check(
        never.name, never.statement, lambda history, params: base.Verdict(
            "never_reclaimed_early", "violated", "changed", [], 0.0, subjects=1,
            reads=frozenset({"nodes"}))))
    result = rejudge.rejudge(run, [REPO / "profiles"])
    assert rejudge.differences(matrix.load(run), result.rows) == [
        "noderecords-faulty N2: recorded pass, judged now violated"]
