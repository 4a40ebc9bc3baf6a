"""`aftershock judge <run>`: every scenario of a saved run judged again with today's properties,
from its timeline and its judgements as recorded (or, for a run saved before judgements were
recorded, as its Then steps rebuild them), giving the run's conformance matrix again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from aftershock.checks.verdict import UNKNOWN, Verdict
from aftershock.properties.base import Judgement, judge
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


def verdict_of(record: legacy.Record) -> Verdict:
    if record.error or not record.ids:
        return Verdict(", ".join(record.ids), UNKNOWN, record.error or "nothing was judged")
    return judge(record.ids, Judgement(record.check, record.params), record.entries)


def scenario_dir(run_dir: Path, row: matrix.Row) -> Path:
    return run_dir / (row.dir or report_dir_name(row.scenario))


def rejudge(run_dir: Path, profile_roots: list[Path]) -> Rejudged:
    tests = None
    result = Rejudged([])
    for row in matrix.load(run_dir):
        where = scenario_dir(run_dir, row)
        if row.skipped or all(o == matrix.SKIPPED for o in row.outcomes.values()) or \
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
        verdicts = [replace(verdict_of(r), property=", ".join(r.ids) or "?") for r in records]
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
    return [f"{profile} {prop}: recorded {old.get((profile, prop), '-')}, judged now "
            f"{new.get((profile, prop), '-')}"
            for profile, prop in sorted(set(old) | set(new))
            if old.get((profile, prop)) != new.get((profile, prop))]
