"""matrix.html: the conformance matrix as a page a person reads. A header says what ran (when,
which aftershock, on which provider and Kubernetes versions, each implementation's module
version or commit); a column head is a property's id and title (its statement on hover, and in
full below); a cell links to the scenarios that judged it, and one not passed says why in one
line with links to its witness and timeline picture. Written with the rest of a run's reports
(`write`): matrix.md and the conformance outputs too."""

from __future__ import annotations

import html
import time
from collections.abc import Iterable
from pathlib import Path

import aftershock
from aftershock.properties import PROPERTIES
from aftershock.report import conformance, matrix
from aftershock.report.conformance import Case
from aftershock.report.matrix import COLOURS, LEGEND, PASS, Row

FILE = "matrix.html"
STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}
td,th{border:1px solid #999;padding:4px 8px;vertical-align:top}
table.grid td{text-align:center;min-width:6em}th small{display:block;font-weight:normal;
max-width:12em}td .why{font-size:80%;text-align:left;max-width:22em}td .ev{font-size:80%}
table.meta th{text-align:left}dt{font-weight:bold;margin-top:.4em}span.k{padding:0 6px}
h2{margin-top:1.5em}"""


def title_of(label: str) -> str:
    """A property's short title: its statement up to the first colon (or as a whole)."""
    known = PROPERTIES.get(label)
    if known is None:
        return ""
    head = known.statement.split(": ", 1)[0]
    return head if len(head) <= 70 else head[:67] + "..."


def _exists(run_dir: Path, relative: str) -> bool:
    return (run_dir / relative).is_file()


def _evidence(run_dir: Path, row: Row) -> list[tuple[str, str]]:
    """(name, path relative to the run dir) of a scenario's evidence that is there."""
    if not row.dir:
        return []
    wanted = [("verdicts", f"{row.dir}/verdicts.txt"),
              ("witness", f"{row.dir}/evidence/witness.txt"),
              ("timeline", f"{row.dir}/evidence/timeline.png"),
              ("timeline page", f"{row.dir}/evidence/timeline.html")]
    return [(name, path) for name, path in wanted if _exists(run_dir, path)]


def _links(found: list[tuple[str, str]]) -> str:
    return " · ".join(f'<a href="{html.escape(path)}">{html.escape(name)}</a>'
                      for name, path in found)


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def header(rows: list[Row], written: str) -> str:
    providers = sorted({row.provider or "local" for row in rows})
    versions = sorted({row.kubernetes for row in rows if row.kubernetes},
                      key=matrix._version)
    facts = [("written", written), ("aftershock", aftershock.__version__),
             ("provider", ", ".join(providers)),
             ("Kubernetes", ", ".join(versions) or "not recorded")]
    meta = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                   for k, v in facts)
    implementations: dict[str, tuple[set[str], int]] = {}
    for row in rows:
        versions_of, count = implementations.get(row.implementation, (set(), 0))
        versions_of.add(row.version or "not recorded (a run saved before versions were)")
        implementations[row.implementation] = (versions_of, count + 1)
    listed = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{html.escape(', '.join(sorted(found)))}</td>"
        f"<td>{count}</td></tr>" for name, (found, count) in sorted(implementations.items()))
    return (f"<table class='meta'>{meta}</table><h2>Implementations</h2><table>"
            "<tr><th>implementation</th><th>module version or commit</th><th>scenarios</th>"
            f"</tr>{listed}</table>")


def _cell(run_dir: Path, anchor: str, outcome: str | None, cases: list[Case]) -> str:
    if outcome is None:
        return "<td></td>"
    colour = COLOURS.get(outcome, "#ffffff")
    meaning = html.escape(LEGEND.get(outcome, ""))
    inner = f'<a href="#{anchor}">{html.escape(outcome)}</a>'
    if outcome != PASS:
        telling = next((case for case in cases if case.outcome == outcome), None)
        if telling is not None:
            inner += f"<div class='why'>{html.escape(_one_line(telling.reason))}</div>"
            shown = [(n, p) for n, p in _evidence(run_dir, telling.row)
                     if n in ("witness", "timeline")]
            if shown:
                inner += f"<div class='ev'>{_links(shown)}</div>"
    return f'<td style="background:{colour}" title="{meaning}">{inner}</td>'


def _details(run_dir: Path, anchor: str, line: matrix.Line, label: str,
             cases: list[Case]) -> str:
    items = "".join(
        f"<li><b>{html.escape(case.outcome)}</b> {html.escape(case.scenario)}"
        f" <small>({html.escape(case.feature)})</small>"
        + (f"<br>{html.escape(_one_line(case.reason, 300))}" if case.outcome != PASS else "")
        + (f"<br>{_links(_evidence(run_dir, case.row))}" if case.row.dir else "") + "</li>"
        for case in cases)
    return (f"<h3 id='{anchor}'>{html.escape(line[0])} · Kubernetes {html.escape(line[1])} · "
            f"{html.escape(label)} {html.escape(title_of(label))}</h3><ul>{items}</ul>")


def render(run_dir: Path, rows: Iterable[Row], written: str | None = None,
           title: str = "aftershock conformance matrix") -> str:
    rows = list(rows)
    lines, properties, grid = matrix.cells(rows)
    written = written or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    by_cell: dict[tuple[matrix.Line, str], list[Case]] = {}
    for case in conformance.cases(run_dir, rows):
        by_cell.setdefault((case.row.line, case.property), []).append(case)
    heads = "".join(
        f"<th title=\"{html.escape(PROPERTIES[p].statement if p in PROPERTIES else p)}\">"
        f"<a href='#p-{html.escape(p)}'>{html.escape(p)}</a><small>{html.escape(title_of(p))}"
        "</small></th>" for p in properties)
    body, details = [], []
    for i, line in enumerate(lines):
        tds = []
        for j, prop in enumerate(properties):
            anchor, cases = f"c-{i}-{j}", by_cell.get((line, prop), [])
            tds.append(_cell(run_dir, anchor, grid.get((line, prop)), cases))
            if cases:
                details.append(_details(run_dir, anchor, line, prop, cases))
        body.append(f"<tr><th>{html.escape(line[0])}</th><td>{html.escape(line[1])}</td>"
                    f"{''.join(tds)}</tr>")
    legend = "".join(f"<li><span class='k' style='background:{COLOURS[k]}'>{k}</span>: "
                     f"{html.escape(v)}</li>" for k, v in LEGEND.items())
    statements = "".join(
        f"<dt id='p-{html.escape(p)}'>{html.escape(p)}</dt><dd>"
        f"{html.escape(PROPERTIES[p].statement if p in PROPERTIES else '(not in the catalogue)')}"
        "</dd>" for p in properties)
    failed = "".join(f"<li>{html.escape(line)}</li>" for line in matrix.errors(rows))
    errors = f"<h2>Errors (no verdict)</h2><ul>{failed}</ul>" if failed else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            f"{header(rows, written)}<h2>Matrix</h2><table class='grid'><tr><th>implementation"
            f"</th><th>kubernetes</th>{heads}</tr>{''.join(body)}</table><ul>{legend}</ul>"
            f"{errors}<h2>Properties</h2><dl>{statements}</dl><h2>Scenarios by cell</h2>"
            f"{''.join(details)}</body></html>\n")


def write(run_dir: Path) -> list[Path]:
    """matrix.md, matrix.html and the conformance outputs (none if nothing was judged)."""
    written = [*matrix.write(run_dir), *conformance.write(run_dir)]
    rows = matrix.load(run_dir)
    if not rows:
        return written
    page = run_dir / FILE
    page.write_text(render(run_dir, rows))
    return [*written, page]
