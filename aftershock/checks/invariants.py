"""Properties that must hold at every recorded state: always, never_more_than; and a
condition's lastTransitionTime against when its status changed."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.history import Change, History, seconds
from aftershock.history import stamp as stamp_of
from aftershock.history.state import Index, Selector, State, is_live

Recorded = History | Iterable


def always(history: Recorded, holds: Callable[[State], bool], description: str,
           resources: set[str] | frozenset[str] | None = None, name: str = "always",
           about: Callable[[State], int] | None = None) -> Verdict:
    """``holds`` after every change of ``resources``, in the cluster's order; witness: the
    change that broke it. ``about`` counts the objects the condition speaks of (a pass over
    none is not earned)."""
    history = History.of(history)
    reads = frozenset(resources or ())
    evaluated = subjects = 0
    for change, state in history.replay(resources):
        evaluated += 1
        if about is not None and not subjects:  # whether there was anything: once is enough
            subjects = about(state)
        if not holds(state):
            return Verdict(name, VIOLATED, f"{description} stopped holding", [change.entry],
                           history.origin, subjects=max(subjects, 1), reads=reads)
    if about is None:
        subjects = evaluated
    summary = (f"{description} held at all {evaluated} changes" if subjects else
               f"{description}: nothing it speaks of was ever recorded")
    return Verdict(name, PASS, summary, [], history.origin, subjects=subjects, reads=reads)


def never_more_than(history: Recorded, limit: int, *, namespace: str | None,
                    selector: Selector | None, resource: str = "pods",
                    what: str = "live pods", name: str = "never_more_than",
                    uncounted: Callable[[Change], set[tuple[str, str, str]]] | None = None
                    ) -> Verdict:
    """At no recorded state are there more than ``limit`` live objects matching ``selector``,
    not counting those ``uncounted`` names at that change.

    The witness is the shortest stretch proving an excess: the changes at which the
    ``limit + 1`` most recent of the live objects became live, and the change of the excess.
    """
    history = History.of(history)
    live = Index(namespace, selector, is_live)  # the one question asked: no State is needed
    members = live.members
    best: list[Change] | None = None
    peak = 0
    skip: set[tuple[str, str, str]] = set()
    update = live.update
    for change in history.changes_of(resource):
        update(change.key, change.after, change)
        if uncounted is None:
            count = len(members)
        else:
            skip = uncounted(change)
            count = len(members) - len(skip & members.keys())
        if count > peak:
            peak = count
        if count > limit:
            joined = (c for key, c in live.joined.items() if c and key not in skip)
            latest = sorted(heapq.nlargest(limit + 1, joined, key=lambda c: c.order),
                            key=lambda c: c.order)
            witness = latest if latest and latest[-1] is change else [*latest, change]
            if best is None or _span(witness) < _span(best):
                best = witness
    reads = frozenset({resource})
    seen = live.ever
    if best is not None:
        return Verdict(name, VIOLATED, f"{peak} {what} at once, more than {limit}",
                       [c.entry for c in best], history.origin, subjects=len(seen),
                       reads=reads)
    summary = (f"at most {peak} {what} at once (limit {limit})" if seen else
               f"no {what} were ever recorded")
    return Verdict(name, PASS, summary, [], history.origin, subjects=len(seen), reads=reads)


def _span(witness: list[Change]) -> float:
    return witness[-1].hi - witness[0].lo


# How far a lastTransitionTime may be from the write that changed its status: both are whole
# seconds, and a write follows its decision.
STAMP_TOLERANCE = 2.0


def honest_transitions(history: Recorded, resource: str, namespace: str, name: str,
                       condition: str, tolerance: float = STAMP_TOLERANCE,
                       prop: str = "honest_transition") -> Verdict:
    """A condition's lastTransitionTime moves exactly when its status changes, to the moment
    of the change: the time of the write that changed it, on the API server's clock (the
    recorder keeps it from managedFields), within ``tolerance`` (both are whole seconds, and a
    write follows its decision). Without that time, only whether the stamp moved is judged:
    the recorder's arrival time is never the cluster's."""
    history = History.of(history)
    reads = frozenset({resource})
    previous: tuple[str, str] | None = None
    before: Change | None = None
    seen = 0
    for change in history.changes_of(resource):
        if change.key != (resource, namespace, name) or change.after is None:
            continue
        found = next((c for c in (change.after.get("status") or {}).get("conditions") or []
                      if c.get("type") == condition), None)
        if found is None:
            continue
        seen += 1
        status, stamp = found.get("status", ""), found.get("lastTransitionTime", "")
        if previous is not None and before is not None:
            changed, moved = status != previous[0], stamp != previous[1]
            # Whole seconds: two transitions within one second legitimately share a stamp.
            late = changed and abs(seconds(stamp) - change.written) > tolerance
            if late or (moved and not changed):
                why = ("lastTransitionTime moved without a status change" if not changed
                       else "status changed but lastTransitionTime stayed" if not moved
                       else f"lastTransitionTime {stamp} is not when it changed (written "
                            f"{stamp_of(change.written)})")
                return Verdict(prop, VIOLATED, f"condition {condition} of {change.ref}: {why}",
                               [before.entry, change.entry], history.origin, subjects=seen,
                               reads=reads)
        previous, before = (status, stamp), change
    if before is None:
        return Verdict(prop, UNKNOWN, f"condition {condition} of {resource}/{name} was never "
                       "seen", [], history.origin, subjects=0, reads=reads)
    return Verdict(prop, PASS, f"every change of condition {condition} moved its "
                   "lastTransitionTime to the moment of the change", [], history.origin,
                   subjects=seen, reads=reads)
