"""A scenario's evidence, written into its report dir (every text through the Redactor) and
listed for attaching: the timeline (HTML and PNG), the witness, the fault log, the proxy log
excerpt, the implementation's logs, the audit excerpt for the witness's objects, and the
environment."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

import aftershock
from aftershock.checks.verdict import NOT_APPLICABLE, PASS, Verdict, describe
from aftershock.report import picture as picturing
from aftershock.report import plot
from aftershock.report.redact import Redactor
from aftershock.timeline.entry import AUDIT, Entry

EXCERPT_LINES = 200


@dataclass(frozen=True)
class Evidence:
    name: str  # shown in the report
    path: Path
    kind: str  # "text", "html", "png", "json"


def witness_entries(verdicts: list[Verdict]) -> list[Entry]:
    return [entry for verdict in verdicts if verdict.status not in (PASS, NOT_APPLICABLE)
            for entry in verdict.witness]


def witness_text(verdicts: list[Verdict]) -> str:
    failing = [v for v in verdicts if v.status not in (PASS, NOT_APPLICABLE)]
    return "\n\n".join(v.explain() for v in failing)


def audit_excerpt(entries: list[Entry], witness: list[Entry], origin: float) -> str:
    """What the apiserver's audit log says was done to the witness's objects."""
    keys = {entry.key for entry in witness}
    lines = [describe(entry, origin) for entry in entries
             if entry.kind == AUDIT and entry.key in keys]
    return "\n".join(lines[-EXCERPT_LINES:])


def fault_log(scenario: Any, origin: float) -> str:
    lines = []
    for fault in scenario.faults:
        end = f"+{fault.ended - origin:.3f}s" if fault.ended is not None else "(still active)"
        lines.append(f"+{fault.started - origin:.3f}s .. {end}  {fault.description}")
    return "\n".join(lines)


def _tail(path: Path, lines: int = EXCERPT_LINES) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


def environment(scenario: Any) -> dict[str, str]:
    info = scenario.cluster.info
    try:
        version = client.VersionApi(scenario.api).get_code().git_version
    except Exception as exc:  # the cluster may be what failed
        version = f"unknown ({type(exc).__name__})"
    profile = scenario.facts.get("profile")
    return {"provider": info.provider, "cluster": info.name, "kubernetes_version": version,
            "profile": getattr(profile, "name", "") or "(none)",
            "aftershock_version": aftershock.__version__}


class EvidenceWriter:
    def __init__(self, scenario: Any, redactor: Redactor):
        self.scenario, self.redactor = scenario, redactor
        self.dir = scenario.report_dir / "evidence"
        self.items: list[Evidence] = []

    def text(self, name: str, filename: str, content: str, kind: str = "text") -> None:
        if not content.strip():
            return
        path = self.dir / filename
        path.write_text(self.redactor.text(content))
        self.items.append(Evidence(name, path, kind))

    def write(self, title: str) -> list[Evidence]:
        scenario = self.scenario
        self.dir.mkdir(parents=True, exist_ok=True)
        entries = scenario.history()
        origin = min((e.mono for e in entries), default=0.0)
        witness = witness_entries(scenario.verdicts)
        explained = witness_text(scenario.verdicts)
        drawing = picturing.build(entries, witness)
        png = plot.write_png(drawing, self.dir / "timeline.png", title)
        self.items.append(Evidence("timeline (image)", png, "png"))  # first: what a reader opens
        self.text("witness", "witness.txt", explained)
        self.text("timeline", "timeline.html", plot.page(drawing, title, explained), "html")
        self.text("fault log", "faults.txt", fault_log(scenario, origin))
        self.text("audit excerpt (witness objects)", "audit.txt",
                  audit_excerpt(entries, witness, origin))
        self._logs()
        self.text("environment", "environment.json",
                  json.dumps(environment(scenario), indent=2), "json")
        return self.items

    def _logs(self) -> None:
        root = self.scenario.report_dir
        for log in sorted(root.glob("**/*proxy*.jsonl")):
            self.text(f"proxy log ({log.stem}, last {EXCERPT_LINES} lines)",
                      f"proxy-{log.stem}.txt", _tail(log))
        for log in sorted((root / "implementation").glob("*.log")):
            self.text(f"implementation log ({log.stem})", f"implementation-{log.stem}.txt",
                      _tail(log, 2000))
