"""The ``Scenario`` every step acts on, and the one step registry both runners dispatch from.

A step is a plain function of a Scenario plus parsed parameters, declared once with
``@given/@when/@then`` below. pytest-bdd (``fixtures/bdd.py``) and the notebook magic read the
same registry, so one definition serves two runners.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aftershock.checks.verdict import PASS, VIOLATED, Verdict
from aftershock.errors import StepFailed
from aftershock.faults.base import Fault, FaultRecord
from aftershock.properties.base import Judgement
from aftershock.properties.context import Context, plain
from aftershock.providers.base import Capability, Cluster, MissingCapability
from aftershock.report.redact import Redactor
from aftershock.timeline.recorder import Recorder
from aftershock.timeline.store import Timeline

StepKind = Literal["given", "when", "then"]


@dataclass(frozen=True)
class StepDefinition:
    kind: StepKind
    pattern: str  # a `parse` format string: "a Deployment {name} with {replicas:d} replicas"
    func: Callable[..., Any]
    phrases: dict[str, str] = field(default_factory=dict)  # argument → "condition" | "event"
    check: str | None = None  # the check a Then step judges by (it may name property ids)

    @property
    def arguments(self) -> list[str]:
        return re.findall(r"{(\w+)(?::[^}]*)?}", self.pattern)

    @property
    def example(self) -> str:
        """The pattern with placeholders shown as <name>, for suggestions."""
        return re.sub(r"{(\w+)(?::[^}]*)?}", r"<\1>", self.pattern)


REGISTRY: list[StepDefinition] = []


def _name_type(text: str) -> str:
    return text


_name_type.pattern = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"  # an object name: no spaces


def _ordinal_type(text: str) -> int:
    return int(text[:-2])


_ordinal_type.pattern = r"[1-9][0-9]*(?:st|nd|rd|th)"  # 1st, 2nd, 3rd, 11th
EXTRA_TYPES = {"Name": _name_type, "Ordinal": _ordinal_type}


def _register(kind: StepKind, pattern: str, phrases: dict[str, str] | None,
              check: str | None = None):
    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(StepDefinition(kind, pattern, func, phrases or {}, check))
        return func

    return decorate


def given(pattern: str, phrases: dict[str, str] | None = None):
    return _register("given", pattern, phrases)


def when(pattern: str, phrases: dict[str, str] | None = None):
    return _register("when", pattern, phrases)


def then(pattern: str, phrases: dict[str, str] | None = None, check: str | None = None):
    """A Then step; ``check`` names the check it judges by, which lets it carry property ids
    ("… (R1)") that the registry accepts for that check."""
    return _register("then", pattern, phrases, check)


def _compiled(definition: StepDefinition):
    import parse

    return parse.compile(definition.pattern, extra_types=EXTRA_TYPES)


# A Then step may end with the property it judges, e.g. "... more than 3 live pods (R1)".
_ONE_LABEL = r"[A-Z][A-Za-z0-9_.:-]*"
LABEL = re.compile(rf"\s+\(({_ONE_LABEL}(?:,\s*{_ONE_LABEL})*)\)\s*$")  # "(R1)", "(N1, N5)"


def labels_of(property: str) -> set[str]:
    return {part.strip() for part in property.split(",")}


def label_ids(property: str) -> list[str]:
    """'G2, G3' → ['G2', 'G3'], in the order written."""
    return [part.strip() for part in property.split(",") if part.strip()]


def split_label(text: str) -> tuple[str, str | None]:
    found = LABEL.search(text)
    return (text[:found.start()], found.group(1)) if found else (text, None)


def step_problem(text: str, definition: StepDefinition, arguments: dict[str, Any]) -> str | None:
    """Why a step cannot run as written: a property it may not name, or a number beyond what
    this machine can hold or wait for."""
    from aftershock.limits import step_problem as too_big

    return label_problem(text, definition) or too_big(definition.func.__name__, arguments)


def label_problem(text: str, definition: StepDefinition) -> str | None:
    """Why the property ids a step's text ends with ("… (R1)") cannot be judged by it."""
    from aftershock.properties import problem

    label = split_label(text)[1]
    return None if label is None else problem(label_ids(label), definition.check)


def match_step(text: str) -> tuple[StepDefinition, dict[str, Any]] | None:
    """The definition whose whole pattern matches ``text``, with its parsed arguments."""
    text, _ = split_label(text)
    for definition in REGISTRY:
        found = _compiled(definition).parse(text)
        if found is not None:
            return definition, dict(found.named)
    return None


def closest_steps(text: str, count: int = 3) -> list[str]:
    examples = {definition.example: definition for definition in REGISTRY}
    return difflib.get_close_matches(text, list(examples), n=count, cutoff=0.3)


class PropertyViolated(StepFailed):
    """A judged property was violated (or could not be decided): the verdict is the evidence."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict
        super().__init__(verdict.explain())


@dataclass(repr=False)
class Scenario:
    """One scenario's world: the cluster, its namespace, what steps remembered, and cleanup."""

    cluster: Cluster
    api: Any  # kubernetes.client.ApiClient
    namespace: str
    name: str = "scenario"
    report_dir: Path | None = None
    timeline: Timeline = field(default_factory=Timeline)
    recorder: Recorder | None = None
    expected_violations: set[str] = field(default_factory=set)
    property_label: str | None = None  # set by the runner for a Then step ending in "(R1)"
    step: str | None = None  # the text of the step running now, set by the runner
    violations: list[Verdict] = field(default_factory=list)  # judged, not expected, went on
    verdicts: list[Verdict] = field(default_factory=list)
    judged: list[Verdict] = field(default_factory=list)  # of labelled steps: properties
    faults: list[FaultRecord] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)  # secrets seen; kept out of reports
    # Every judgement as plain data (check, parameters, how much history it saw): what
    # `aftershock judge` judges again, with the properties of its day.
    judgements: list[dict[str, Any]] = field(default_factory=list)
    _cleanups: list[tuple[str, Callable[[], None]]] = field(default_factory=list)
    _schedules: list[Callable[[], None]] = field(default_factory=list)

    def __repr__(self) -> str:  # shown as a step parameter in reports: short, nothing secret
        return f"Scenario(namespace/{self.namespace})"

    @property
    def now(self) -> float:
        """The recorder's clock."""
        return time.monotonic()

    def judge(self, judgement: Judgement) -> Verdict:
        """Judge through the property registry, for the properties the step names (or the
        check's own); record it; raise unless it held or is a violation this scenario expects."""
        from aftershock.properties import base as properties
        from aftershock.timeline.entry import AUDIT_SYNC

        ids = label_ids(self.property_label) if self.property_label else [judgement.check]
        wrong = properties.problem(ids, judgement.check)
        if wrong:
            raise StepFailed(wrong)
        if self.recorder is not None:  # every watch delivers what a list shows now, or a gap
            self.recorder.catch_up()
        if properties.CHECKS[judgement.check].audit:
            caught_up = self.recorder is not None and self.recorder.sync_audit()
            self.timeline.append(AUDIT_SYNC, detail="audit log read before a judgement",
                                 extra={"caught_up": caught_up})
        entries = self.timeline.entries
        params = plain(judgement.params)
        verdict = properties.judge(ids, Judgement(judgement.check, params), entries)
        self.judgements.append({"ids": ids, "check": judgement.check, "params": params,
                                "upto": len(entries), "step": self.step,
                                "status": verdict.status, "summary": verdict.summary})
        self.verdicts.append(verdict)
        if self.property_label:
            self.judged.append(verdict)
        if verdict.status == PASS:
            return verdict
        if verdict.status == VIOLATED and labels_of(verdict.property) & self.expected_violations:
            print(f"expected violation caught:\n{verdict.explain()}")
            return verdict
        raise PropertyViolated(verdict)

    def context(self) -> Context:
        """What the words of a step mean here, as plain data (saved with each judgement)."""
        return Context.of(self.namespace, self.facts.get("profile"), self.facts)

    def concept(self, name: str) -> dict[str, Any]:
        from aftershock.sut.concepts import profile_concept

        return profile_concept(self.facts.get("profile"), name)

    def caught(self) -> set[str]:
        return {label for v in self.verdicts if v.status == VIOLATED
                for label in labels_of(v.property)}

    def missed_expectations(self) -> list[str]:
        """Expected violations that did not happen: the scenario failed to prove its point."""
        return sorted(self.expected_violations - self.caught())

    def wait_until(self, holds, timeout: float):
        """Block until the recorded state makes ``holds`` true (event-driven, no polling)."""
        return self.timeline.wait_until(holds, timeout)

    def history(self) -> list:
        if self.recorder is not None:
            self.recorder.sync_audit()
        return self.timeline.entries

    def require(self, capability: Capability) -> None:
        if capability not in self.cluster.capabilities:
            raise MissingCapability(self.cluster.info.provider, capability)

    def observe(self, key: str, produce: Callable[[], Any]) -> Any:
        """Read something outside the timeline (a data probe's answer); ``key`` names it where
        the step saves it, so a saved run can be judged again from the same answer."""
        return produce()

    def remember(self, key: str, value: Any) -> Any:
        self.facts[key] = value
        return value

    def recall(self, key: str) -> Any:
        if key not in self.facts:
            known = ", ".join(sorted(self.facts)) or "nothing yet"
            raise StepFailed(f"no earlier step established '{key}' (known: {known})")
        return self.facts[key]

    def on_cleanup(self, label: str, undo: Callable[[], None]) -> None:
        """Register an undo; run in reverse order when the scenario ends, however it ends."""
        self._cleanups.append((label, undo))

    def inject(self, fault: Fault) -> FaultRecord:
        """Apply a fault now; it is reverted when the scenario ends, however it ends, or
        earlier with ``end_fault``. Start and end are marked on the timeline."""
        revert_label = f"revert {fault.description}"
        record, revert = self._arm(fault)
        self.on_cleanup(revert_label, revert)
        undo = getattr(fault, "undo", None)
        if undo is not None:  # recorded before it is applied: a kill right after is undone
            key = f"{self.namespace}: {fault.description} #{len(self.faults)}"
            self.remember_undo(key, undo)
            record.undo_key = key
        fault.apply()
        return record

    def remember_undo(self, key: str, action: dict) -> None:
        """What a killed run would leave on a cluster it does not own, recorded with that
        cluster (one it owns is removed whole), so that `cluster gc` undoes it."""
        remember = getattr(self.cluster, "remember_undo", None)
        if remember is not None:
            remember(key, action)

    def forget_undo(self, key: str) -> None:
        forget = getattr(self.cluster, "forget_undo", None)
        if forget is not None:
            forget(key)

    def _arm(self, fault: Fault) -> tuple[FaultRecord, Callable[[], None]]:
        """Record a fault's start and make its (idempotent) revert, kept on its own record."""
        record = FaultRecord(fault.description, self.timeline.mark(
            f"fault start: {fault.description}", fault=fault.description).mono)
        self.faults.append(record)

        def revert() -> None:
            if record.ended is None:
                record.ended = self.timeline.mark(f"fault end: {fault.description}",
                                                  fault=fault.description).mono
                fault.revert()
                if record.undo_key:
                    self.forget_undo(record.undo_key)

        record.revert = revert
        return record, revert

    def schedule(self, fault: Fault, start_after: float, duration: float) -> None:
        """Apply ``fault`` after ``start_after`` seconds for ``duration`` seconds, in the
        background; overlapping schedules are independent. The worker applies and reverts the
        fault itself, so a scenario that ends early waits for it rather than racing it."""
        cancelled = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            if cancelled.wait(start_after):
                return
            _, revert = self._arm(fault)
            try:
                fault.apply()
                cancelled.wait(duration)
            except BaseException as exc:  # reported when the scenario ends
                failure.append(exc)
            finally:
                try:
                    revert()
                except BaseException as exc:
                    failure.append(exc)

        worker = threading.Thread(target=run, daemon=True, name=f"schedule {fault.description}")

        def stop() -> None:
            cancelled.set()
            worker.join(timeout=120)
            if failure:
                raise failure.pop()

        self.on_cleanup(f"schedule of {fault.description}", stop)
        self._schedules.append(stop)
        worker.start()

    def revert_faults(self) -> list[str]:
        """End every fault now, the scheduled ones too (e.g. a notebook cell was interrupted);
        the scenario itself goes on. Returns what could not be reverted."""
        failures = []
        for stop in self._schedules:
            try:
                stop()
            except Exception as exc:
                failures.append(repr(exc))
        for record in list(self.faults):
            if record.ended is None and record.revert is not None:
                try:
                    record.revert()
                except Exception as exc:
                    failures.append(f"revert {record.description}: {exc!r}")
        return failures

    def active_faults(self) -> list[str]:
        return [record.description for record in self.faults if record.ended is None]

    def end_fault(self, description: str) -> None:
        """End the latest active fault with this description."""
        active = [r for r in self.faults if r.ended is None and r.revert is not None]
        mine = [r for r in active if r.description == description]
        if not mine:
            names = [r.description for r in active]
            raise StepFailed(f"no active fault '{description}' (active: {names or 'none'})")
        mine[-1].revert()

    def close(self) -> list[str]:
        """Run every undo (all of them, even if some fail); return the failures."""
        failures = []
        while self._cleanups:
            label, undo = self._cleanups.pop()
            try:
                undo()
            except Exception as exc:  # every undo must run; report the rest
                failures.append(f"{label}: {exc}")
        return failures


def namespace_for(name: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40].strip("-") or "scenario"
    return f"{slug}-{secrets.token_hex(3)}"


@contextlib.contextmanager
def suppress_not_found():
    from kubernetes.client.exceptions import ApiException

    try:
        yield
    except ApiException as exc:
        if exc.status != 404:
            raise
