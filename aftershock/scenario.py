"""The ``Scenario`` every step acts on: the world of one scenario (its cluster, namespace,
recorder, faults and cleanups) and the one place it is judged.

The words of steps live a floor below, in ``aftershock.grammar``; ``given``, ``when``, ``then``
and ``StepFailed`` are also importable from here, as a project's ``steps/`` has always done.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock import properties
from aftershock.checks.verdict import NOT_APPLICABLE, PASS, VIOLATED, Verdict
from aftershock.concepts import profile_concept
from aftershock.errors import StepFailed
from aftershock.faults.base import Fault, FaultRecord
from aftershock.grammar import given, label_ids, labels_of, then, when
from aftershock.machine.capabilities import Capability, MissingCapability
from aftershock.properties import Judgement
from aftershock.properties.context import Context, plain
from aftershock.providers.base import Cluster
from aftershock.report.redact import Redactor
from aftershock.timeline.entry import AUDIT_SYNC, BEHIND
from aftershock.timeline.recorder import Recorder
from aftershock.timeline.store import Timeline

__all__ = ["PropertyViolated", "Scenario", "StepFailed", "given", "namespace_for", "then",
           "when"]

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
    # Each step's words (without its keyword) and when it began, in order: a scope's end
    begun: list[tuple[str, float]] = field(default_factory=list)
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
    # Judgements a step made for the scenario's end ("from now on ..."): its label, its words
    # and what makes the judgement then
    _promises: list[tuple[str | None, str | None, Callable[[], Judgement]]] = field(
        default_factory=list)

    def __repr__(self) -> str:  # shown as a step parameter in reports: short, nothing secret
        return f"Scenario(namespace/{self.namespace})"

    @property
    def now(self) -> float:
        """The recorder's clock."""
        return time.monotonic()

    def judge(self, judgement: Judgement) -> Verdict:
        """Judge through the property registry, for the properties the step names (or the
        check's own); record it; raise unless it held or is a violation this scenario expects."""
        ids = label_ids(self.property_label) if self.property_label else [judgement.check]
        wrong = properties.problem(ids, judgement.check)
        if wrong:
            raise StepFailed(wrong)
        behind: list[str] = []
        if self.recorder is not None:  # every watch delivers what a list shows now, or a gap
            behind = self.recorder.catch_up()
        audited = self.recorder is not None and self.recorder.has_audit
        if audited or properties.CHECKS[judgement.check].audit:
            # read to now, the audit log dates every change by the request that made it
            caught_up = audited and self.recorder.sync_audit()
            self.timeline.append(AUDIT_SYNC, detail="audit log read before a judgement",
                                 extra={"caught_up": caught_up, BEHIND: behind})
        else:  # the record judged ends with a moment of the recorder's own, not an arrival
            self.timeline.mark("caught up before a judgement", **{BEHIND: behind})
        entries = self.timeline.entries
        params = plain(judgement.params)
        because = self._not_applicable(ids)
        if because:
            params[properties.NOT_APPLICABLE_BECAUSE] = because
        verdict = properties.judge(ids, Judgement(judgement.check, params), entries)
        began = self.begun[-1][1] if self.begun else self.now
        self.judgements.append({"ids": ids, "check": judgement.check, "params": params,
                                "upto": len(entries), "step": self.step,
                                "status": verdict.status, "summary": verdict.summary,
                                # the step's own time, its wait included: the property's time
                                "seconds": round(max(0.0, self.now - began), 3)})
        self.verdicts.append(verdict)
        if self.property_label:
            self.judged.append(verdict)
        if verdict.status in (PASS, NOT_APPLICABLE):
            return verdict
        if verdict.status == VIOLATED and labels_of(verdict.property) & self.expected_violations:
            print(f"expected violation caught:\n{verdict.explain()}")
            return verdict
        raise PropertyViolated(verdict)

    def _not_applicable(self, ids: list[str]) -> str | None:
        """Why the profile says these properties do not apply to its implementation, when it
        says so of every one of them."""
        profile = self.facts.get("profile")
        declared = getattr(profile, "not_applicable", None) or {}
        if not ids or not all(id in declared for id in ids):
            return None
        reasons = "; ".join(dict.fromkeys(declared[id] for id in ids))
        return f"{', '.join(ids)} does not apply to {profile.name} (its profile: {reasons})"

    def implementation_identity(self) -> str:
        """The username the audit log records for the implementation under test: its own
        service account when the harness started it, else the one its profile names (a
        built-in controller)."""
        if "implementation" not in self.facts:
            raise StepFailed("no earlier step started the implementation under test")
        implementation = self.facts["implementation"]
        if implementation is not None:
            return implementation.actor
        actor = self.facts["profile"].actor
        if actor is None:
            raise StepFailed(f"profile {self.facts['profile'].name} names no actor")
        return actor

    def begin_step(self, keyword: str, text: str) -> None:
        """The step about to run (its words are what each judgement records)."""
        self.step = f"{keyword} {text}"
        self.begun.append((text, self.now))

    def promise(self, judgement: Callable[[], Judgement]) -> None:
        """Judge at the scenario's end, after its last step, as the step running now (its
        label, its words): a step that speaks of the rest of the scenario ("from now on")."""
        self._promises.append((self.property_label, self.step, judgement))

    def keep_promises(self) -> list[tuple[str | None, Verdict]]:
        """Judge what steps promised for the end: (each step's words, its verdict). A labelled
        violation goes on with the others (``violations``), as a labelled step's does; an
        unlabelled one raises."""
        verdicts: list[tuple[str | None, Verdict]] = []
        while self._promises:
            label, step, make = self._promises.pop(0)
            self.property_label, self.step = label, step
            try:
                verdicts.append((step, self.judge(make())))
            except PropertyViolated as exc:
                verdicts.append((step, exc.verdict))
                if label is None:
                    raise
                self.violations.append(exc.verdict)
            finally:
                self.property_label = None
        return verdicts

    @property
    def promised(self) -> int:
        return len(self._promises)

    def context(self) -> Context:
        """What the words of a step mean here, as plain data (saved with each judgement)."""
        return Context.of(self.namespace, self.facts.get("profile"), self.facts)

    def concept(self, name: str) -> dict[str, Any]:
        return profile_concept(self.facts.get("profile"), name)

    def caught(self) -> set[str]:
        return {label for v in self.verdicts if v.status == VIOLATED
                for label in labels_of(v.property)}

    def missed_expectations(self) -> list[str]:
        """Expected violations that did not happen: the scenario failed to prove its point."""
        return sorted(self.expected_violations - self.caught())

    def wait_until(self, holds, timeout: float):
        """Block until the recorded state makes ``holds`` true (woken by each recorded event,
        no polling). When it holds, the record is caught up with the cluster and asked again:
        the recorder may not yet have been told of a change already made (the deletion a step
        just asked for), and a wait that ended on a state already over would leave the
        judgement after it, which catches up first, a stretch that had not begun."""
        deadline = time.monotonic() + timeout
        while True:
            held, entry = self.timeline.wait_until(holds, max(0.0, deadline - time.monotonic()))
            if not held or self.recorder is None:
                return held, entry
            self.recorder.catch_up()
            held, entry = self.timeline.wait_until(holds, 0.0)
            if held or time.monotonic() >= deadline:
                return held, entry

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

    def set_up(self, change: Fault) -> None:
        """Apply a change the scenario needs to start from (a node's label), not a fault:
        unmarked on the timeline, put back when the scenario ends, however it ends, and by
        `cluster gc` on a reused cluster if the run was killed (its ``undo``, as a fault's)."""
        key = f"{self.namespace}: {change.description}"
        undo = getattr(change, "undo", None)
        if undo is not None:  # recorded before it is applied: a kill right after is undone
            self.remember_undo(key, undo)

        def put_back() -> None:
            change.revert()
            if undo is not None:
                self.forget_undo(key)
        self.on_cleanup(f"put back {change.description}", put_back)
        change.apply()

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
