"""Dating changes by the requests that made them. A watched change carries only the second
its write was stamped with (managedFields); the audit log has the request that made it, to the
microsecond: received, then completed, the write committed between. Joining the two dates the
change by the request, and its neighbours in the cluster's order by it.

A join must be certain. It rests on what the audit policy of the clusters aftershock starts
records (providers/data/audit-policy.yaml): every write of every kind but Events and node
leases' renewals, so every change of another kind has its request in the log, once the log was
read to the judgement. Of one life:

- its creation is the create whose response named its uid (or the one create of its name and
  moment), and the change that showed it made;
- its first going (a deletion mark, or its removal) is its first delete or eviction, when the
  second did not begin before the first ended; its removal after a mark, the second;
- the changes stamped with one second are the writes to it whose moments meet that second, in
  order, when there are as many of each and the writes' moments do not overlap (a write that
  changed nothing, or one of another second, makes them differ, and nothing is joined).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from aftershock.history.actions import Action
from aftershock.history.changes import ADDED, DELETED, MODIFIED, Change
from aftershock.history.lives import Life

# Kinds whose writes the audit policy does not record every one of.
UNAUDITED = frozenset({"events", "leases"})


def narrow(change: Change, action: Action) -> bool:
    """Date ``change`` by the request that made it; whether that narrowed it."""
    lo, hi = max(change.lo, action.lo), min(change.hi, action.hi)
    if lo > hi or (lo == change.lo and hi == change.hi):
        return False
    change.lo, change.hi = lo, hi
    return True


def date(lives: Iterable[Life], actions: list[Action], offset: float) -> int:
    """Join every change of ``lives`` the audit log certainly has the request of to that
    request; how many were dated."""
    writes: dict[str, list[Action]] = {}
    for action in actions:
        if action.ok and action.life is not None and action.verb != "get":
            writes.setdefault(action.life.id, []).append(action)
    dated = 0
    for life in lives:
        if life.resource in UNAUDITED:
            continue
        mine = sorted(writes.get(life.id, []), key=lambda a: (a.hi, a.lo))
        dated += _made(life, mine) + _going(life, mine) + _written(life, mine, offset)
    return dated


def _made(life: Life, mine: list[Action]) -> int:
    first = life.first
    creates = [a for a in mine if a.creates]
    if first.type != ADDED or not first.seen or len(creates) != 1:
        return 0
    return int(narrow(first, creates[0]))


def _going(life: Life, mine: list[Action]) -> int:
    deletes = [a for a in mine if a.deletes]
    marks = [c for c in life.changes if c.seen and c.type == MODIFIED and _marked(c)]
    removed = [c for c in life.changes if c.seen and c.type == DELETED]
    going = [*marks[:1], *removed]
    if not deletes or not going or len(deletes) < len(going):
        return 0
    if any(a.hi >= b.lo for a, b in pairwise(deletes)):
        return 0  # two deletions whose moments overlap: which came first is not known
    dated = int(narrow(going[0], deletes[0]))
    if len(going) == 2 and len(deletes) == 2:
        dated += int(narrow(going[1], deletes[1]))
    return dated


def _marked(change: Change) -> bool:
    after = (change.after or {}).get("metadata") or {}
    before = (change.before or {}).get("metadata") or {}
    return bool(after.get("deletionTimestamp")) and not before.get("deletionTimestamp")


def _written(life: Life, mine: list[Action], offset: float) -> int:
    """The changes stamped with each second, joined in order to the writes that meet it."""
    others = [a for a in mine if not a.creates and not a.deletes
              and a.verb not in ("delete", "deletecollection")]
    by_second: dict[float, list[Change]] = {}
    for change in life.changes:
        if change.seen and change.stamped and change.type == MODIFIED:
            by_second.setdefault(change.written, []).append(change)
    dated = 0
    for second, changes in by_second.items():
        start = second + offset  # that second, on the recorder's scale
        meeting = [a for a in others if a.lo < start + 1.0 and a.hi >= start]
        if len(meeting) != len(changes):
            continue
        if any(a.hi >= b.lo for a, b in pairwise(meeting)):
            continue
        for change, action in zip(changes, meeting, strict=True):
            dated += int(narrow(change, action))
    return dated
