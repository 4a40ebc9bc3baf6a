"""Properties about when things happen: eventually, stays_for, happened_before,
no_earlier_than. Times are the recorder's clock (Entry.mono)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.timeline.entry import GAP_START, WATCH, Entry
from aftershock.timeline.state import State, replay


@dataclass(frozen=True)
class Event:
    """Something that happens at an entry: ``occurs(entry, state_after_entry)``."""

    description: str
    occurs: Callable[[Entry, State], bool]

    def scan(self, entries: Iterable[Entry]) -> Iterator[Entry]:
        for entry, state in replay(entries):
            if self.occurs(entry, state):
                yield entry


@dataclass(frozen=True)
class Transition(Event):
    """The moments a state condition turns from false to true (true at the start counts)."""

    def scan(self, entries: Iterable[Entry]) -> Iterator[Entry]:
        before = False
        for entry, state in replay(entries):
            now = self.occurs(entry, state)
            if now and not before:
                yield entry
            before = now


def became_true(holds: Callable[[State], bool], description: str) -> Event:
    return Transition(description, lambda _entry, state: holds(state))


def first(entries: Iterable[Entry], event: Event) -> Entry | None:
    return next(event.scan(entries), None)


def occurrences(entries: Iterable[Entry], event: Event) -> list[Entry]:
    return list(event.scan(entries))


def _has_gap(entries: list[Entry], start: float, end: float) -> bool:
    return any(e.kind == GAP_START and start <= e.mono <= end for e in entries)


def eventually(entries: Iterable[Entry], holds: Callable[[State], bool], description: str,
               start: float, within: float, now: float, name: str = "eventually",
               resources: Iterable[str] | None = None) -> Verdict:
    """``holds`` already at ``start`` or after some entry up to ``start + within``.

    If it never did, the witness is the last change of ``resources`` before the deadline:
    the state the condition was judged on.
    """
    entries = list(entries)
    deadline = start + within
    watched = set(resources) if resources is not None else None
    last: Entry | None = None
    for entry, state in replay(entries):
        if entry.mono > deadline:
            break
        if watched is None or (entry.kind == WATCH and entry.resource in watched):
            last = entry
        if entry.mono >= start and holds(state):
            return Verdict(name, PASS, f"{description} after {entry.mono - start:.3f}s",
                           [entry], start)
    if _holds_at(entries, holds, start):
        return Verdict(name, PASS, f"{description} already at the start", [], start)
    if now < deadline:
        return Verdict(name, UNKNOWN, f"{description}: only {now - start:.1f}s of the "
                       f"{within:.0f}s were observed", [], start)
    if _has_gap(entries, start, deadline):
        return Verdict(name, UNKNOWN, f"{description}: not seen, and the history has a gap",
                       [], start)
    return Verdict(name, VIOLATED, f"{description} did not happen within {within:.0f}s",
                   [last] if last else [], start)


def _holds_at(entries: list[Entry], holds: Callable[[State], bool], moment: float) -> bool:
    """Whether ``holds`` was true in the state as of ``moment``."""
    result = False
    for entry, state in replay(entries):
        if entry.mono > moment:
            break
        result = holds(state)
    return result


def stays_for(entries: Iterable[Entry], holds: Callable[[State], bool], description: str,
              start: float, duration: float, now: float, name: str = "stays_for") -> Verdict:
    """``holds`` at ``start`` and after every entry until ``start + duration``."""
    entries = list(entries)
    end = start + duration
    if not _holds_at(entries, holds, start):
        return Verdict(name, VIOLATED, f"{description} did not hold at the start", [], start)
    for entry, state in replay(entries):
        if entry.mono <= start or entry.kind != WATCH:
            continue
        if entry.mono > end:
            break
        if not holds(state):
            return Verdict(name, VIOLATED, f"{description} stopped holding after "
                           f"{entry.mono - start:.3f}s", [entry], start)
    if now < end:
        return Verdict(name, UNKNOWN, f"{description}: observed only {now - start:.1f}s of "
                       f"{duration:.0f}s", [], start)
    if _has_gap(entries, start, end):
        return Verdict(name, UNKNOWN, f"{description}: the history has a gap", [], start)
    return Verdict(name, PASS, f"{description} held for {duration:.0f}s", [], start)


def _earlier(x: Entry, y: Entry) -> bool:
    """Two watch events are ordered by their resourceVersions (etcd revisions, one order for
    every resource); the recorder's own order across two watch streams is only arrival."""
    if x.kind == y.kind == WATCH and x.rv.isdigit() and y.rv.isdigit():
        return int(x.rv) < int(y.rv)
    return x.seq < y.seq


def happened_before(entries: Iterable[Entry], a: Event, b: Event,
                    name: str = "happened_before") -> Verdict:
    """The first ``a`` is recorded before the first ``b``; both must happen."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    first_a, first_b = first(entries, a), first(entries, b)
    if first_a and first_b and _earlier(first_a, first_b):
        return Verdict(name, PASS, f"{a.description} {first_b.mono - first_a.mono:.3f}s "
                       f"before {b.description}", [first_a, first_b], origin)
    if first_b is None and first_a is None:
        summary = f"neither {a.description} nor {b.description} happened"
    elif first_b is None:
        summary = f"{b.description} never happened"
    elif first_a is None:
        summary = f"{b.description} happened, {a.description} never did"
    else:
        summary = f"{b.description} happened {first_a.mono - first_b.mono:.3f}s before " \
                  f"{a.description}"
    witness = sorted([e for e in (first_a, first_b) if e], key=lambda e: e.seq)
    return Verdict(name, VIOLATED, summary, witness, origin)


def no_earlier_than(entries: Iterable[Entry], event: Event, after: Event, delay: float,
                    name: str = "no_earlier_than") -> Verdict:
    """Every ``event`` comes at least ``delay`` seconds after the latest ``after`` before it."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    befores = {entry.seq for entry in after.scan(entries)}
    events = {entry.seq for entry in event.scan(entries)}
    latest_after: Entry | None = None
    seen = 0
    for entry in entries:
        if entry.seq in befores:
            latest_after = entry
        if entry.seq not in events:
            continue
        seen += 1
        if latest_after is None:
            return Verdict(name, VIOLATED, f"{event.description} happened before any "
                           f"{after.description}", [entry], origin)
        waited = entry.mono - latest_after.mono
        if waited < delay:
            return Verdict(name, VIOLATED, f"{event.description} came {waited:.3f}s after "
                           f"{after.description}, earlier than {delay:.1f}s",
                           [latest_after, entry], origin)
    return Verdict(name, PASS, f"all {seen} of {event.description} came at least {delay:.1f}s "
                   f"after {after.description}", [], origin)


def exactly(entries: Iterable[Entry], event: Event, count: int, name: str = "exactly") -> Verdict:
    """``event`` happens exactly ``count`` times over the history. The witness of too many is
    the first ``count + 1`` occurrences; of too few, those that did happen."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    found = occurrences(entries, event)
    if len(found) == count:
        if any(e.kind == GAP_START for e in entries):
            return Verdict(name, UNKNOWN, f"{event.description}: {count} times seen, but the "
                           "history has a gap", found, origin)
        return Verdict(name, PASS, f"{event.description}: exactly {count} times", found, origin)
    witness = found[:count + 1]
    return Verdict(name, VIOLATED, f"{event.description}: {len(found)} times, expected exactly "
                   f"{count}", witness, origin)
