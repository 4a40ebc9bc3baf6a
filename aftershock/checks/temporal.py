"""Properties about when things happen: eventually, stays_for, happened_before,
no_earlier_than. Times are the recorder's clock (Entry.mono)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from aftershock.checks.invariants import changes, written
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.timeline.entry import GAP_START, Entry
from aftershock.timeline.state import State, replay


@dataclass(frozen=True)
class Event:
    """Something that happens at an entry: ``occurs(entry, state_after_entry)``."""

    description: str
    occurs: Callable[[Entry, State], bool]
    resources: frozenset[str] = frozenset()  # what it reads, for the registry's rule
    # The entries of the objects it is about (to count what a judgement judged), if known.
    concerns: Callable[[Entry], bool] | None = None

    def scan(self, entries: Iterable[Entry]) -> Iterator[Entry]:
        for entry, state in replay(entries):
            if self.occurs(entry, state):
                yield entry


@dataclass(frozen=True)
class Transition(Event):
    """The moments a state condition turns from false to true (true at the start counts)."""

    def scan(self, entries: Iterable[Entry]) -> Iterator[Entry]:
        before = False
        watched = self.resources or None
        for entry, state in replay(entries):
            if not changes(entry, watched):
                continue
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


Count = Callable[[State], int]


def eventually(entries: Iterable[Entry], holds: Callable[[State], bool], description: str,
               start: float, within: float, now: float, name: str = "eventually",
               resources: Iterable[str] | None = None, about: Count | None = None,
               namespace: str | None = None) -> Verdict:
    """``holds`` already at ``start`` or after some change of ``resources`` up to
    ``start + within``.

    If it never did, the witness is the last change of ``resources`` before the deadline (in
    ``namespace``, or cluster-wide: another scenario's teardown is not the state judged).
    ``about`` counts the objects the condition speaks of: a pass over none is not earned.
    """
    entries = list(entries)
    deadline = start + within
    watched = set(resources) if resources is not None else None
    reads = frozenset(watched or ())
    state, last, subjects, crossed = State(), None, 0, False

    def passed(summary: str, witness: list[Entry], until: float) -> Verdict:
        return Verdict(name, PASS, summary, witness, start, subjects=subjects,
                       window=(start, until), reads=reads)

    after = len(entries)
    for index, entry in enumerate(entries):
        if entry.mono > deadline:
            after = index
            break
        if not crossed and entry.mono > start:  # the state at the start: after its entries
            crossed = True
            if holds(state):
                return passed(f"{description} already at the start", [], start)
        state.apply(entry)
        if not changes(entry, watched):
            continue
        if about is None:
            subjects += 1
        elif not subjects:  # the rule asks only whether there was anything: once is enough
            subjects = about(state)
        if namespace is None or entry.namespace in ("", namespace):
            last = entry
        if crossed and holds(state):
            return passed(f"{description} after {entry.mono - start:.3f}s", [entry], entry.mono)
    if not crossed and holds(state):
        return passed(f"{description} already at the start", [], start)
    if now < deadline:
        return Verdict(name, UNKNOWN, f"{description}: only {now - start:.1f}s of the "
                       f"{within:.0f}s were observed", [], start, subjects=subjects,
                       reads=reads)
    late = _seen_late(entries[after:], state, holds, watched, deadline)
    if late is not None:
        return Verdict(name, UNKNOWN, f"{description} held after a change the API server "
                       f"wrote by the deadline (its clock, whole seconds) and the recorder saw "
                       f"{late.mono - deadline:.3f}s after it: its lag is not the "
                       "implementation's", [late], start, subjects=subjects, reads=reads)
    return Verdict(name, VIOLATED, f"{description} did not happen within {within:.0f}s",
                   [last] if last else [], start, subjects=subjects,
                   window=(start, deadline), by_absence=True, reads=reads)


LAG = 10.0  # how late after a deadline a change written before it may still be recorded


def _seen_late(rest: list[Entry], state: State, holds: Callable[[State], bool],
               watched: set[str] | None, deadline: float) -> Entry | None:
    """The first change recorded after ``deadline`` (within LAG) that was written by then on
    the API server's clock and made ``holds`` true. ``state`` is the state at the deadline."""
    for entry in rest:
        if entry.mono > deadline + LAG:
            return None
        state.apply(entry)
        if not changes(entry, watched):
            continue
        when = written(entry)  # NaN when unknown: never "by the deadline"
        by_deadline = when <= deadline + (entry.wall - entry.mono)
        if by_deadline and holds(state):
            return entry
    return None


def stays_for(entries: Iterable[Entry], holds: Callable[[State], bool], description: str,
              start: float, duration: float, now: float, name: str = "stays_for",
              resources: Iterable[str] | None = None, about: Count | None = None) -> Verdict:
    """``holds`` at ``start`` and after every change of ``resources`` until
    ``start + duration``."""
    entries = list(entries)
    end = start + duration
    watched = set(resources) if resources is not None else None
    reads = frozenset(watched or ())
    state, before, subjects, crossed = State(), None, 0, False

    def broke(summary: str, witness: list[Entry], at: float) -> Verdict:
        """The proof is the state from the witness through ``at``: at the start, the state
        the last change before it left (a gap open at the start leaves it unknown)."""
        since = witness[0].mono if witness else at
        return Verdict(name, VIOLATED, summary, witness, start, subjects=max(subjects, 1),
                       window=(since, at), reads=reads)

    for entry in entries:
        if not crossed and entry.mono > start:
            crossed = True
            if not holds(state):
                return broke(f"{description} did not hold at the start",
                             [before] if before else [], start)
        if entry.mono > end:
            break
        state.apply(entry)
        if not changes(entry, watched):
            continue
        if about is None:
            subjects += 1
        elif not subjects:
            subjects = about(state)
        before = entry
        if crossed and not holds(state):
            return broke(f"{description} stopped holding after {entry.mono - start:.3f}s",
                         [entry], entry.mono)
    if not crossed and not holds(state):
        return broke(f"{description} did not hold at the start", [before] if before else [],
                     start)
    if now < end:
        return Verdict(name, UNKNOWN, f"{description}: observed only {now - start:.1f}s of "
                       f"{duration:.0f}s", [], start, subjects=subjects, reads=reads)
    return Verdict(name, PASS, f"{description} held for {duration:.0f}s", [], start,
                   subjects=subjects, window=(start, end),
                   reads=reads)


def _earlier(x: Entry, y: Entry) -> bool:
    """Two watch events are ordered by their resourceVersions (etcd revisions, one order for
    every resource); the recorder's own order across two watch streams is only arrival."""
    if x.kind == y.kind == "watch" and x.rv.isdigit() and y.rv.isdigit():
        return int(x.rv) < int(y.rv)
    return x.seq < y.seq


def happened_before(entries: Iterable[Entry], a: Event, b: Event,
                    name: str = "happened_before") -> Verdict:
    """The first ``a`` is recorded before the first ``b``; both must happen. A violation says
    ``a`` did not come first, which a gap could hide: it is judged by absence."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = a.resources | b.resources
    first_a, first_b = first(entries, a), first(entries, b)
    found = sum(1 for e in (first_a, first_b) if e)
    if first_a and first_b and _earlier(first_a, first_b):
        return Verdict(name, PASS, f"{a.description} {first_b.mono - first_a.mono:.3f}s "
                       f"before {b.description}", [first_a, first_b], origin, subjects=found,
                       reads=reads)
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
    return Verdict(name, VIOLATED, summary, witness, origin, subjects=found, by_absence=True,
                   reads=reads)


def no_earlier_than(entries: Iterable[Entry], event: Event, after: Event, delay: float,
                    name: str = "no_earlier_than") -> Verdict:
    """Every ``event`` comes at least ``delay`` seconds after the latest ``after`` before it.
    Before is etcd's order (two watch streams may deliver out of it); the delay is measured on
    the API server's clock, the time each write shows (whole seconds) or the audit log's: a
    difference that clock cannot settle is UNKNOWN, never the implementation's fault."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = event.resources | after.resources
    befores = list(after.scan(entries))
    seen, unsure = 0, None
    for entry in sorted(event.scan(entries), key=_etcd_order):
        seen += 1
        earlier = [b for b in befores if _earlier(b, entry)]
        if not earlier:
            return Verdict(name, VIOLATED, f"{event.description} happened before any "
                           f"{after.description}", [entry], origin, subjects=seen,
                           by_absence=True, reads=reads)
        latest = max(earlier, key=_etcd_order)
        if delay <= 0:
            continue
        low, high = _apart(latest, entry)
        if high < delay:
            return Verdict(name, VIOLATED, f"{event.description} came at most {high:.3f}s "
                           f"after {after.description}, earlier than {delay:.1f}s",
                           [latest, entry], origin, subjects=seen, reads=reads)
        if low < delay and unsure is None:
            unsure = (latest, entry, low, high)
    if unsure is not None:
        latest, entry, low, high = unsure
        return Verdict(name, UNKNOWN, f"{event.description} came between {low:.1f}s and "
                       f"{high:.1f}s after {after.description} on the API server's clock: "
                       f"whether that is {delay:.1f}s is not known", [latest, entry], origin,
                       subjects=seen, reads=reads)
    summary = (f"all {seen} of {event.description} came at least {delay:.1f}s after "
               f"{after.description}" if seen else f"{event.description} never happened")
    return Verdict(name, PASS, summary, [], origin, subjects=seen, reads=reads)


def _etcd_order(entry: Entry) -> tuple[int, int]:
    return (int(entry.rv), entry.seq) if entry.kind == "watch" and entry.rv.isdigit() \
        else (0, entry.seq)


def _apart(first: Entry, then: Entry) -> tuple[float, float]:
    """How many seconds after ``first`` the API server wrote ``then``, at least and at most:
    exact between two audited requests, within a second either way between two writes whose
    managedFields give whole seconds; unknown otherwise."""
    if first.kind == then.kind == "audit":
        return then.mono - first.mono, then.mono - first.mono
    gap = written(then) - written(first)
    if gap != gap:  # NaN: a time the recorder could not read
        return float("-inf"), float("inf")
    return gap - 1.0, gap + 1.0


def exactly(entries: Iterable[Entry], event: Event, count: int, name: str = "exactly",
            concerns: Callable[[Entry], bool] | None = None,
            since: float | None = None) -> Verdict:
    """``event`` happens exactly ``count`` times over the history, or in the episode from
    ``since`` (the step that changed the desired state). The witness of too many is the first
    ``count + 1`` occurrences; of too few, those that did happen (by absence: a gap could hide
    the others). ``concerns`` picks the entries of the objects the event is about, to count
    what was judged."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = event.resources
    found = [e for e in occurrences(entries, event) if since is None or e.mono >= since]
    window = (since, entries[-1].mono if entries else since) if since is not None else None
    subjects = len({e.key for e in entries if concerns(e)}) if concerns else len(found)
    if len(found) == count:
        return Verdict(name, PASS, f"{event.description}: exactly {count} times", found,
                       origin, subjects=subjects, window=window, reads=reads)
    too_few = len(found) < count
    return Verdict(name, VIOLATED, f"{event.description}: {len(found)} times, expected exactly "
                   f"{count}", found[:count + 1], origin, subjects=subjects, by_absence=too_few,
                   window=window, reads=reads)
