"""A run's test cases as ``go test -json`` writes a test binary's run (the stream `go tool
test2json` makes, and the AI-conformance program's automated suite submits as results.json): a
package per implementation on a Kubernetes version, a test per property (``TestD5``), a subtest
per scenario it was judged in, with the faithful text lines (``=== RUN``, ``--- PASS: X
(1.20s)``) that readers which parse the output rather than the actions need. A subtest's
result comes before its parent's, the package's last.

PASS passes; VIOLATED fails; NOT APPLICABLE and a scenario skipped for a concept or capability
skip with the reason; UNKNOWN, not proven either way, and a scenario stopped before its verdict
fail (go test has no third outcome), their output saying which."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Iterator

from aftershock.report.conformance import Case
from aftershock.report.ginkgo import ABORTED, FAILED_STATE, PASSED, SKIPPED_STATE, state, suites
from aftershock.report.matrix import _natural

WORD = {PASSED: "PASS", FAILED_STATE: "FAIL", ABORTED: "FAIL", SKIPPED_STATE: "SKIP"}
ACTION = {"PASS": "pass", "FAIL": "fail", "SKIP": "skip"}


def package(implementation: str, kubernetes: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", implementation).strip("-")
    return f"aftershock/{slug}/{kubernetes}"


def test_name(text: str) -> str:
    """As the testing package rewrites a subtest's name: spaces become underscores, what is
    not printable is quoted."""
    out = []
    for char in text:
        if char.isspace():
            out.append("_")
        elif unicodedata.category(char)[0] in "CZ" and char != " ":
            out.append(json.dumps(char)[1:-1])
        else:
            out.append(char)
    return "".join(out)


def stamp(moment: float) -> str:
    """RFC 3339 with nanoseconds, trailing zeros cut, as Go's time.RFC3339Nano."""
    whole = int(moment)
    fraction = f"{moment - whole:.9f}"[1:].rstrip("0").rstrip(".")
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + fraction + "Z"


def _seconds(value: float) -> float | int:
    """As Go's JSON writes a float64: 0, 1.5."""
    return int(value) if value == int(value) else value


class Stream:
    def __init__(self, started: float):
        self.clock = started
        self.lines: list[str] = []

    def event(self, action: str, pkg: str, test: str | None = None,
              elapsed: float | None = None, output: str | None = None) -> None:
        record: dict = {"Time": stamp(self.clock), "Action": action, "Package": pkg}
        if test:
            record["Test"] = test
        if elapsed is not None:
            record["Elapsed"] = _seconds(elapsed)
        if output is not None:
            record["Output"] = output
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))

    def say(self, pkg: str, test: str | None, text: str) -> None:
        self.event("output", pkg, test, output=text)


def _log(case: Case) -> Iterator[str]:
    """The subtest's log, as t.Log writes one: its first line after the file, the rest indented
    further."""
    details = "\n\n".join(case.details) or case.reason
    first, *rest = details.splitlines() or [""]
    yield f"    {case.feature}: {first}\n"
    for line in rest:
        yield f"        {line}\n" if line else "\n"


def _unique(names: list[str]) -> list[str]:
    """Two subtests of one name get #01, #02, as the testing package numbers them."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"{name}#{count:02d}")
    return out


def stream(found: list[Case], started: float | None = None) -> str:
    out = Stream(started if started is not None else time.time())
    for suite in suites(found):
        pkg = package(suite.implementation, suite.kubernetes)
        out.event("start", pkg)
        by_label: dict[str, list[Case]] = {}
        for case in suite.cases:
            by_label.setdefault(case.property, []).append(case)
        results = []
        for label in sorted(by_label, key=_natural):
            results.append(_test(out, pkg, f"Test{test_name(label)}", by_label[label]))
        failed = "FAIL" in results
        out.say(pkg, None, "FAIL\n" if failed else "PASS\n")
        elapsed = sum(c.seconds for c in suite.cases)
        out.say(pkg, None, f"{'FAIL' if failed else 'ok  '}\t{pkg}\t{elapsed:.3f}s\n")
        out.event("fail" if failed else "pass", pkg, elapsed=round(elapsed, 3))
    return "\n".join(out.lines) + "\n"


def _test(out: Stream, pkg: str, parent: str, cases: list[Case]) -> str:
    """One property: its subtests, then its own result (FAIL if one failed, SKIP if all
    skipped)."""
    out.event("run", pkg, parent)
    out.say(pkg, parent, f"=== RUN   {parent}\n")
    words = []
    names = _unique([f"{parent}/{test_name(c.scenario)}" for c in cases])
    for name, case in zip(names, cases, strict=True):
        word = WORD[state(case.outcome)]
        out.event("run", pkg, name)
        out.say(pkg, name, f"=== RUN   {name}\n")
        for line in _log(case):
            out.say(pkg, name, line)
        if state(case.outcome) == ABORTED:
            out.say(pkg, name, f"    {case.feature}: {case.outcome}: not proven either way\n")
        out.clock += case.seconds
        out.say(pkg, name, f"--- {word}: {name} ({case.seconds:.2f}s)\n")
        out.event(ACTION[word], pkg, name, elapsed=round(case.seconds, 2))
        words.append(word)
    word = "FAIL" if "FAIL" in words else "SKIP" if set(words) == {"SKIP"} else "PASS"
    seconds = sum(c.seconds for c in cases)
    out.say(pkg, parent, f"--- {word}: {parent} ({seconds:.2f}s)\n")
    out.event(ACTION[word], pkg, parent, elapsed=round(seconds, 2))
    return word
