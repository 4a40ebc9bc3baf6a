"""Every recorded change of an object, in the cluster's order, each with its moment.

What the recorder wrote is one stream per watch (in resourceVersion order), the lists it made
(its first, and the re-lists that closed its gaps), the audit log and its own marks, appended
in the order they arrived. The cluster's order across them is etcd's revision (one counter
for every resource): the changes are sorted by it, never by when they arrived. A re-list tells
the state of each object it found at that object's own revision, and that an object it no
longer has was deleted somewhere after its last recorded change: such a deletion is placed at
the list's revision (by when it had happened), its moment spanning the whole stretch. A name
found again with another uid is two lives: the old one deleted, the new one made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import attrgetter
from sys import intern
from typing import Any

from aftershock.history.clock import INF, SECOND, Span, seconds
from aftershock.timeline.entry import APP_STATES, GAP_END, SINGULAR, WATCH, Entry, singular_of

SYNC, ADDED, MODIFIED, DELETED = "SYNC", "ADDED", "MODIFIED", "DELETED"
ORDER, RV = attrgetter("order"), attrgetter("rv")


class Change:
    """One change of one object: its state before and after (None: not there), where it
    stands in the cluster's order, its moment, and the entry that recorded it (a witness).
    ``seen``: a watch delivered it (its own moment); a list found it (the first list, or a
    re-list after a gap: some change happened by then)."""

    __slots__ = ("after", "before", "entry", "hi", "key", "lo", "name", "namespace", "object",
                 "order", "placed", "previous", "resource", "rv", "seen", "stamped", "type",
                 "uid", "written")

    def __init__(self, entry: Entry, key: tuple[str, str, str], uid: str, rv: int, type: str,
                 obj: dict[str, Any] | None, seen: bool) -> None:
        self.entry, self.key = entry, key  # kept: every replay of every judge asks it
        self.resource, self.namespace, self.name = key
        self.uid, self.rv, self.type, self.seen = uid, rv, type, seen
        self.object = obj  # what the record shows: for a deletion, the object as it went
        self.after = None if type == DELETED else obj
        self.before: dict[str, Any] | None = None
        self.order = -1
        self.lo, self.hi = -INF, INF
        self.written = math.nan  # the second the API server stamped it with (wall clock)
        self.stamped = False  # a manager's write: made within that second
        self.placed = False  # a deletion a list found: placed where it had happened by
        self.previous: Change | None = None  # the object's change before it (same name)

    @property
    def at(self) -> Span:
        return Span(self.lo, self.hi)

    @property
    def ref(self) -> str:
        singular = SINGULAR.get(self.resource) or singular_of(self.resource)
        return f"{singular}/{self.namespace}/{self.name}" if self.namespace else \
            f"{singular}/{self.name}"

    @property
    def deleted(self) -> bool:
        return self.type == DELETED

    def __repr__(self) -> str:
        return f"<{self.type} {self.ref} rv={self.rv} {self.at}{'' if self.seen else ' listed'}>"


def revision(value: Any) -> int | None:
    text = str(value or "")
    return int(text) if text.isdigit() else None


def _meta(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("metadata") or {}


class Builder:
    """Reads the recorded streams once, in the order they arrived, into changes."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = entries
        self.offset = entries[0].mono - entries[0].wall if entries else 0.0
        self.changes: list[Change] = []
        self.reads: list[Change] = []  # an application's own state (not the API server's)
        self.numbered = True  # every change has a revision: the cluster's order is known
        self.timed = False  # some watched change carries the second it was written
        self.placed = False  # some deletion was found by a re-list (placed at its revision)
        self._top: dict[str, int] = {}  # the highest revision each stream has shown
        # per resource: its last change, for where a gap begins; per name: its changes (in
        # the cluster's order once ``order`` has run); per application object: its last read
        self.last_of: dict[str, Change] = {}
        self.sequences: dict[tuple[str, str, str], list[Change]] = {}
        self._read: dict[tuple[str, str, str], Change] = {}
        self._unsorted: set[tuple[str, str, str]] = set()  # names whose changes came unordered

    def watched(self, entry: Entry) -> Change:
        """One change a watch (or the first list) delivered. Called once per recorded event (a
        long history is a million of them), so what ``_follow`` does is written out here: the
        name's last change is looked up once, and the name's key, strings and uid are the
        first change's (each judge's replay hashes them at every change).

        Its moment: the second the API server wrote it in (managedFields). A write a manager
        makes stamps the fields it changed with the second it made it in; but some writes go
        through no manager and stamp nothing (a deletion, the mark a graceful one sets, a
        binding: the API server sets the node itself), and one of them carries the stamp of
        the write before it. So only a stamp newer than the one before (the name's last
        change) dates its change; any other change came after the stamp it carries, by how
        much the stamp cannot say."""
        key = (entry.resource, entry.namespace, entry.name)
        sequence = self.sequences.get(key)
        if sequence is None:
            sequence = self.sequences[key] = []
            previous = None
            key = (intern(key[0]), intern(key[1]), key[2])
        else:
            previous = sequence[-1]
            key = previous.key
        obj = entry.object
        if obj is None and previous is not None:  # a deletion saved without the object
            obj = previous.object
        uid, text = entry.uid, entry.rv
        rv = (int(text) if text.isdigit() else None) if text.__class__ is str else revision(text)
        if not uid or not text:  # kept with the entry by the recorder, or only in the object
            meta = (obj or {}).get("metadata") or {}
            uid = uid or meta.get("uid", "")
            if not text:
                rv = revision(meta.get("resourceVersion"))
        kind = entry.type or MODIFIED
        change = Change(entry, key, uid, rv or 0, kind, obj, kind != SYNC)
        extra = entry.extra
        written = seconds(extra.get("written", "")) if extra else math.nan
        change.written = written
        if written == written:  # not NaN
            self.timed = True
            change.lo = written + self.offset
            if kind == ADDED or (kind == MODIFIED and previous is not None and
                                 previous.uid == uid and written > previous.written):
                change.hi = change.lo + SECOND
                change.stamped = True
        elif kind == SYNC:
            change.hi = entry.mono
        else:  # a history saved before the recorder kept write times: its arrival
            change.lo = change.hi = entry.mono
        if kind == SYNC:
            change.hi = min(change.hi, entry.mono)  # a list shows what was written by then
        if rv is None:
            self.numbered = False
        elif rv > self._top.get(key[0], -1):
            self._top[key[0]] = rv
        if previous is not None:
            change.previous = previous
            if previous.uid == uid:
                change.uid = previous.uid
                if previous.after is not None:
                    change.before = previous.after
            if previous.rv > change.rv or (previous.rv == change.rv and previous.placed):
                self._unsorted.add(key)  # a re-list's, before what a watch had
        sequence.append(change)
        self.last_of[key[0]] = change
        self.changes.append(change)
        return change

    def _follow(self, change: Change, rv: int | None,
                sequence: list[Change] | None = None) -> None:
        """``change`` after the last of ``sequence``, its name's changes (looked up when not
        given)."""
        if rv is None:
            self.numbered = False
        elif rv > self._top.get(change.resource, -1):
            self._top[change.resource] = rv
        if sequence is None:
            sequence = self.sequences.setdefault(change.key, [])
        previous = sequence[-1] if sequence else None
        change.previous = previous
        if previous is not None:
            if previous.after is not None and previous.uid == change.uid:
                change.before = previous.after
            if previous.rv > change.rv or (previous.rv == change.rv and previous.placed):
                self._unsorted.add(change.key)  # a re-list's, before what a watch had
        sequence.append(change)
        self.last_of[change.resource] = change
        self.changes.append(change)

    def relisted(self, entry: Entry) -> list[Change]:
        """The changes a re-list found: each object at its own revision, each deletion at the
        list's (by then it had happened). A name found with another uid ended a life and began
        one."""
        listed = revision(entry.rv)
        if listed is None:
            listed = self._top.get(entry.resource)
        found: list[Change] = []
        for item in (entry.extra or {}).get("changes") or []:
            obj = item.get("object") or {}
            meta = _meta(obj)
            key = (entry.resource, meta.get("namespace", ""), meta.get("name", ""))
            sequence = self.sequences.get(key)
            previous = sequence[-1] if sequence else None
            uid = meta.get("uid", "")
            if item.get("type") == DELETED:
                found.append(self._gone(entry, key, obj, uid, listed))
                continue
            if previous is not None and previous.after is not None and uid and \
                    previous.uid and previous.uid != uid:
                found.append(self._gone(entry, key, previous.after, previous.uid, listed))
            rv = revision(meta.get("resourceVersion"))
            if previous is not None:
                key = previous.key
            change = Change(entry, key, uid, rv or 0, item.get("type") or MODIFIED, obj, False)
            change.hi = entry.mono
            if rv is None:
                change.lo = entry.mono if not self.timed else -INF
            self._follow(change, rv)
            found.append(change)
        return found

    def _gone(self, entry: Entry, key: tuple[str, str, str], obj: dict[str, Any], uid: str,
              listed: int | None) -> Change:
        change = Change(entry, key, uid, listed or 0, DELETED, obj, False)
        change.hi = entry.mono
        change.placed = self.placed = True
        self._follow(change, listed)
        return change

    def read(self, entry: Entry, obj: dict[str, Any] | None, seen: bool) -> Change:
        """One read of an application's own state, on the clock of the machine its probe ran
        on: asked at ``asked`` and answered at the stamp the entry carries; a read saved before
        both were kept carries when it was asked, and was answered by the time it was taken."""
        extra = entry.extra or {}
        key = (entry.resource, entry.namespace or _meta(obj).get("namespace", ""),
               entry.name or _meta(obj).get("name", ""))
        change = Change(entry, key, "", 0, MODIFIED if obj is not None else DELETED, obj, seen)
        if isinstance(extra.get("asked"), int | float):
            change.lo, change.hi = extra["asked"] + self.offset, entry.wall + self.offset
        else:
            change.lo = entry.wall + self.offset
            change.hi = max(entry.mono, change.lo)
        change.lo = min(change.lo, change.hi)
        previous = self._read.get(change.key)
        change.previous = previous
        change.before = previous.after if previous is not None else None
        self._read[change.key] = change
        self.last_of[change.resource] = change
        self.reads.append(change)
        return change

    def order(self) -> list[Change]:
        """The changes in the cluster's order: by revision (by arrival in a history recorded
        without them); a deletion a list found after the list's own revision."""
        changes = self.changes
        if self.numbered:  # stable: no tie (and without a placed deletion, by revision alone)
            changes = sorted(changes, key=(lambda c: (c.rv, c.placed)) if self.placed else RV)
        for position, change in enumerate(changes):
            change.order = position
        if self.numbered:  # each name's, too (as they arrived, but for a re-list's)
            for key in self._unsorted:
                self.sequences[key].sort(key=ORDER)
        return changes

    def bound(self, end: float) -> None:
        """Each moment bounded by the changes of its name before and after it (in the
        cluster's order, nothing of it is written before what preceded it, nor after what
        follows it: a name's lives come one after another) and by the end of the record.
        Another name's changes bound nothing: an object a judge does not speak of changes
        none of its moments. A deletion a list
        found is placed where it had happened by; its own moment is not one its neighbours
        can bound. A history recorded before the recorder kept write times is left on its
        arrival times, as the judges of that time read it."""
        if not self.timed:
            return
        for mine in self.sequences.values():  # a name's lives come one after another
            low = -INF
            for change in mine:
                if not change.placed:
                    if change.lo < low:
                        change.lo = low
                    else:
                        low = change.lo
            high = end
            for change in reversed(mine):
                if change.placed:
                    if change.hi > high:
                        change.hi = high
                    continue
                if change.hi > high:
                    change.hi = high
                else:
                    high = change.hi
                if change.lo > change.hi:
                    change.lo = change.hi  # a stamp from another clock: the order wins


__all__ = [
    "ADDED",
    "APP_STATES",
    "DELETED",
    "GAP_END",
    "MODIFIED",
    "SYNC",
    "WATCH",
    "Builder",
    "Change",
    "revision",
]
