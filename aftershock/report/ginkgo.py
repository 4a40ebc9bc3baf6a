"""A run's test cases as Ginkgo v2 writes a Kubernetes e2e run: ``junit_01.xml`` (Ginkgo's
JUnit report with Kubernetes' settings: no failure message attribute, no labels in names, no
timeline for passed or skipped specs) and ``e2e.log`` (its verbose console report). A property
judged in a scenario is a spec, ``[It] [aftershock] [DRA] D5 <scenario>``; each implementation on
a Kubernetes version is a suite.

A spec's state: PASS passed; VIOLATED (or an expected violation) failed; NOT APPLICABLE and a
scenario skipped for a concept or capability skipped, with the reason; UNKNOWN, not proven either
way, and a scenario stopped before its verdict aborted (a failure element counted among the
errors, as Ginkgo counts an aborted spec)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import PurePosixPath

from aftershock.report.conformance import FAILED, Case
from aftershock.report.matrix import ERROR, NOT_APPLICABLE, PASS, SKIPPED, UNKNOWN, UNRECORDED

SUITE = "aftershock conformance suite"
# The tag of each property family in a spec's name (Kubernetes writes [sig-node], [DRA], ...)
TAGS = {"R": "ReplicaGroup", "G": "GangTermination", "B": "GangScheduling", "S": "Storage",
        "N": "NodeRecords", "D": "DRA", "E": "Explore"}
PASSED, FAILED_STATE, SKIPPED_STATE, ABORTED = "passed", "failed", "skipped", "aborted"


def state(outcome: str) -> str:
    if outcome == PASS:
        return PASSED
    if outcome in FAILED:
        return FAILED_STATE
    if outcome in (NOT_APPLICABLE, SKIPPED):
        return SKIPPED_STATE
    assert outcome in (UNKNOWN, ERROR), outcome
    return ABORTED


def tag(label: str) -> str:
    match = re.match(r"([A-Z]+)\d+$", label)
    return TAGS.get(match[1], "Harness") if match else "Harness"


def spec_text(case: Case) -> str:
    """Its full text: the containers' and the leaf's, as Ginkgo joins them."""
    return f"[aftershock] [{tag(case.property)}] {case.property} {case.scenario}"


@dataclass
class Suite:
    implementation: str
    kubernetes: str
    cases: list[Case]

    @property
    def name(self) -> str:
        return f"{SUITE}: {self.implementation} on Kubernetes {self.kubernetes}"

    @property
    def path(self) -> str:
        """Where its specs live, as Ginkgo names a suite by its folder: the features' common
        folder."""
        parents = {str(PurePosixPath(c.feature).parent) for c in self.cases}
        if len(parents) == 1:
            return parents.pop()
        common = PurePosixPath(*_common([PurePosixPath(p).parts for p in parents]))
        return str(common) if common.parts else "."

    @property
    def seconds(self) -> float:
        """Its scenarios' time (each scenario once), else its specs'."""
        rows = {id(c.row): c.row.seconds for c in self.cases}
        if all(s is not None for s in rows.values()):
            return float(sum(rows.values()))  # type: ignore[arg-type]
        return sum(c.seconds for c in self.cases)

    def count(self, wanted: str) -> int:
        return sum(state(c.outcome) == wanted for c in self.cases)


def _common(parts: list[tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    for column in zip(*parts, strict=False):
        if len(set(column)) != 1:
            break
        out.append(column[0])
    return tuple(out)


def suites(found: list[Case]) -> list[Suite]:
    grouped: dict[tuple[str, str], list[Case]] = {}
    for case in found:
        key = (case.row.implementation, case.row.kubernetes or UNRECORDED)
        grouped.setdefault(key, []).append(case)
    return [Suite(implementation, kubernetes, sorted(cases, key=spec_text))
            for (implementation, kubernetes), cases in grouped.items()]


def go_float(value: float) -> str:
    """A float as Go's encoding/xml writes one (strconv 'g', shortest): 17.5, 0, 9.3469e-05."""
    text = repr(float(round(value, 9)))
    if text.endswith(".0"):
        text = text[:-2]
    return text


def _escape(text: str) -> str:
    """As Go's xml.EscapeText: quotes, tabs and newlines escaped too."""
    for char, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&#34;"),
                         ("'", "&#39;"), ("\t", "&#x9;"), ("\n", "&#xA;"), ("\r", "&#xD;")):
        text = text.replace(char, entity)
    return text


def _open(depth: int, name: str, attributes: list[tuple[str, str]]) -> str:
    """An element's start tag on its own line, as Go's encoder indents (prefix "  ", indent
    "    ")."""
    attrs = "".join(f' {key}="{_escape(value)}"' for key, value in attributes)
    return f"  {'    ' * depth}<{name}{attrs}>"


def _close(depth: int, name: str) -> str:
    return f"  {'    ' * depth}</{name}>"


def _element(depth: int, name: str, attributes: list[tuple[str, str]], body: str = "") -> str:
    """One element on one line (Go's encoder never self-closes an empty one)."""
    return f"{_open(depth, name, attributes)}{body}</{name}>"


def failure_text(case: Case) -> str:
    words = {FAILED_STATE: "[FAILED]", ABORTED: "[ABORTED]"}
    details = "\n\n".join(case.details) or case.reason
    return f"{words[state(case.outcome)]} {details}\nIn [It] at: {case.feature}\n"


def _suite_properties(suite: Suite) -> list[tuple[str, str]]:
    succeeded = all(state(c.outcome) in (PASSED, SKIPPED_STATE) for c in suite.cases)
    return [("SuiteSucceeded", str(succeeded).lower()), ("SuiteHasProgrammaticFocus", "false"),
            ("SpecialSuiteFailureReason", ""), ("SuiteLabels", "[]"), ("RandomSeed", "0"),
            ("RandomizeAllSpecs", "false"), ("LabelFilter", ""), ("FocusStrings", ""),
            ("SkipStrings", ""), ("FocusFiles", ""), ("SkipFiles", ""),
            ("FailOnPending", "false"), ("FailOnEmpty", "false"), ("FailFast", "false"),
            ("FlakeAttempts", "0"), ("DryRun", "false"), ("ParallelTotal", "1"),
            ("OutputInterceptorMode", "")]


def _testcase(case: Case) -> list[str]:
    attributes = [("name", f"[It] {spec_text(case)}"),
                  ("classname", SUITE), ("status", state(case.outcome)),
                  ("time", go_float(case.seconds))]
    spec_state = state(case.outcome)
    if spec_state == PASSED:
        return [_element(2, "testcase", attributes)]
    if spec_state == SKIPPED_STATE:
        child = _element(3, "skipped", [("message", f"skipped - {case.reason}")])
    else:
        child = _element(3, "failure", [("message", ""), ("type", spec_state)],
                         _escape(failure_text(case)))
    return [_open(2, "testcase", attributes), child, _close(2, "testcase")]


def junit(found: list[Case], started: float | None = None) -> str:
    """junit_01.xml: Ginkgo's JUnit report, a suite per implementation on a version."""
    groups = suites(found)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started or time.time()))
    tests = sum(len(s.cases) for s in groups)
    skipped = sum(s.count(SKIPPED_STATE) for s in groups)
    failures = sum(s.count(FAILED_STATE) for s in groups)
    errors = sum(s.count(ABORTED) for s in groups)
    total = sum(s.seconds for s in groups)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             _open(0, "testsuites", [
                 ("tests", str(tests)), ("disabled", str(skipped)), ("errors", str(errors)),
                 ("failures", str(failures)), ("time", go_float(total))])]
    for suite in groups:
        lines.append(_open(1, "testsuite", [
            ("name", suite.name), ("package", suite.path), ("tests", str(len(suite.cases))),
            ("disabled", "0"), ("skipped", str(suite.count(SKIPPED_STATE))),
            ("errors", str(suite.count(ABORTED))), ("failures", str(suite.count(FAILED_STATE))),
            ("time", go_float(suite.seconds)), ("timestamp", stamp)]))
        lines.append(_open(2, "properties", []))
        lines += [_element(3, "property", [("name", k), ("value", v)])
                  for k, v in _suite_properties(suite)]
        lines.append(_close(2, "properties"))
        for case in suite.cases:
            lines += _testcase(case)
        lines.append(_close(1, "testsuite"))
    lines.append(_close(0, "testsuites"))
    return "\n".join(lines) + "\n"


DELIMITER = "-" * 30


def _block(case: Case) -> list[str]:
    spec_state = state(case.outcome)
    lines = [DELIMITER, spec_text(case), case.feature]
    lines += [f"  {line}".rstrip() for detail in (case.details or [case.reason])
              for line in detail.splitlines()]
    seconds = f"[{case.seconds:.3f} seconds]"
    if spec_state == PASSED:
        lines.append(f"\u2022 {seconds}")
    elif spec_state == SKIPPED_STATE:
        lines.append(f"S [SKIPPED] {seconds}")
    else:
        word = "[FAILED]" if spec_state == FAILED_STATE else "[ABORTED]"
        lines += [f"\u2022 {word} {seconds}", f"{spec_text(case)}", case.feature, "",
                  f"  {word} {case.reason}", f"  In [It] at: {case.feature}"]
    return lines


def e2e_log(found: list[Case]) -> str:
    """e2e.log: Ginkgo's verbose console report of each suite, then the ginkgo CLI's last
    lines, as a conformance run's log ends."""
    lines: list[str] = []
    groups = suites(found)
    for suite in groups:
        title = f"Running Suite: {suite.name} - {suite.path}"
        lines += [title, "=" * len(title), "Random Seed: 0", "",
                  f"kube-apiserver version: {suite.kubernetes}",
                  f"Will run {len(suite.cases)} of {len(suite.cases)} specs"]
        for case in suite.cases:
            lines += _block(case)
        lines.append(DELIMITER)
        failed = [c for c in suite.cases if state(c.outcome) in (FAILED_STATE, ABORTED)]
        if failed:
            plural = "Failures" if len(failed) > 1 else "Failure"
            lines += ["", f"Summarizing {len(failed)} {plural}:"]
            for case in failed:
                word = "[FAIL]" if state(case.outcome) == FAILED_STATE else "[ABORTED]"
                lines += [f"  {word} {spec_text(case)}", f"  {case.feature}"]
        ran = len(suite.cases) - suite.count(SKIPPED_STATE)
        lines += ["", f"Ran {ran} of {len(suite.cases)} Specs in {suite.seconds:.3f} seconds",
                  f"{'FAIL!' if failed else 'SUCCESS!'} -- {suite.count(PASSED)} Passed | "
                  f"{len(failed)} Failed | 0 Pending | {suite.count(SKIPPED_STATE)} Skipped",
                  "FAIL" if failed else "PASS", ""]
    failed_any = any(state(c.outcome) in (FAILED_STATE, ABORTED) for c in found)
    total = sum(s.seconds for s in groups)
    plural = "suite" if len(groups) == 1 else "suites"
    lines += [f"Ginkgo ran {len(groups)} {plural} in {_duration(total)}",
              "Test Suite Failed" if failed_any else "Test Suite Passed"]
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    """As Go prints a time.Duration: 1h46m43.8s, 5m6.2s, 12.5s."""
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    if minutes or hours:
        text = f"{int(minutes)}m{text}"
    if hours:
        text = f"{int(hours)}h{text}"
    return text
