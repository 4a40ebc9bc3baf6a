"""`aftershock merge RUN... --out DIR`: run dirs of shards (of `aftershock run --shard` or
`aftershock explore --shard`, from one machine or many) joined into one: the conformance matrix
and allure's results and JUnit's XML of the scenarios, or explore's plans, findings and summary,
with a finding that two shards both made folded as one exploration would have folded it."""

from __future__ import annotations

import json
import shutil
import statistics
import xml.etree.ElementTree as ET
from dataclasses import asdict
from pathlib import Path

from aftershock.errors import UserError
from aftershock.report import conformance, matrix, page

RESULTS = "allure-results"
UNPERTURBED = "flaky without a fault"  # explore.explorer.UNPERTURBED (merge imports no explorer)
NOT_FIRED = "its fault never fired"  # explore.explorer.NOT_FIRED
SUMMARY = "summary.json"
# What a run writes about all its scenarios, which the merged run writes again for all of them
INDEX_FILES = {matrix.FILE, "matrix.md", "matrix.html", "junit.xml", SUMMARY, "plans.jsonl",
               "reference.json", conformance.DIR}


def kind_of(run: Path) -> str:
    if (run / SUMMARY).is_file() and (run / "plans.jsonl").is_file():
        return "explore"
    if (run / matrix.FILE).is_file() or (run / RESULTS).is_dir() or (run / "junit.xml").is_file():
        return "run"
    raise UserError(f"{run}: not a run dir (no {matrix.FILE}, {RESULTS} or junit.xml of "
                    f"aftershock run, nor the {SUMMARY} and plans.jsonl of aftershock explore)")


def merge(runs: list[Path], out: Path) -> str:
    """Joins ``runs`` into ``out`` (which may hold them); returns which kind they were."""
    if not runs:
        raise UserError("aftershock merge: name the run dirs to join")
    kinds = {run: kind_of(run) for run in runs}
    if len(set(kinds.values())) > 1:
        raise UserError("aftershock merge: these are runs of aftershock run and of aftershock "
                        "explore; merge each kind on its own: " + ", ".join(
                            f"{run} ({kind})" for run, kind in kinds.items()))
    out.mkdir(parents=True, exist_ok=True)
    kind = next(iter(kinds.values()))
    if kind == "run":
        merge_runs(runs, out)
    else:
        merge_explorations(runs, out)
    return kind


# --- aftershock run ---------------------------------------------------------------------------

def merge_runs(runs: list[Path], out: Path) -> None:
    rows: list[matrix.Row] = []
    suites: list[ET.Element] = []
    for run in runs:
        where = _placed(run, out)
        for row in matrix.load(run):
            if row.dir is not None and where != ".":
                row.dir = f"{where}/{row.dir}"
            rows.append(row)
        results = run / RESULTS
        if results.is_dir():
            (out / RESULTS).mkdir(exist_ok=True)
            for item in results.iterdir():  # allure names every file by a fresh uuid
                _copy(item, out / RESULTS / item.name)
        if (run / "junit.xml").is_file():
            suites += _suites(run / "junit.xml")
    (out / matrix.FILE).write_text("".join(json.dumps(asdict(r)) + "\n" for r in rows))
    page.write(out)
    if suites:
        top = ET.Element("testsuites")
        top.extend(suites)
        ET.ElementTree(top).write(out / "junit.xml", encoding="utf-8", xml_declaration=True)


def _suites(path: Path) -> list[ET.Element]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise UserError(f"{path}: not JUnit XML ({exc})") from None
    return [root] if root.tag == "testsuite" else list(root)


def _placed(run: Path, out: Path) -> str:
    """Where a run's scenario dirs are in ``out``, relative to it: a run inside ``out`` (the
    shards of --workers) stays where it is; another one's are copied in."""
    run, out = run.resolve(), out.resolve()
    if run.is_relative_to(out):
        return str(run.relative_to(out))
    for item in run.iterdir():
        if item.name not in INDEX_FILES and item.name != RESULTS:
            _copy(item, out / item.name)
    return "."


def _copy(source: Path, target: Path) -> None:
    if source.resolve() == target.resolve():
        return
    if target.exists():
        raise UserError(f"aftershock merge: {target} is in two of the runs; merge runs of "
                        "different shards, into a dir of its own")
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy2(source, target)


# --- aftershock explore -----------------------------------------------------------------------

def merge_explorations(runs: list[Path], out: Path) -> None:
    summaries = [json.loads((run / SUMMARY).read_text()) for run in runs]
    rows = []
    for run in runs:
        rows += [json.loads(line) for line in (run / "plans.jsonl").read_text().splitlines()
                 if line.strip()]
    findings = fold([dict(f, run=str(run)) for run, s in zip(runs, summaries, strict=True)
                     for f in s["list"]])
    plans_run = [r for r in rows if r.get("kind") != "reference"]
    times = [r["seconds"] for r in plans_run if r.get("seconds") is not None]
    merged = {
        "shards": [{"run": str(run), "shard": s.get("shard"), "plans_run": s["plans_run"],
                    "elapsed": s["elapsed"]} for run, s in zip(runs, summaries, strict=True)],
        "plans_generated": max(s["plans_generated"] for s in summaries),
        "plans_run": len(plans_run),
        "pruned": max(s["pruned"] for s in summaries),
        "findings": len(findings),
        "bugs": sum(1 for f in findings if f["verdict"] == "bug"),
        "flaky": sum(1 for f in findings if f["verdict"] == "flaky"),
        "unperturbed": sum(1 for f in findings if f["verdict"] == UNPERTURBED),
        "no_fault": sum(1 for f in findings if f["plan"] is None),
        "not_fired": sum(1 for f in findings if f.get("kind") == NOT_FIRED),
        "not_enough_replays": sum(1 for f in findings if f["verdict"] == "not enough replays"),
        "first_bug_after": min((s["first_bug_after"] for s in summaries
                                if s.get("first_bug_after")), default=None),
        "reference_violations": sorted({v for s in summaries
                                        for v in s.get("reference_violations", [])}),
        "plans_with_violations": sum(s.get("plans_with_violations", 0) for s in summaries),
        "errors": sum(s["errors"] for s in summaries),
        "seconds_per_plan": {"mean": round(statistics.mean(times), 2) if times else None,
                             "p50": round(statistics.median(times), 2) if times else None,
                             "max": round(max(times), 2) if times else None},
        "plans_per_minute": round(60 * len(times) / sum(times), 2) if times else None,
        # the shards ran side by side, or one after another: the longest is the wall time
        "elapsed": max(s["elapsed"] for s in summaries),
        "by_kind": _by_kind(summaries),
        "list": findings,
    }
    (out / SUMMARY).write_text(json.dumps(merged, indent=1))
    with (out / "plans.jsonl").open("w") as handle:
        for row in sorted(rows, key=lambda r: (r.get("kind") != "reference",
                                               r.get("order", -1))):
            handle.write(json.dumps(row) + "\n")


def fold(findings: list[dict]) -> list[dict]:
    """Findings of several shards as one exploration would have them (`Explorer.same_bug`): in
    the order of the plans, a plan's finding is an earlier bug again (its plan noted on it)
    only when it is the same fault kind breaking the same properties, its violations naming
    the same objects. No other finding takes one in: not a flaky one, not one its control runs
    broke with no fault, not the reference runs' own. A finding saved with no objects (by an
    explore before they were saved) folds into none. The reference runs' own findings of
    shards that each ran references (no shared planning) are one when their signatures are."""
    kept: list[dict] = []
    for finding in sorted(findings, key=lambda f: f.get("order", -1)):
        signature = _signature(finding)
        first = None if signature is None else next(
            (k for k in kept if _signature(k) == signature and
             (finding["plan"] is None or (k["verdict"] == "bug" and
                                          k.get("kind") != NOT_FIRED))), None)
        if first is not None:
            if finding["plan"] is not None:
                first["same"] = [*first.get("same", []), finding.get("anchor") or
                                 finding["plan"]]
            continue
        kept.append(dict(finding, number=len(kept) + 1))
    return kept


def _signature(finding: dict) -> tuple | None:
    """What `engine.Finding.signature` is, from summary.json (the reference runs' own: no plan
    kind); None when the finding was saved with no objects."""
    if finding.get("objects") is None:
        return None
    return (finding.get("kind") or finding.get("plan_kind"), finding["plan"] is None,
            frozenset(finding["violated"]), frozenset(finding["objects"]))


def _by_kind(summaries: list[dict]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for summary in summaries:
        for kind, row in summary["by_kind"].items():
            mine = out.setdefault(kind, {key: 0 for key in row})
            for key, value in row.items():
                mine[key] = mine.get(key, 0) + value
    return out
