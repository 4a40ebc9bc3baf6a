"""`aftershock run ... --submission DIR` (and `aftershock report RUN --submission DIR`): what a
conformance submission takes, from a run's matrix and saved verdicts.

- ``PRODUCT.yaml``: the Kubernetes AI Conformance items the run evidences (``product``), with
  ``evidence/<id>.md`` beside it;
- ``junit_01.xml`` and ``e2e.log``: the run as Ginkgo reports a Kubernetes e2e run (``ginkgo``);
- ``results.json``: the run as a ``go test -json`` stream (``gotest``).

A run whose scenarios expect a violation is refused: its failures are the suite showing a bug on
purpose, not the platform's conformance."""

from __future__ import annotations

import json
from pathlib import Path

from aftershock.errors import UserError
from aftershock.report import ginkgo, gotest, matrix, product
from aftershock.report.conformance import cases
from aftershock.report.matrix import Row

PRODUCT, JUNIT, LOG, RESULTS = "PRODUCT.yaml", "junit_01.xml", "e2e.log", "results.json"


def refuse_expected(rows: list[Row]) -> None:
    for row in rows:
        if row.expected:
            raise UserError(
                f"--submission: scenario {row.title or row.scenario} expects a violation "
                f"(@expect-violation:{', '.join(row.expected)}); a submission is made of runs "
                "that expect none: run the features without it")


def kubernetes_version(rows: list[Row]) -> str:
    """The one Kubernetes minor the run's API servers reported (1.36), or a UserError saying
    why there is none a PRODUCT.yaml can name."""
    seen = sorted({row.kubernetes for row in rows if row.kubernetes})
    if not seen:
        raise UserError("the run recorded no Kubernetes version (a run saved before aftershock "
                        "kept it)")
    minors = sorted({product.minor(version) for version in seen})
    if len(minors) > 1:
        raise UserError(f"a PRODUCT.yaml is for one Kubernetes version; this run has "
                        f"{', '.join(seen)}: run each version apart")
    return minors[0]


def started(run_dir: Path, rows: list[Row]) -> float | None:
    """When the run began: the earliest first entry of its scenarios' timelines."""
    moments = []
    for row in rows:
        path = run_dir / row.dir / "timeline.jsonl" if row.dir else None
        if path is None or not path.is_file():
            continue
        with path.open() as lines:
            head = json.loads(lines.readline() or "{}")
            first = lines.readline()
        fields = head.get("fields") or []
        if first.strip() and "wall" in fields:
            moments.append(float(json.loads(first)[fields.index("wall")]))
    return min(moments, default=None)


def write(run_dir: Path, out: Path, urls: list[str]) -> list[str]:
    """The submission's files under ``out``, and what it says, a line each; refused in one line
    for a run that cannot make one. A run the program has no checklist for (another Kubernetes
    version, or several) gets its test results and no PRODUCT.yaml, and is told why."""
    product.check_urls(urls)
    rows = matrix.load(run_dir)
    if not rows:
        raise UserError(f"--submission: {run_dir} judged nothing (no {matrix.FILE})")
    refuse_expected(rows)
    found = cases(run_dir, rows)
    begun = started(run_dir, rows)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in ((JUNIT, ginkgo.junit(found, begun)), (LOG, ginkgo.e2e_log(found)),
                       (RESULTS, gotest.stream(found, begun))):
        (out / name).write_text(text)
    said = [f"aftershock: submission in {out}: {JUNIT}, {LOG} and {RESULTS} ({len(found)} "
            "specs)"]
    try:
        version = kubernetes_version(rows)
        items = product.template(version)
    except UserError as why:
        return [*said, f"  no {PRODUCT}: {why}"]
    shown = product.shown(items, found)
    if not shown:
        mapped = "; ".join(f"{item} needs {', '.join(labels)} judged"
                           for item, labels in product.ITEMS.items())
        return [*said, f"  no {PRODUCT}: the run evidences no AI-conformance item ({mapped})"]
    (out / product.EVIDENCE_DIR).mkdir(exist_ok=True)
    for item in shown:
        page = out / product.EVIDENCE_DIR / f"{item.item.id}.md"
        page.write_text(product.evidence_page(version, item, urls))
    (out / PRODUCT).write_text(product.fragment(version, shown, urls))
    said.append(f"  {PRODUCT} for Kubernetes {version}, with {product.EVIDENCE_DIR}/:")
    said += [f"    {item.item.category}/{item.item.id} ({item.item.level}): "
             f"{item.status or 'not shown'}" for item in shown]
    if all((row.provider or "local") == "local" for row in rows):
        said.append("  note: judged on aftershock's embedded cluster, not a platform: a "
                    "submission's run is on the platform (--cluster=kind or existing)")
    return said
