"""The corpus of wrong verdicts (tests/data/verdicts/): every verdict a review of the judges
found wrong, kept as a saved run of one scenario with the history it was found with, whose
conformance matrix records the true status. `aftershock judge --check` on each must give that
status (tests/unit/test_verdict_corpus.py).

A unit test that shows a wrong verdict fixed calls ``keep`` with its history: it checks the
saved run is that history, so the corpus cannot drift from the tests that found its cases.
``AFTERSHOCK_WRITE_VERDICTS=1`` (re)writes the saved runs instead:

    AFTERSHOCK_WRITE_VERDICTS=1 .venv/bin/pytest tests/unit -q -p no:cacheprovider -n 0
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from aftershock.properties import Judgement
from aftershock.report import matrix
from aftershock.timeline.entry import Entry
from aftershock.timeline.store import load, save

CORPUS = Path(__file__).resolve().parent / "data" / "verdicts"
ABOUT = "about.json"
SCENARIO = "scenario"
WRITE = "AFTERSHOCK_WRITE_VERDICTS"


def keep(slug: str, history: Sequence[Entry], judgement: Judgement | None, ids: list[str],
         truth: dict[str, str], wrong: str, found: str, error: str | None = None) -> None:
    """One wrong verdict, saved as a run: ``history`` judged by ``judgement`` for ``ids``,
    whose true verdict is ``truth`` (property as the verdict names it → pass, violated or
    unknown; the matrix row records what they make); ``wrong`` is what it used to be judged,
    ``found`` who found it and where. With no ``judgement``, the scenario stopped on ``error``
    before it judged ``ids``: no verdict, an error in the matrix."""
    directory = CORPUS / slug
    if os.environ.get(WRITE):
        _write(directory, history, judgement, ids, truth, wrong, found, error)
        return
    assert directory.is_dir(), f"{directory} is not saved: run with {WRITE}=1"
    saved = [entry.row() for entry in load(directory / SCENARIO)]
    assert saved == [_row(entry) for entry in history], \
        f"{directory} holds another history than the test's: run with {WRITE}=1"
    about = json.loads((directory / ABOUT).read_text())
    assert about["truth"] == truth, (about, truth)


def _row(entry: Entry) -> list:
    """An entry as it reads back from a saved timeline (JSON: tuples become lists)."""
    return json.loads(json.dumps(entry.row()))


def _write(directory: Path, history: Sequence[Entry], judgement: Judgement | None,
           ids: list[str],
           truth: dict[str, str], wrong: str, found: str, error: str | None) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    save(list(history), directory / SCENARIO)
    records = [] if judgement is None else [
        {"ids": ids, "check": judgement.check, "params": judgement.params,
         "upto": len(history), "step": f"Then ... ({', '.join(ids)})"}]
    (directory / SCENARIO / "judgements.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in records))
    named = [", ".join(ids)]
    outcomes = matrix.scenario_outcomes(list(truth.items()), set(), named, error=error)
    row = matrix.Row("corpus", f"{directory.name}::{directory.name}", outcomes, dir=SCENARIO,
                     expected=[], named=named, error=error)
    matrix.append(directory, row)
    (directory / ABOUT).write_text(json.dumps(
        {"found": found, "wrong": wrong, "truth": truth}, indent=1) + "\n")


def saved() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / ABOUT).is_file()) \
        if CORPUS.is_dir() else []
