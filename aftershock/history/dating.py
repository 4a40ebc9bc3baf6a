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
  succeeded to commit: between the earliest start of one and the earliest end (deletions
  may overlap: a kubelet answers the mark while the delete that made it is answered); its
  removal after a mark, the later of the two, when there were exactly two (else a
  finalizer's removal may have been it);
- its other changes before any mark were made by its other writes, in order: each by one
  write whose moment meets its own, a write making one or none (it changed nothing), writes
  whose moments overlap in an order not known; each change is dated from the earliest write
  any such joining gives it to the latest.

A request of its name the join left with no life may still have been one of these: where one
could have acted on the life, it counts as a write that may have been its (the going may be as
early as such a delete began; the removal after a mark is not dated, for there may have been
three).
"""

from __future__ import annotations

from collections.abc import Iterable

from aftershock.history.actions import Action, may_act_on
from aftershock.history.changes import ADDED, DELETED, MODIFIED, Change
from aftershock.history.clock import INF, Span
from aftershock.history.lives import Life

# Kinds whose writes the audit policy does not record every one of.
UNAUDITED = frozenset({"events", "leases"})


def narrow(change: Change, action: Action | Span) -> bool:
    """Date ``change`` by the request that made it (or the moments of the requests that may
    have); whether that narrowed it."""
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
    unjoined: dict[tuple[str, str, str], list[Action]] = {}
    for action in actions:
        if action.ok and action.verb != "get":
            if action.life is not None:
                writes.setdefault(action.life.id, []).append(action)
            else:
                unjoined.setdefault(action.key, []).append(action)
    dated = 0
    for life in lives:
        if life.resource in UNAUDITED:
            continue
        mine = sorted(writes.get(life.id, []), key=lambda a: (a.hi, a.lo))
        dated += _made(life, mine)
        whole = [c for c in life.changes if c.hi <= horizon]
        if len(whole) == len(life.changes):
            made = max((a.lo for a in mine if a.creates and a.uid == life.uid), default=-INF)
            maybe = sorted((a for a in unjoined.get(life.key, ())
                            if may_act_on(life, a, True, made)), key=lambda a: (a.hi, a.lo))
            dated += _going(life, mine, maybe) + _written(life, mine, maybe)
    return dated


def _made(life: Life, mine: list[Action]) -> int:
    first = life.first
    creates = [a for a in mine if a.creates]
    if first.type != ADDED or not first.seen or len(creates) != 1:
        return 0
    if not creates[0].uid and any(a.code == 201 and a is not creates[0] for a in mine):
        return 0  # named by its request alone, beside another: which made it is not known
    return int(narrow(first, creates[0]))


def _going(life: Life, mine: list[Action], maybe: list[Action]) -> int:
    deletes = [a for a in mine if a.deletes]
    others = [a for a in maybe if a.deletes]
    marks = [c for c in life.changes if c.seen and c.type == MODIFIED and _marked(c)]
    removed = [c for c in life.changes if c.seen and c.type == DELETED]
    going = [*marks[:1], *removed]
    if not deletes or not going:
        return 0
    # The first deletion that succeeded marked the object, or removed it if it had no
    # grace: whichever committed first (deletions whose moments overlap, as a kubelet's
    # answering the mark does, in an order not known), it began no earlier than the
    # earliest began and committed by the time the first answered. What removed a marked
    # object (a second deletion, the last finalizer going) is known only when there were
    # exactly two deletions: the later of the two, between the later start and end. A
    # deletion the join could not place may have been one of its own: the first going may be
    # as early as that began.
    began = min(a.lo for a in [*deletes, *others])
    dated = int(narrow(going[0], Span(began, min(a.hi for a in deletes))))
    if len(going) == 2 and len(deletes) == 2 and not others:
        dated += int(narrow(going[1], Span(max(a.lo for a in deletes),
                                           max(a.hi for a in deletes))))
    elif len(going) == 2 and len(deletes) == 1 and not others and _at_once(going[0]):
        # marked with no grace and nothing to wait for: the same request removed it (the
        # API server writes the mark, then deletes the object, as one call answers)
        dated += int(narrow(going[1], Span(deletes[0].lo, deletes[0].hi)))
    return dated


def _at_once(mark: Change) -> bool:
    """A deletion mark whose object the deletion that made it removes itself: no grace left
    and no finalizer (a force deletion, `--grace-period=0 --force`)."""
    meta = (mark.after or {}).get("metadata") or {}
    return meta.get("deletionGracePeriodSeconds") == 0 and not meta.get("finalizers")


def _deleting(change: Change) -> bool:
    return bool(((change.after or {}).get("metadata") or {}).get("deletionTimestamp"))


def _marked(change: Change) -> bool:
    after = (change.after or {}).get("metadata") or {}
    before = (change.before or {}).get("metadata") or {}
    return bool(after.get("deletionTimestamp")) and not before.get("deletionTimestamp")


def _written(life: Life, mine: list[Action], maybe: list[Action]) -> int:
    """Its other changes before any deletion mark (a deletion may change a marked object
    too), joined in order to the other writes to it: each change was made by one of them, a
    write made at most one (none, when it changed nothing), and a change's moment meets its
    write's. Writes whose moments overlap were made in an order not known: they are one
    batch, whose changes may come in any order. Each change is dated from the earliest batch
    to the latest that any such joining can give it. A write the join could not place that
    may have been its own is one more write (more joinings, so a wider date)."""
    writes = [a for a in [*mine, *maybe] if not a.creates and not a.deletes
              and a.verb not in ("delete", "deletecollection")]
    changes = []
    for change in life.changes[1:]:
        if change.type != MODIFIED or _deleting(change):
            break
        if change.seen:
            changes.append(change)
    if not changes or len(writes) < len(changes):
        return 0
    batches = _batches(writes)
    earliest = _first_fit(changes, batches)
    latest = _first_fit(changes[::-1], batches[::-1])
    if earliest is None or latest is None:
        return 0  # the log's writes cannot have made these changes: date nothing by them
    last = len(batches) - 1
    return sum(narrow(change, Span(batches[first].lo, batches[last - final].hi))
               for change, first, final in zip(changes, earliest, latest[::-1], strict=True))


class _Batch:
    """Writes whose moments overlap, one after another: their span, and how many."""

    def __init__(self, first: Action) -> None:
        self.lo, self.hi, self.size = first.lo, first.hi, 1


def _batches(writes: list[Action]) -> list[_Batch]:
    batches: list[_Batch] = []
    for write in sorted(writes, key=lambda a: a.lo):
        if batches and write.lo <= batches[-1].hi:
            batches[-1].hi = max(batches[-1].hi, write.hi)
            batches[-1].size += 1
        else:
            batches.append(_Batch(write))
    return batches


def _first_fit(changes: list[Change], batches: list[_Batch]) -> list[int] | None:
    """Each change in turn to the first batch, from the one before's, that meets it and has a
    write left: no joining gives a change an earlier batch (or, on the lists reversed, a later
    one). None when no joining exists."""
    found, at, used = [], 0, 0
    for change in changes:
        while at < len(batches):
            batch = batches[at]
            if used < batch.size and batch.lo <= change.hi and batch.hi >= change.lo:
                break
            at, used = at + 1, 0
        else:
            return None
        found.append(at)
        used += 1
    return found
