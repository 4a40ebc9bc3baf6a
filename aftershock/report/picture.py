"""What a timeline plot shows, computed from the recorded history alone: one lane per pod
(grouped by the node it ran on) coloured by phase, faults as shaded spans, condition
transitions and the harness's marks as ticks, and a violation's witness highlighted."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from aftershock.checks.verdict import describe
from aftershock.timeline.entry import BEHIND, MARK, WATCH, Entry

UNSCHEDULED, PENDING, RUNNING, TERMINATING, DONE = (
    "Unscheduled", "Pending", "Running", "Terminating", "Succeeded/Failed")
COLOURS = {UNSCHEDULED: "#bdbdbd", PENDING: "#ffe082", RUNNING: "#66bb6a",
           TERMINATING: "#ef6c00", DONE: "#90a4ae"}
FAULT_COLOUR = "#e57373"
WITNESS_COLOUR = "#c62828"


@dataclass(frozen=True)
class Segment:
    lane: int
    state: str
    start: float  # seconds from the picture's origin
    end: float


@dataclass(frozen=True)
class Span:
    label: str
    start: float
    end: float


@dataclass(frozen=True)
class Tick:
    at: float
    label: str
    witness: bool = False


@dataclass
class Picture:
    duration: float
    lanes: list[tuple[str, str]] = field(default_factory=list)  # (node, pod ref)
    segments: list[Segment] = field(default_factory=list)
    faults: list[Span] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)


def pod_state(obj: dict[str, Any]) -> str:
    meta, spec, status = (obj.get(k) or {} for k in ("metadata", "spec", "status"))
    phase = status.get("phase")
    if phase in ("Succeeded", "Failed"):
        return DONE
    if meta.get("deletionTimestamp"):
        return TERMINATING
    if not spec.get("nodeName"):
        return UNSCHEDULED
    return RUNNING if phase == "Running" else PENDING


def _conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c.get("type", "?"): c.get("status", "?")
            for c in (obj.get("status") or {}).get("conditions") or () if isinstance(c, dict)}


def _pods(entries: list[Entry], origin: float, end: float, picture: Picture) -> None:
    states: dict[str, list[tuple[float, str | None]]] = {}
    nodes: dict[str, str] = {}
    for entry in entries:
        if entry.kind != WATCH or entry.resource != "pods":
            continue
        ref = entry.ref
        state = None if entry.type == "DELETED" else pod_state(entry.object or {})
        node = ((entry.object or {}).get("spec") or {}).get("nodeName")
        if node:
            nodes[ref] = node
        history = states.setdefault(ref, [])
        if not history or history[-1][1] != state:
            history.append((entry.mono - origin, state))
    order = sorted(states, key=lambda ref: (nodes.get(ref, "~unscheduled"), states[ref][0][0]))
    for lane, ref in enumerate(order):
        picture.lanes.append((nodes.get(ref, "unscheduled"), ref))
        history = states[ref]
        for (start, state), (stop, _) in zip(history, [*history[1:], (end - origin, None)],
                                             strict=True):
            if state is not None and stop > start:
                picture.segments.append(Segment(lane, state, start, stop))


def _transitions(entries: list[Entry], origin: float, picture: Picture) -> None:
    """Condition changes of every non-pod object (node Ready, a gang's breach), and marks."""
    seen: dict[tuple[str, str, str], dict[str, str]] = {}
    for entry in entries:
        if entry.kind == MARK and not (entry.extra or {}).get("fault") and \
                BEHIND not in (entry.extra or {}):
            picture.ticks.append(Tick(entry.mono - origin, entry.detail))
        if entry.kind != WATCH or entry.resource in ("pods", "events", "leases"):
            continue
        now = _conditions(entry.object or {}) if entry.type != "DELETED" else {}
        before = seen.get(entry.key)
        seen[entry.key] = now
        if before is None:
            continue
        for kind, status in now.items():
            if before.get(kind) != status:
                picture.ticks.append(Tick(entry.mono - origin, f"{entry.ref} {kind}={status}"))


def _faults(entries: list[Entry], origin: float, end: float, picture: Picture) -> None:
    open_: dict[str, float] = {}
    for entry in entries:
        fault = (entry.extra or {}).get("fault") if entry.kind == MARK else None
        if not fault:
            continue
        if entry.detail.startswith("fault start"):
            open_[fault] = entry.mono - origin
        elif fault in open_:
            picture.faults.append(Span(fault, open_.pop(fault), entry.mono - origin))
    picture.faults += [Span(label, start, end - origin) for label, start in open_.items()]


def build(entries: Iterable[Entry], witness: Iterable[Entry] = ()) -> Picture:
    entries = sorted(entries, key=lambda e: e.mono)
    if not entries:
        return Picture(duration=0.0)
    origin, end = entries[0].mono, entries[-1].mono
    picture = Picture(duration=max(end - origin, 0.001))
    _pods(entries, origin, end, picture)
    _faults(entries, origin, end, picture)
    _transitions(entries, origin, picture)
    for entry in witness:
        picture.ticks.append(Tick(entry.mono - origin, describe(entry, origin).strip(), True))
    return picture
