"""Every wrong verdict the reviews of the judges found, saved as a run with its true status
(tests/data/verdicts/, written by the tests that found them: tests/verdict_corpus.py), judged
again by `aftershock judge`: each must give its true status, and the matrix it records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aftershock import cli
from tests.verdict_corpus import ABOUT, saved

REPO = Path(__file__).resolve().parents[2]
RUNS = saved()


def test_the_corpus_holds_every_wrong_verdict_found():
    assert len(RUNS) >= 25, [run.name for run in RUNS]
    found = {json.loads((run / ABOUT).read_text())["found"] for run in RUNS}
    assert {"the review of issue 29"} <= found
    assert {f"the review of issue 43, item {n}" for n in (1, 2, 3, 6, 7, 8, 9, 12, 13)} <= found


@pytest.mark.parametrize("run", RUNS, ids=[run.name for run in RUNS])
def test_aftershock_judge_gives_each_its_true_status(run: Path, capsys, monkeypatch):
    about = json.loads((run / ABOUT).read_text())
    monkeypatch.chdir(REPO)
    code = cli.main(["judge", str(run), "--check", "-v"])
    out = capsys.readouterr().out
    assert code == 0, (about, out)
    assert "the same matrix as recorded in the run" in out
    for label, status in about["truth"].items():
        assert f"  {label}: {status.upper()}: " in out, (label, status, out)
    assert about["wrong"] not in {status for status in about["truth"].values()} or \
        len(about["truth"]) > 1, about
