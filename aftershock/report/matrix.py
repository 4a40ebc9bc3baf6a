"""The conformance matrix: implementation (profile) by property, from every scenario of a run.

Each scenario adds one row (matrix.jsonl in the run dir): its profile and, per property label it
judges, one outcome. A cell is the worst outcome over the scenarios that judged the property."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

PASS, VIOLATED, CAUGHT, MISSED, UNKNOWN, ERROR, SKIPPED = (
    "pass", "violated", "caught", "missed", "unknown", "error", "skipped")
NOT_APPLICABLE = "not applicable"  # a verdict's status (checks.verdict), kept as the outcome
RANK = {SKIPPED: 0, NOT_APPLICABLE: 1, PASS: 2, CAUGHT: 3, UNKNOWN: 4, ERROR: 5, MISSED: 6,
        VIOLATED: 7}
LEGEND = {
    PASS: "held in every scenario",
    VIOLATED: "violated (the implementation broke the contract)",
    CAUGHT: "expected violation caught (the suite proved it catches the bug)",
    MISSED: "expected violation NOT caught (the suite failed to show the bug)",
    UNKNOWN: "not judged: the history could not earn a verdict (each says why)",
    NOT_APPLICABLE: "does not apply to this implementation (a KEP's or the profile's word, "
                    "each says which)",
    ERROR: "not judged: the scenario's set-up or the harness failed (its cause is listed)",
    SKIPPED: "skipped (the implementation lacks a concept or the cluster a capability)",
}
COLOURS = {PASS: "#c8e6c9", VIOLATED: "#ef9a9a", CAUGHT: "#b3e5fc", MISSED: "#ffcc80",
           UNKNOWN: "#eeeeee", ERROR: "#ce93d8", SKIPPED: "#fafafa", NOT_APPLICABLE: "#e0e0e0"}
LABEL = re.compile(r"^[A-Z]+[0-9]+$")
NO_PROFILE = "(harness)"
UNRECORDED = "-"  # a row saved before rows named their Kubernetes version
FILE = "matrix.jsonl"


@dataclass
class Row:
    profile: str
    scenario: str
    outcomes: dict[str, str] = field(default_factory=dict)
    # What `aftershock judge` needs to compute the row again (absent in older runs):
    dir: str | None = None  # the scenario's report dir, relative to the run dir
    expected: list[str] | None = None  # @expect-violation ids
    named: list[str] | None = None  # the labels its Then steps name
    skipped: bool = False
    provider: str | None = None  # the cluster it ran on (None: the embedded one)
    # What stopped it before it judged what it names (a set-up or harness failure): those
    # labels are errors, not verdicts
    error: str | None = None
    kubernetes: str | None = None  # the version its API server reported (e.g. v1.37.2)
    seconds: float | None = None  # from its history's first entry to its row (older runs: None)
    title: str | None = None  # the scenario's name as its feature writes it
    version: str | None = None  # the implementation's module version or commit, as built

    @property
    def implementation(self) -> str:
        """Its matrix row: the profile, and the provider when not the embedded cluster, so one
        run shows the same profile on local and on kind side by side."""
        return f"{self.profile} on {self.provider}" if self.provider not in (None, "local") \
            else self.profile


    @property
    def line(self) -> tuple[str, str]:
        """Its line of the matrix: the implementation and the Kubernetes it ran on."""
        return self.implementation, self.kubernetes or UNRECORDED


def _worse(a: str | None, b: str) -> str:
    return b if a is None or RANK[b] > RANK[a] else a


def labels(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if LABEL.match(part.strip())]


def scenario_outcomes(verdicts: Iterable[tuple[str, str]], expected: set[str],
                      judged: Iterable[str], skipped: bool = False,
                      error: str | None = None) -> dict[str, str]:
    """verdicts: (property, status) pairs; judged: the labels the scenario's Then steps name.
    A label named but never judged is unknown, or an error when the scenario stopped on one
    (``error``: its set-up or the harness failed, which is no verdict); an expected violation
    that did not come is missed (an error, when the scenario stopped on one)."""
    named = [label for text in judged for label in labels(text)]
    if skipped:
        return dict.fromkeys(named, SKIPPED)
    outcomes: dict[str, str] = {}
    for prop, status in verdicts:
        for label in labels(prop):
            if status == "violated":
                outcome = CAUGHT if label in expected else VIOLATED
            else:
                outcome = {"pass": PASS, NOT_APPLICABLE: NOT_APPLICABLE}.get(status, UNKNOWN)
            outcomes[label] = _worse(outcomes.get(label), outcome)
    for label in named:
        outcomes.setdefault(label, ERROR if error else UNKNOWN)
    for label in labels(",".join(sorted(expected))):  # the harness's own checks stay out
        if outcomes.get(label) != CAUGHT:
            outcomes[label] = ERROR if error and outcomes.get(label) == ERROR else MISSED
    return outcomes


def errors(rows: Iterable[Row]) -> list[str]:
    """One line per scenario that stopped on a set-up or harness failure: its cause."""
    return [f"{row.implementation}{f' on Kubernetes {row.kubernetes}' if row.kubernetes else ''}: "
            f"{row.scenario.split('::')[-1]}: {row.error}"
            for row in rows if row.error]


def append(run_dir: Path, row: Row) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / FILE).open("a") as out:
        out.write(json.dumps(asdict(row)) + "\n")


def load(run_dir: Path) -> list[Row]:
    path = run_dir / FILE
    if not path.exists():
        return []
    known = set(Row.__dataclass_fields__)
    return [Row(**{k: v for k, v in json.loads(line).items() if k in known})
            for line in path.read_text().splitlines() if line.strip()]


def _natural(label: str) -> tuple[str, int]:
    found = re.match(r"([A-Z]+)([0-9]+)", label)
    return (found.group(1), int(found.group(2))) if found else (label, 0)


Line = tuple[str, str]  # (implementation, Kubernetes version)


def cells(rows: Iterable[Row]) -> tuple[list[Line], list[str], dict[tuple[Line, str], str]]:
    """(lines, properties, (line, property) -> outcome), only rows that judge labels. A line
    is an implementation on one Kubernetes version: a run across versions keeps them apart."""
    grid: dict[tuple[Line, str], str] = {}
    for row in rows:
        for label, outcome in row.outcomes.items():
            key = (row.line, label)
            grid[key] = _worse(grid.get(key), outcome)
    lines = sorted({line for line, _ in grid}, key=lambda line: (line[0], _version(line[1])))
    properties = sorted({label for _, label in grid}, key=_natural)
    return lines, properties, grid


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"[0-9]+", text)[:3])


def markdown(rows: Iterable[Row]) -> str:
    rows = list(rows)
    lines_, properties, grid = cells(rows)
    if not grid:
        return "no property was judged in this run\n"
    lines = ["| profile | kubernetes | " + " | ".join(properties) + " |",
             "|---|---|" + "---|" * len(properties)]
    for line in lines_:
        lines.append(f"| {line[0]} | {line[1]} | "
                     + " | ".join(grid.get((line, p), "") for p in properties) + " |")
    lines += ["", *(f"- **{key}**: {meaning}" for key, meaning in LEGEND.items())]
    failed = errors(rows)
    if failed:
        lines += ["", "Errors (no verdict):", *(f"- {line}" for line in failed)]
    return "\n".join(lines) + "\n"


def text(rows: Iterable[Row]) -> list[str]:
    """The matrix for a terminal: fixed-width columns, grouped by family letter; each line an
    implementation and the Kubernetes version it ran on."""
    rows = list(rows)
    lines_, properties, grid = cells(rows)
    if not grid:
        return []
    width = max(len(line[0]) for line in lines_)
    version = max(len("kubernetes"), *(len(line[1]) for line in lines_))
    families = sorted({_natural(p)[0] for p in properties})
    out = []
    for family in families:
        columns = [p for p in properties if _natural(p)[0] == family]
        judged = [line for line in lines_ if any((line, c) in grid for c in columns)]
        cell = max(8, *(len(grid.get((line, c), "")) for line in judged for c in columns))
        out.append(f"{'':<{width}}  {'kubernetes':<{version}}  "
                   + " ".join(f"{c:<{cell}}" for c in columns))
        for line in judged:
            out.append(f"{line[0]:<{width}}  {line[1]:<{version}}  "
                       + " ".join(f"{grid.get((line, c), '-'):<{cell}}" for c in columns))
        out.append("")
    failed = errors(rows)
    if failed:
        out += ["errors (no verdict):", *(f"  {line}" for line in failed), ""]
    return out


def write(run_dir: Path) -> list[Path]:
    """matrix.md next to matrix.jsonl; returns it (none if nothing ran). matrix.html is
    `report.page`'s."""
    rows = load(run_dir)
    if not rows:
        return []
    md = run_dir / "matrix.md"
    md.write_text(markdown(rows))
    return [md]
