"""`aftershock judge <run>`: every scenario of a saved run judged again with today's properties,
from its timeline and its judgements as recorded (or, for a run saved before judgements were
recorded, as its Then steps rebuild them), giving the run's conformance matrix again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from aftershock.checks.verdict import UNKNOWN, Verdict
from aftershock.properties.base import Judgement, judge, problem
from aftershock.rejudge import legacy
from aftershock.report import matrix
from aftershock.timeline.store import load
from aftershock.world import report_dir_name

JUDGEMENTS = "judgements.jsonl"


@dataclass
class Rejudged:
    rows: list[matrix.Row]
    verdicts: dict[str, list[Verdict]] = field(default_factory=dict)  # by scenario
    legacy: int = 0  # scenarios whose judgements were rebuilt from their steps


def recorded(scenario_dir: Path, entries) -> list[legacy.Record] | None:
    path = scenario_dir / JUDGEMENTS
    if not path.exists():
        return None
    records = []
    for line in path.read_text().splitlines():
        if line.strip():
            data = json.loads(line)
            records.append(legacy.Record(data["ids"], data["check"], data["params"],
                                         entries[:data["upto"]], data.get("step") or ""))
    return records


def verdicts_of(record: legacy.Record) -> list[Verdict]:
    """The judgement of one step again. A step whose labels name a property today's check no
    longer decides (a step labelled "(G2, G3)" on G2's check) is judged for the properties it
    does decide; each other one is UNKNOWN, saying which checks judge it now."""
    label = ", ".join(record.ids) or "?"
    if record.error or not record.ids:
        return [Verdict(label, UNKNOWN, record.error or "nothing was judged")]
    if problem(record.ids, record.check) is None:
        verdict = judge(record.ids, Judgement(record.check, record.params), record.entries)
        return [replace(verdict, property=label)]
    decided = [id for id in record.ids if problem([id], record.check) is None]
    out = [Verdict(id, UNKNOWN, f"not judged again: {problem([id], record.check)}")
           for id in record.ids if id not in decided]
    if decided:
        verdict = judge(decided, Judgement(record.check, record.params), record.entries)
        out.insert(0, replace(verdict, property=", ".join(decided)))
    return out


def scenario_dir(run_dir: Path, row: matrix.Row) -> Path:
    return run_dir / (row.dir or report_dir_name(row.scenario))


def rejudge(run_dir: Path, profile_roots: list[Path]) -> Rejudged:
    tests = None
    result = Rejudged([])
    for row in matrix.load(run_dir):
        where = scenario_dir(run_dir, row)
        skipped = bool(row.outcomes) and all(o == matrix.SKIPPED for o in row.outcomes.values())
        if row.skipped or skipped or \
                not (where / "timeline.jsonl").exists():
            result.rows.append(row)
            continue
        entries = load(where)
        records = recorded(where, entries)
        if records is None:
            if tests is None:
                tests = legacy.allure_tests(run_dir)
            try:
                records = legacy.reconstruct(run_dir, where, entries, row.profile,
                                             profile_roots, tests)
            except LookupError as exc:
                records = [legacy.Record([], "", {}, [], "", str(exc))]
            result.legacy += 1
        verdicts = [verdict for record in records for verdict in verdicts_of(record)]
        result.verdicts[row.scenario] = verdicts
        expected = set(row.expected) if row.expected is not None else {
            label for label, outcome in row.outcomes.items()
            if outcome in (matrix.CAUGHT, matrix.MISSED)}
        named = row.named if row.named is not None else sorted(row.outcomes)
        outcomes = matrix.scenario_outcomes([(v.property, v.status) for v in verdicts],
                                            expected, named, error=row.error)
        result.rows.append(replace(row, outcomes=outcomes))
    return result


def differences(before: list[matrix.Row], after: list[matrix.Row]) -> list[str]:
    """Cells of the matrix that changed: (profile, property) recorded → re-judged."""
    _, _, old = matrix.cells(before)
    _, _, new = matrix.cells(after)
    return [f"{_named(line)} {prop}: recorded {old.get((line, prop), '-')}, judged now "
            f"{new.get((line, prop), '-')}"
            for line, prop in sorted(set(old) | set(new))
            if old.get((line, prop)) != new.get((line, prop))]


def _named(line: matrix.Line) -> str:
    implementation, version = line
    return implementation if version == matrix.UNRECORDED else f"{implementation} ({version})"
