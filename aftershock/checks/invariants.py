"""Properties that must hold at every recorded event: always, never_more_than."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.timeline.entry import GAP_START, WATCH, Entry
from aftershock.timeline.state import Selector, State, is_live, replay, selects


def _origin(entries: list[Entry]) -> float:
    return entries[0].mono if entries else 0.0


def always(entries: Iterable[Entry], holds: Callable[[State], bool], description: str,
           resources: set[str] | None = None, name: str = "always") -> Verdict:
    """``holds`` after every entry (of ``resources``); witness: the entry that broke it."""
    entries = list(entries)
    gap = False
    for entry, state in replay(entries):
        if entry.kind == GAP_START and (resources is None or entry.resource in resources):
            gap = True
        if entry.kind != WATCH or (resources is not None and entry.resource not in resources):
            continue
        if not holds(state):
            return Verdict(name, VIOLATED, f"{description} stopped holding", [entry],
                           _origin(entries))
    if gap:
        return Verdict(name, UNKNOWN, f"{description}: the history has a gap", [],
                       _origin(entries))
    return Verdict(name, PASS, f"{description} held at all {len(entries)} events", [],
                   _origin(entries))


def never_more_than(entries: Iterable[Entry], limit: int, *, namespace: str | None,
                    selector: Selector | None, resource: str = "pods",
                    what: str = "live pods", name: str = "never_more_than") -> Verdict:
    """At no recorded event are there more than ``limit`` live objects matching ``selector``.

    The witness is the shortest stretch proving an excess: the entries at which the
    ``limit + 1`` most recent of the live objects became live, and the entry of the excess.
    """
    entries = list(entries)
    became_live: dict[tuple[str, str, str], Entry] = {}
    best: list[Entry] | None = None
    peak, gap = 0, False
    for entry, state in replay(entries):
        if entry.kind == GAP_START and entry.resource == resource:
            gap = True
        if entry.kind != WATCH or entry.resource != resource:
            continue
        if namespace is not None and entry.namespace != namespace:
            continue
        obj = state.get(entry.resource, entry.namespace, entry.name)
        if obj is None or not is_live(obj) or not selects(selector, obj):
            became_live.pop(entry.key, None)
            continue
        became_live.setdefault(entry.key, entry)
        count = len(became_live)
        peak = max(peak, count)
        if count > limit:
            latest = sorted(became_live.values(), key=lambda e: e.seq)[-(limit + 1):]
            witness = latest if latest[-1] is entry else [*latest, entry]
            if best is None or _span(witness) < _span(best):
                best = witness
    if best is not None:
        return Verdict(name, VIOLATED, f"{peak} {what} at once, more than {limit}", best,
                       _origin(entries))
    if gap:
        return Verdict(name, UNKNOWN, f"at most {peak} {what} seen, but the history of "
                       f"{resource} has a gap", [], _origin(entries))
    return Verdict(name, PASS, f"at most {peak} {what} at once (limit {limit})", [],
                   _origin(entries))


def _span(witness: list[Entry]) -> float:
    return witness[-1].mono - witness[0].mono


def honest_transitions(entries: Iterable[Entry], resource: str, namespace: str, name: str,
                       condition: str, tolerance: float = 2.0,
                       prop: str = "honest_transition") -> Verdict:
    """A condition's lastTransitionTime moves exactly when its status changes, to the moment
    of the change (within ``tolerance``: the API keeps whole seconds)."""
    entries = list(entries)
    previous: tuple[str, str] | None = None
    before: Entry | None = None
    for entry in entries:
        if entry.kind != WATCH or entry.key != (resource, namespace, name) or not entry.object:
            continue
        found = next((c for c in (entry.object.get("status") or {}).get("conditions") or []
                      if c.get("type") == condition), None)
        if found is None:
            continue
        status, stamp = found.get("status", ""), found.get("lastTransitionTime", "")
        if previous is not None and before is not None:
            changed, moved = status != previous[0], stamp != previous[1]
            # Whole seconds: two transitions within one second legitimately share a stamp.
            late = changed and abs(_seconds(stamp) - entry.wall) > tolerance
            if late or (moved and not changed):
                why = ("lastTransitionTime moved without a status change" if not changed
                       else "status changed but lastTransitionTime stayed" if not moved
                       else f"lastTransitionTime {stamp} is not when it changed")
                return Verdict(prop, VIOLATED, f"condition {condition} of {entry.ref}: {why}",
                               [before, entry], _origin(entries))
        previous, before = (status, stamp), entry
    if before is None:
        return Verdict(prop, UNKNOWN, f"condition {condition} of {resource}/{name} was never "
                       "seen", [], _origin(entries))
    return Verdict(prop, PASS, f"every change of condition {condition} moved its "
                   "lastTransitionTime to the moment of the change", [], _origin(entries))


def _seconds(stamp: str) -> float:
    from aftershock.timeline.audit import parse_time

    try:
        return parse_time(stamp)
    except ValueError:
        return float("nan")
