"""A finding as a scenario anyone can run again: the workload, the fault anchored where the plan
put it, the wait for quiet, and the properties it broke (`aftershock run F --profile P`)."""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Sequence
from pathlib import Path

from aftershock.checks.verdict import VIOLATED
from aftershock.explore import oracles
from aftershock.explore.workload import load
from aftershock.grammar import label_ids, split_label
from aftershock.report import picture as drawing
from aftershock.report import plot
from aftershock.report.evidence import witness_entries
from aftershock.timeline.resources import spelled


def write(finding, workload, directory: Path, profile, seed: int,
          records: Sequence[tuple[str, str]] = ()) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    plan = finding.plan
    violated = sorted(finding.outcome.violated)
    slug = plan.slug if plan else "reference"
    path = directory / f"{finding.number:02d}-{slug}.feature"
    kept = _kept(finding.outcome.lines, set(violated), len(workload.steps))
    tags = " ".join([*(f"@{t}" for t in sorted(workload.tags)
                       if not t.startswith("expect-violation:")),
                     *([f"@records:{','.join(spelled(*k) for k in records)}"] if records else [])])
    where = f"a {plan.kind} fault ({plan.anchor})" if plan else "no fault at all"
    head = [
        f"# Found by aftershock explore on {datetime.date.today()}: profile {profile.name}, "
        f"seed {seed}, workload {oracles.shown(workload.path)}.",
        f"# Plan: {plan.step if plan else 'none (the unperturbed reference run)'}",
        *(f"# {p} violated: {finding.outcome.violated[p][:300]}" for p in violated),
        f"# Replay: aftershock run {oracles.shown(path)} --profile "
        f"{oracles.shown(profile.path)}",
        f"@explore {tags}".rstrip(),
        f"Feature: explore finding {finding.number}: {', '.join(violated)} under {where}",
        "",
        f"  Scenario: {workload.title}, {plan.anchor if plan else 'unperturbed'}",
    ]
    kept = [_moved(line, workload.path.resolve().parent, directory.resolve()) for line in kept]
    body = [indented for index, line in enumerate(kept)
            for indented in _indented(_and(line, kept[index - 1] if index else None))]
    path.write_text("\n".join(head + body) + "\n")
    return path


MANIFEST = re.compile(r"^(\w+ I apply the manifest )(\S.*)$")


def _moved(line: str, workload_dir: Path, directory: Path) -> str:
    """A manifest the workload names relative to itself, named relative to where the finding
    is written (a feature's manifests are relative to the feature)."""
    found = MANIFEST.match(line)
    if not found or Path(found.group(2)).is_absolute():
        return line
    return found.group(1) + os.path.relpath(workload_dir / found.group(2), directory)


def _kept(lines: list[str], violated: set[str], workload_steps: int) -> list[str]:
    """Every step up to the wait for quiet; after it, only the judgements that broke."""
    quiet = lines.index(oracles.QUIET)
    out = lines[:quiet + 1]
    for line in lines[quiet + 1:]:
        label = split_label(line)[1]
        if label and set(label_ids(label)) & violated:
            out.append(line)
    return out


def _indented(words: str) -> list[str]:
    """A step under its scenario, and its block (if any) under the step."""
    line, *block = words.split("\n")
    return [f"    {line}", *(f"      {part}".rstrip() for part in block)]


def _and(line: str, previous: str | None) -> str:
    """'Given x' after a Given reads 'And x', as a person writes it."""
    keyword, _, text = line.partition(" ")
    if previous is not None and previous.partition(" ")[0] == keyword:
        return f"And {text}"
    return line


def scenario_lines(path: Path) -> list[str]:
    """The steps of a written finding, as its feature file says them now."""
    return [step.words for step in load(path).steps]


def picture(scenario, path: Path, title: str) -> None:
    """The run that found it, drawn as the reports draw a timeline (the witness marked), and
    its verdicts in words beside it."""
    broken = [v for v in scenario.verdicts if v.status == VIOLATED]
    plot.write_png(drawing.build(scenario.timeline.entries, witness_entries(broken)), path, title)
    path.with_suffix(".txt").write_text(
        scenario.redactor.text("\n\n".join(v.explain() for v in broken)) + "\n")
