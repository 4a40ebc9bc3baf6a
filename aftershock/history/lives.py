"""An object's lives: one per uid. A name is only a label: a pod deleted and made again under
its name (a StatefulSet's, a JobSet's) is a new life, and nothing said of one life (its
deletion, its binding) is said of another."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aftershock.history.changes import ADDED, DELETED, Change
from aftershock.history.clock import INF, Span


class Life:
    __slots__ = ("changes", "id", "uid")

    def __init__(self, id: str, uid: str) -> None:
        self.id, self.uid = id, uid  # id: the uid, or the name and a count where none was kept
        self.changes: list[Change] = []

    @property
    def first(self) -> Change:
        return self.changes[0]

    @property
    def last(self) -> Change:
        return self.changes[-1]

    @property
    def resource(self) -> str:
        return self.first.resource

    @property
    def namespace(self) -> str:
        return self.first.namespace

    @property
    def name(self) -> str:
        return self.first.name

    @property
    def key(self) -> tuple[str, str, str]:
        return self.first.key

    @property
    def ref(self) -> str:
        return self.first.ref

    @property
    def born(self) -> Span:
        """When it was made: the creation a watch delivered, else by its first record."""
        first = self.first
        if first.type == ADDED and first.seen:
            return first.at
        return Span(-INF, first.hi)

    @property
    def gone(self) -> Change | None:
        """The change that removed it (None while it is there at the end of the record)."""
        return self.last if self.last.type == DELETED else None

    @property
    def going(self) -> Change | None:
        """The first change that showed it going: a deletion mark, or its removal."""
        for change in self.changes:
            if change.after is None or (change.after.get("metadata") or {}).get(
                    "deletionTimestamp"):
                return change
        return None

    def objects(self) -> list[dict[str, Any]]:
        """Each state it was recorded in (the last one as it went, for a life deleted)."""
        return [c.object for c in self.changes if c.object is not None]

    @property
    def latest(self) -> dict[str, Any] | None:
        """Its last recorded state (as it went, if it went)."""
        for change in reversed(self.changes):
            if change.object is not None:
                return change.object
        return None

    def ever(self, predicate: Callable[[dict[str, Any]], bool]) -> bool:
        return any(predicate(obj) for obj in self.objects())

    def possible(self, moment: Span, until: Change | None = None
                 ) -> list[dict[str, Any] | None]:
        """Every state it may have been in at a point of ``moment`` (None: not there yet, or
        gone): the one the last change certainly made by then left, and the one each change
        whose span meets the moment may have left. With ``until``, a change of it known to
        come after the moment: that one and those after it are left out."""
        current: dict[str, Any] | None = None
        states: list[dict[str, Any] | None] = []
        for change in self.changes:
            if change is until:
                break
            if change.hi <= moment.lo:
                current = change.after
                continue
            if change.lo > moment.hi:
                break
            states.append(change.after)
        return [current, *states]

    def holds(self, moment: Span, predicate: Callable[[dict[str, Any] | None], bool],
              until: Change | None = None) -> bool | None:
        """Whether ``predicate`` held of it at a point of ``moment``: True or False when every
        state it may have been in then (``possible``) says so, None when they disagree."""
        found = {bool(predicate(obj)) for obj in self.possible(moment, until)}
        return found.pop() if len(found) == 1 else None

    def existed(self, at: Span) -> bool | None:
        """Whether it existed at a moment within ``at``: True when it certainly did, False
        when it certainly did not, None when the record cannot say."""
        made = self.born.before(at) if self.born.lo != -INF or self.born.hi < at.lo \
            else (True if self.first.hi < at.lo else None)
        gone = self.gone
        ended = None if gone is None else gone.at.before(at)
        if made is False or ended is True:
            return False
        if made is True and (gone is None or ended is False):
            return True
        return None

    def __repr__(self) -> str:
        return f"<life {self.ref} uid={self.uid or '?'} {len(self.changes)} changes>"


def lives_of(sequences: Iterable[list[Change]]) -> dict[str, Life]:
    """Every life, by its id, its changes in the cluster's order, first made first; from each
    name's changes in the cluster's order (``sequences``). Read name by name, a life's uid is
    mostly the one its previous change had (the model keeps one string for it), and asked
    of the dict only when it changes."""
    lives: dict[str, Life] = {}
    mixed: set[str] = set()  # a uid under two names (never from an API server): sorted after
    for sequence in sequences:
        life: Life | None = None
        unnamed: Life | None = None  # a history that kept no uid: by name, one after another
        count = 0
        for change in sequence:
            uid = change.uid
            if life is not None and uid and uid is life.uid:
                life.changes.append(change)
                continue
            if uid:
                life = lives.get(uid)
                if life is None:
                    life = lives[uid] = Life(uid, uid)
                elif life.key != change.key:
                    mixed.add(uid)
            else:
                if unnamed is None or unnamed.last.type == DELETED:
                    count += 1
                    id = f"{'/'.join(change.key)}#{count}"
                    unnamed = lives[id] = Life(id, "")
                life = unnamed
            life.changes.append(change)
    for uid in mixed:
        lives[uid].changes.sort(key=lambda c: c.order)
    return dict(sorted(lives.items(), key=lambda item: item[1].first.order))
