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
- its first going (a deletion mark, or its removal) is its first delete or eviction that
  succeeded, when the second did not begin before the first ended; its removal after a mark,
  the second, when there were exactly two (else a finalizer's removal may have been it);
- its other changes are its other writes, in order, when exactly one way of joining them
  exists: each change to a write whose moment meets the change's, a write that changed
  nothing making none, and the writes' moments not overlapping.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import pairwise

from aftershock.history.actions import Action
from aftershock.history.changes import ADDED, DELETED, MODIFIED, Change
from aftershock.history.clock import INF
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


def date(lives: Iterable[Life], actions: list[Action], offset: float,
         horizon: float = INF) -> int:
    """Join every change of ``lives`` the audit log certainly has the request of to that
    request; how many were dated. The log is known whole up to ``horizon`` (a log not read
    to the judgement is whole up to the last request read): a change that may be later is
    dated only by the uid a create named."""
    writes: dict[str, list[Action]] = {}
    for action in actions:
        if action.ok and action.life is not None and action.verb != "get":
            writes.setdefault(action.life.id, []).append(action)
    dated = 0
    for life in lives:
        if life.resource in UNAUDITED:
            continue
        mine = sorted(writes.get(life.id, []), key=lambda a: (a.hi, a.lo))
        dated += _made(life, mine)
        whole = [c for c in life.changes if c.hi <= horizon]
        if len(whole) == len(life.changes):
            dated += _going(life, mine) + _written(life, mine)
    return dated


def _made(life: Life, mine: list[Action]) -> int:
    first = life.first
    creates = [a for a in mine if a.creates]
    if first.type != ADDED or not first.seen or len(creates) != 1:
        return 0
    if not creates[0].uid and len([a for a in mine if a.verb in ("create", "patch")]) > 1:
        return 0  # named by its request alone, beside another: which made it is not known
    return int(narrow(first, creates[0]))


def _going(life: Life, mine: list[Action]) -> int:
    deletes = [a for a in mine if a.deletes]
    marks = [c for c in life.changes if c.seen and c.type == MODIFIED and _marked(c)]
    removed = [c for c in life.changes if c.seen and c.type == DELETED]
    going = [*marks[:1], *removed]
    if not deletes or not going:
        return 0
    if any(a.hi >= b.lo for a, b in pairwise(deletes)):
        return 0  # two deletions whose moments overlap: which came first is not known
    # The first deletion that succeeded marked the object, or removed it if it had no
    # grace; what removed a marked object (a second deletion, the last finalizer going)
    # is known only when there were exactly two deletions.
    dated = int(narrow(going[0], deletes[0]))
    if len(going) == 2 and len(deletes) == 2:
        dated += int(narrow(going[1], deletes[1]))
    return dated


def _marked(change: Change) -> bool:
    after = (change.after or {}).get("metadata") or {}
    before = (change.before or {}).get("metadata") or {}
    return bool(after.get("deletionTimestamp")) and not before.get("deletionTimestamp")


def _written(life: Life, mine: list[Action]) -> int:
    """Its other changes, joined in order to the other writes to it: each change was made
    by one of them, a write that changed nothing made none, and each change's moment must
    meet its write's. Dated when exactly one such joining exists, and the writes' own moments
    do not overlap (their order is then the order they were made in)."""
    writes = [a for a in mine if not a.creates and not a.deletes
              and a.verb not in ("delete", "deletecollection")]
    changes = [c for c in life.changes[1:] if c.seen and c.type == MODIFIED and not _marked(c)]
    if not changes or len(writes) < len(changes):
        return 0
    if any(a.hi >= b.lo for a, b in pairwise(writes)):
        return 0
    joined = _only_joining(changes, writes)
    if joined is None:
        return 0
    return sum(narrow(change, writes[j]) for change, j in zip(changes, joined, strict=True))


JOINED = 2_000_000  # pairs of a change and a write that may meet, at most, for one life


def _only_joining(changes: list[Change], writes: list[Action]) -> list[int] | None:
    """The one order-keeping joining of every change to a write whose moment meets its own
    (by position), or None when there is none, more than one, or too many pairs to weigh.

    The writes do not overlap, so each change meets a run of them, [first, last]; the runs
    move forward with the changes (their moments are bounded in order). ways(i, j), the
    joinings of the first i changes to writes among the first j (2: many), is 0 up to
    first(i) and no longer grows after last(i) + 1: only the run is kept."""
    his, los = [a.hi for a in writes], [a.lo for a in writes]
    runs = [(bisect_left(his, c.lo), bisect_right(los, c.hi) - 1) for c in changes]
    if any(first > last for first, last in runs) or \
            sum(last - first + 1 for first, last in runs) > JOINED:
        return None
    rows: list[list[int]] = []  # rows[i][k]: ways(i + 1, runs[i][0] + 1 + k)

    def ways(i: int, j: int) -> int:
        if i == 0:
            return 1
        first, last = runs[i - 1]
        if j <= first:
            return 0
        return rows[i - 1][min(j, last + 1) - first - 1]

    for i, (first, last) in enumerate(runs):
        row, total = [], 0
        for j in range(first + 1, last + 2):
            total = min(2, total + ways(i, j - 1))
            row.append(total)
        rows.append(row)
    if ways(len(changes), len(writes)) != 1:
        return None
    joined, j = [], len(writes)
    for i in range(len(changes), 0, -1):
        while ways(i, j - 1) == 1:  # one joining leaves this write out: it changed nothing
            j -= 1
        joined.append(j - 1)
        j -= 1
    return joined[::-1]
