"""Properties that must hold at every recorded event: always, never_more_than."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.timeline.audit import parse_time
from aftershock.timeline.entry import GAP_END, WATCH, Entry
from aftershock.timeline.state import Selector, State, is_live, replay


def _origin(entries: list[Entry]) -> float:
    return entries[0].mono if entries else 0.0


def changes(entry: Entry, resources: Iterable[str] | None) -> bool:
    """Whether ``entry`` changes the recorded objects of ``resources`` (None: any): a watch
    event, or the re-list that closes a gap."""
    return entry.kind in (WATCH, GAP_END) and (resources is None or entry.resource in resources)


def always(entries: Iterable[Entry], holds: Callable[[State], bool], description: str,
           resources: set[str] | frozenset[str] | None = None, name: str = "always",
           about: Callable[[State], int] | None = None) -> Verdict:
    """``holds`` after every change of ``resources``; witness: the entry that broke it.
    ``about`` counts the objects the condition speaks of (a pass over none is not earned)."""
    entries = list(entries)
    reads = frozenset(resources or ())
    evaluated = subjects = 0
    for entry, state in replay(entries):
        if not changes(entry, resources):
            continue
        evaluated += 1
        if about is not None and not subjects:  # whether there was anything: once is enough
            subjects = about(state)
        if not holds(state):
            return Verdict(name, VIOLATED, f"{description} stopped holding", [entry],
                           _origin(entries), subjects=max(subjects, 1), reads=reads)
    if about is None:
        subjects = evaluated
    summary = (f"{description} held at all {evaluated} changes" if subjects else
               f"{description}: nothing it speaks of was ever recorded")
    return Verdict(name, PASS, summary, [], _origin(entries), subjects=subjects, reads=reads)


def never_more_than(entries: Iterable[Entry], limit: int, *, namespace: str | None,
                    selector: Selector | None, resource: str = "pods",
                    what: str = "live pods", name: str = "never_more_than",
                    uncounted: Callable[[Entry], set[tuple[str, str, str]]] | None = None
                    ) -> Verdict:
    """At no recorded event are there more than ``limit`` live objects matching ``selector``,
    not counting those ``uncounted`` names at that entry.

    The witness is the shortest stretch proving an excess: the entries at which the
    ``limit + 1`` most recent of the live objects became live, and the entry of the excess.
    """
    entries = list(entries)
    state = State()
    live = state.index(resource, namespace, selector, is_live)
    members = live.members
    seen: set[tuple[str, str, str]] = set()
    best: list[Entry] | None = None
    peak = 0
    for entry in entries:
        state.apply(entry)
        if entry.resource != resource:
            continue
        if entry.kind == WATCH:
            key = (entry.resource, entry.namespace, entry.name)
            if key in members:
                seen.add(key)
        elif entry.kind == GAP_END:  # a re-list: any of its objects may have joined
            seen.update(members)
        else:
            continue
        skip = uncounted(entry) if uncounted else set()
        count = len(members) - len(skip & members.keys())
        peak = max(peak, count)
        if count > limit:
            joined = (e for key, e in live.joined.items() if e and key not in skip)
            latest = sorted(heapq.nlargest(limit + 1, joined, key=lambda e: e.seq),
                            key=lambda e: e.seq)
            witness = latest if latest and latest[-1] is entry else [*latest, entry]
            if best is None or _span(witness) < _span(best):
                best = witness
    reads = frozenset({resource})
    if best is not None:
        return Verdict(name, VIOLATED, f"{peak} {what} at once, more than {limit}", best,
                       _origin(entries), subjects=len(seen), reads=reads)
    summary = (f"at most {peak} {what} at once (limit {limit})" if seen else
               f"no {what} were ever recorded")
    return Verdict(name, PASS, summary, [], _origin(entries), subjects=len(seen), reads=reads)


def _span(witness: list[Entry]) -> float:
    return witness[-1].mono - witness[0].mono


# How far a lastTransitionTime may be from the write that changed its status: both are whole
# seconds, and a write follows its decision.
STAMP_TOLERANCE = 2.0


def honest_transitions(entries: Iterable[Entry], resource: str, namespace: str, name: str,
                       condition: str, tolerance: float = STAMP_TOLERANCE,
                       prop: str = "honest_transition") -> Verdict:
    """A condition's lastTransitionTime moves exactly when its status changes, to the moment
    of the change: the time of the write that changed it, on the API server's clock (the
    recorder keeps it from managedFields), within ``tolerance`` (both are whole seconds, and a
    write follows its decision). Without that time, only whether the stamp moved is judged:
    the recorder's arrival time is never the cluster's."""
    entries = list(entries)
    reads = frozenset({resource})
    previous: tuple[str, str] | None = None
    before: Entry | None = None
    seen = 0
    for entry in entries:
        if entry.kind != WATCH or entry.key != (resource, namespace, name) or not entry.object:
            continue
        found = next((c for c in (entry.object.get("status") or {}).get("conditions") or []
                      if c.get("type") == condition), None)
        if found is None:
            continue
        seen += 1
        status, stamp = found.get("status", ""), found.get("lastTransitionTime", "")
        if previous is not None and before is not None:
            changed, moved = status != previous[0], stamp != previous[1]
            # Whole seconds: two transitions within one second legitimately share a stamp.
            late = changed and abs(_seconds(stamp) - written(entry)) > tolerance
            if late or (moved and not changed):
                why = ("lastTransitionTime moved without a status change" if not changed
                       else "status changed but lastTransitionTime stayed" if not moved
                       else f"lastTransitionTime {stamp} is not when it changed (written "
                            f"{entry.extra['written']})")
                return Verdict(prop, VIOLATED, f"condition {condition} of {entry.ref}: {why}",
                               [before, entry], _origin(entries), subjects=seen, reads=reads)
        previous, before = (status, stamp), entry
    if before is None:
        return Verdict(prop, UNKNOWN, f"condition {condition} of {resource}/{name} was never "
                       "seen", [], _origin(entries), subjects=0, reads=reads)
    return Verdict(prop, PASS, f"every change of condition {condition} moved its "
                   "lastTransitionTime to the moment of the change", [], _origin(entries),
                   subjects=seen, reads=reads)


def written(entry: Entry) -> float:
    """When the API server wrote what ``entry`` shows (NaN when the recorder did not say)."""
    return _seconds((entry.extra or {}).get("written", ""))


def _seconds(stamp: str) -> float:
    try:
        return parse_time(stamp)
    except ValueError:
        return float("nan")
