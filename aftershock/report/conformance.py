"""The outputs a conformance submission takes, from a run's matrix rows and each scenario's
saved judgements: ``conformance/junit.xml`` (one test case per property per scenario),
``conformance/e2e.log`` (a plain log, as `go test -v` and the e2e suites write one) and
``conformance/results.json`` (per requirement: its id, status and the evidence behind it; the
shape is ``results.schema.json`` beside this module).

A property's status in a scenario is its matrix outcome: a violation's witness is the failure
text, an expected one's too (the implementation failed the property; the failure's type says it
was caught); NOT APPLICABLE (a KEP's or the profile's word) and a scenario skipped for a concept or
capability the run lacks are skipped test cases with their reason; UNKNOWN (not proven either
way) and a set-up or harness failure are errors, never a skip."""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import aftershock
from aftershock.properties import PROPERTIES
from aftershock.report import matrix
from aftershock.report.matrix import (
    CAUGHT,
    ERROR,
    MISSED,
    NOT_APPLICABLE,
    PASS,
    RANK,
    SKIPPED,
    UNKNOWN,
    VIOLATED,
    Row,
)

DIR = "conformance"
JUNIT, LOG, RESULTS = "junit.xml", "e2e.log", "results.json"
SCHEMA = Path(__file__).with_name("results.schema.json")
VERDICTS = "verdicts.txt"
JUDGEMENTS = "judgements.jsonl"  # each judgement, its ids and its step's own time
# verdicts.txt's blocks begin at a verdict line: a witness may hold blank lines
BLOCK = re.compile(r"\n\n(?=[^\n:]+: (?:PASS|VIOLATED|UNKNOWN|NOT APPLICABLE): )")
# A matrix outcome as a test's result, of the implementation: one that broke a property fails
# it, whether or not the scenario expected it to (a caught expected violation is the suite
# working, and the implementation failing: its failure's type says "caught")
FAILED = {VIOLATED, MISSED, CAUGHT}
RESULT = {PASS: "PASS", CAUGHT: "FAIL", VIOLATED: "FAIL", MISSED: "FAIL", UNKNOWN: "ERROR",
          SKIPPED: "SKIP", NOT_APPLICABLE: "SKIP", ERROR: "ERROR"}


@dataclass
class Case:
    """One property judged in one scenario, by one implementation on one Kubernetes."""

    property: str
    row: Row
    outcome: str
    details: list[str] = field(default_factory=list)  # each judgement's verdict and witness
    own: float | None = None  # the time of the steps that judged it (None: not saved)

    @property
    def seconds(self) -> float:
        """The property's own time: the steps that judged it, their waits included; a run
        saved before judgements kept their time gives the scenario's."""
        return self.own if self.own is not None else (self.row.seconds or 0.0)

    @property
    def scenario(self) -> str:
        """Its title, with pytest's parameters (profile, outline example) where it has any."""
        test = self.row.scenario.split("::")[-1]
        if not self.row.title:
            return test
        return self.row.title + (f" [{test.split('[', 1)[1]}" if "[" in test else "")

    @property
    def feature(self) -> str:
        return self.row.scenario.split("::")[0]

    @property
    def name(self) -> str:
        return f"{self.property} {self.scenario}"

    @property
    def evidence(self) -> str | None:
        return f"{self.row.dir}/{VERDICTS}" if self.row.dir else None

    @property
    def reason(self) -> str:
        """One line: why it is what it is (the first judgement of this property that decided
        the outcome, or the scenario's error)."""
        if self.outcome == ERROR:
            return self.row.error or "the scenario stopped before it judged this property"
        if self.outcome == SKIPPED:
            return "skipped: the implementation lacks a concept or the cluster a capability"
        if self.outcome == MISSED:
            return (f"{self.property} was expected to be violated and was not: the suite did "
                    "not show the bug")
        if self.details:
            return self.details[0].splitlines()[0]
        return f"{self.property}: {self.outcome} (the scenario's judgements were not saved)"


def _blocks(directory: Path) -> dict[str, list[str]]:
    """verdicts.txt's blocks (a verdict line, then its witness), by the labels they judge."""
    path = directory / VERDICTS
    found: dict[str, list[str]] = {}
    if not path.is_file():
        return found
    for block in BLOCK.split(path.read_text()):
        block = block.strip("\n")
        head = block.split(": ", 1)[0]
        for label in matrix.labels(head):
            found.setdefault(label, []).append(block)
    return found


WORD = {PASS: "PASS", VIOLATED: "VIOLATED", UNKNOWN: "UNKNOWN", NOT_APPLICABLE: "NOT APPLICABLE"}


def _details(blocks: list[str], outcome: str) -> list[str]:
    """The blocks that decided ``outcome`` first (a violation's witness before the passes)."""
    wanted = {VIOLATED: VIOLATED, CAUGHT: VIOLATED, MISSED: PASS, UNKNOWN: UNKNOWN,
              NOT_APPLICABLE: NOT_APPLICABLE}.get(outcome, PASS)
    word = f": {WORD[wanted]}"
    first = [block for block in blocks if word in block.split("\n", 1)[0]]
    return first + [block for block in blocks if block not in first]


def _own_times(directory: Path) -> dict[str, float]:
    """Each property's time in a scenario: the sum of the judging steps' own times
    (judgements.jsonl's ``seconds``), for the labels every saved judgement names."""
    path = directory / JUDGEMENTS
    if not path.is_file():
        return {}
    times: dict[str, float] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line) if line.strip() else {}
        if "seconds" not in record:
            return {}  # saved before judgements kept their time
        for label in record.get("ids") or ():
            times[label] = times.get(label, 0.0) + float(record["seconds"])
    return times


def cases(run_dir: Path, rows: Iterable[Row] | None = None) -> list[Case]:
    found = []
    for row in matrix.load(run_dir) if rows is None else rows:
        blocks = _blocks(run_dir / row.dir) if row.dir else {}
        times = _own_times(run_dir / row.dir) if row.dir else {}
        for label, outcome in sorted(row.outcomes.items(), key=lambda i: matrix._natural(i[0])):
            found.append(Case(label, row, outcome, _details(blocks.get(label, []), outcome),
                              times.get(label)))
    return found


def _suite_name(row: Row) -> str:
    return f"{row.implementation} on Kubernetes {row.kubernetes or matrix.UNRECORDED}"


def junit(found: list[Case]) -> ET.Element:
    """JUnit XML as Jenkins, GitLab and the e2e suites read it: a suite per implementation on
    one Kubernetes version, a test case per property per scenario."""
    top = ET.Element("testsuites", name="aftershock conformance")
    suites: dict[str, ET.Element] = {}
    for case in found:
        name = _suite_name(case.row)
        if name not in suites:
            suites[name] = ET.SubElement(top, "testsuite", name=name)
        element = ET.SubElement(suites[name], "testcase", classname=case.feature,
                                name=case.name, time=f"{case.seconds:.3f}")
        text = "\n\n".join(case.details)
        if case.outcome in FAILED:
            ET.SubElement(element, "failure", message=case.reason[:1000],
                          type=case.outcome).text = text
        elif case.outcome in (ERROR, UNKNOWN):  # not judged, or not proven either way
            ET.SubElement(element, "error", message=case.reason[:1000],
                          type=case.outcome).text = text
        elif case.outcome in (NOT_APPLICABLE, SKIPPED):
            ET.SubElement(element, "skipped", message=case.reason[:1000]).text = text
        elif text:
            ET.SubElement(element, "system-out").text = text
    for suite in top:
        outcomes = [c.find("failure") is not None for c in suite]
        suite.set("tests", str(len(suite)))
        suite.set("failures", str(sum(outcomes)))
        suite.set("errors", str(sum(c.find("error") is not None for c in suite)))
        suite.set("skipped", str(sum(c.find("skipped") is not None for c in suite)))
        suite.set("time", f"{sum(float(c.get('time', 0)) for c in suite):.3f}")
    for key in ("tests", "failures", "errors", "skipped"):
        top.set(key, str(sum(int(suite.get(key)) for suite in top)))
    return top


def e2e_log(found: list[Case]) -> str:
    """A plain log, one block per test case: `=== RUN`, each judgement with its witness, then
    `--- PASS|FAIL|SKIP|ERROR` with the property's own time, as `go test -v` writes."""
    lines = [f"aftershock {aftershock.__version__} conformance run, "
             f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}"]
    for case in found:
        test = f"{case.row.implementation}/{case.feature}/{case.name}"
        lines.append(f"=== RUN   {test}")
        lines.append(f"    kubernetes {case.row.kubernetes or matrix.UNRECORDED}, "
                     f"evidence {case.evidence or '-'}")
        for detail in case.details or [case.reason]:
            lines += [f"    {line}" for line in detail.splitlines()]
        lines.append(f"--- {RESULT[case.outcome]}: {test} ({case.seconds:.2f}s): "
                     f"{case.outcome}")
    count = {word: sum(RESULT[c.outcome] == word for c in found)
             for word in ("PASS", "FAIL", "SKIP", "ERROR")}
    lines.append(f"{len(found)} test cases: {count['PASS']} passed, {count['FAIL']} failed, "
                 f"{count['SKIP']} skipped (not applicable, or not run here), "
                 f"{count['ERROR']} errors (unknown, or not judged)")
    lines.append("FAIL" if count["FAIL"] or count["ERROR"] else "PASS")
    return "\n".join(lines) + "\n"


def results(found: list[Case]) -> dict:
    """Per requirement (a property, for one implementation on one Kubernetes version): its id,
    statement, status (the worst over its scenarios) and evidence (each scenario's verdicts,
    relative to the run dir), with every scenario's own status and reason."""
    grouped: dict[tuple[str, str, str], list[Case]] = {}
    for case in found:
        key = (case.row.implementation, case.row.kubernetes or matrix.UNRECORDED, case.property)
        grouped.setdefault(key, []).append(case)
    entries = []
    for (implementation, kubernetes, label), group in sorted(
            grouped.items(), key=lambda i: (i[0][0], i[0][1], matrix._natural(i[0][2]))):
        status = max((c.outcome for c in group), key=lambda o: RANK[o])
        known = PROPERTIES.get(label)
        entries.append({
            "id": label,
            "description": known.statement if known else "",
            "implementation": implementation,
            "kubernetesVersion": kubernetes,
            "status": status,
            "evidence": [c.evidence for c in group if c.evidence],
            "notes": next((c.reason for c in group if c.outcome == status), ""),
            "scenarios": [{"feature": c.feature, "name": c.scenario, "status": c.outcome,
                           "reason": c.reason, "evidence": c.evidence,
                           "seconds": round(c.seconds, 3)} for c in group],
        })
    return {"apiVersion": "aftershock.io/v1", "kind": "ConformanceResults",
            "metadata": {"generator": f"aftershock {aftershock.__version__}",
                         "generatedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "results": entries}


def write(run_dir: Path, rows: Iterable[Row] | None = None) -> list[Path]:
    """The three files under ``run_dir/conformance/``; none when nothing was judged."""
    found = cases(run_dir, rows)
    if not found:
        return []
    out = run_dir / DIR
    out.mkdir(exist_ok=True)
    tree = ET.ElementTree(junit(found))
    ET.indent(tree)
    tree.write(out / JUNIT, encoding="utf-8", xml_declaration=True)
    (out / LOG).write_text(e2e_log(found))
    (out / RESULTS).write_text(json.dumps(results(found), indent=2) + "\n")
    return [out / JUNIT, out / LOG, out / RESULTS]
