"""The recorded history, read once into the one model every judge reads.

Built from a scenario's timeline (what the recorder appended, in the order it arrived):

- the changes of every object, in the cluster's order, each a moment on the cluster's clock
  (``changes``: a ``Change`` says its state before and after, whether a watch delivered it or
  a list found it, and the entry that recorded it);
- each object's lives, by uid (``lives``);
- the audit log's requests, each joined to the life it acted on (``actions``);
- an application's reads of its own state (``reads``);
- what the recorder could not vouch for (``troubles``), and what it said of the record (what
  it records, whether an audit log was read and had caught up, the cluster's schedulers and
  version).

Nothing here asks when the recorder received a watch event: two watches deliver in their own
time, and the cluster's order and clock are what a verdict may rest on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from typing import Any

from aftershock.history.actions import Action, join
from aftershock.history.changes import DELETED, Builder, Change
from aftershock.history.clock import INF, Span
from aftershock.history.coverage import Trouble
from aftershock.history.dating import date
from aftershock.history.lives import Life, lives_of
from aftershock.history.witness import Mark
from aftershock.timeline.audit import UNAUDITED
from aftershock.timeline.collector import keep_out
from aftershock.timeline.entry import (
    ANOMALY,
    APP_STATES,
    AUDIT,
    AUDIT_LOG,
    AUDIT_SYNC,
    ERROR,
    GAP_END,
    GAP_START,
    KUBERNETES,
    MARK,
    QUIET,
    SCHEDULERS,
    UNSETTLED,
    WATCH,
    Entry,
)
from aftershock.timeline.state import State

MISSED = "the watch did not deliver the deletion"  # how the recorder names such a gap
DATING_ROUNDS = 4
# The audit log's moments are the API server's wall clock put on the recorder's scale (the
# same machine's clock: the local processes, kind's containers): a write this close to a gap
# is taken to be in it.
VOUCH_SLACK = 0.25
KEEP_OUT_AT = 100_000  # changes: a model this long is kept out of the cyclic collector


class History:
    """The model of one recorded history (``entries``: a scenario's timeline, or its first
    entries up to a judgement)."""

    def __init__(self, entries: Sequence[Entry]):
        self.entries = entries

    @classmethod
    def of(cls, history: History | Iterable[Entry]) -> History:
        """The model of ``history`` (a model already, or what a recorder appended)."""
        if isinstance(history, History):
            return history
        return cls(history if isinstance(history, list) else list(history))

    # --- the record as a whole -----------------------------------------------------------

    @property
    def origin(self) -> float:
        return self.entries[0].mono if self.entries else 0.0

    @property
    def end(self) -> float:
        """The latest moment the record vouches for: its last entry (a judgement ends the
        record it judges with a mark of the recorder's own, when every watch had caught up)."""
        return self.entries[-1].mono if self.entries else 0.0

    @property
    def offset(self) -> float:
        """The recorder's scale minus the wall clock (an audit stamp + offset is a moment)."""
        return self._built.offset

    @cached_property
    def _built(self) -> Builder:
        builder = Builder(self.entries)
        self._facts: dict[str, Any] = {"recording": None, "audited": None, "sync": None,
                                       "schedulers": None, "kubernetes": None,
                                       "unserved": set(), "unlistable": set()}
        self._actions: list[Action] = []
        self._marks: list[Entry] = []
        self._gaps: list[tuple[Entry, Change | None, Entry | None, list[Change]]] = []
        self._moments: list[Trouble] = []
        opened: dict[str, tuple[Entry, Change | None]] = {}
        for entry in self.entries:
            kind = entry.kind
            if kind == WATCH:
                if entry.resource == APP_STATES:
                    builder.read(entry, entry.object, True)
                elif entry.object is not None or entry.type == DELETED:
                    builder.watched(entry)
            elif kind == AUDIT:
                self._actions.append(Action(entry, builder.offset))
                if self._facts["audited"] is None:
                    self._facts["audited"] = True
            elif kind == GAP_START:
                if entry.resource not in opened:
                    opened[entry.resource] = (entry, builder.last_of.get(entry.resource))
            elif kind == GAP_END:
                found: list[Change] = []
                if entry.resource == APP_STATES:
                    for item in (entry.extra or {}).get("changes") or []:
                        builder.read(entry, None if item.get("type") == DELETED
                                     else item.get("object"), False)
                elif entry.resource != AUDIT_LOG:
                    found = builder.relisted(entry)
                began = opened.pop(entry.resource, None)
                if began is not None:
                    self._gaps.append((began[0], began[1], entry, found))
            elif kind in (ERROR, ANOMALY):
                self._moments.append(Trouble(entry.resource, entry.mono, entry.mono,
                                             f"recorder {kind} on {entry.resource}: "
                                             f"{entry.detail}"))
            elif kind == UNSETTLED:
                self._moments.append(Trouble(QUIET, entry.mono, INF, entry.detail))
            elif kind == AUDIT_SYNC:
                self._facts["sync"] = entry
            elif kind == MARK:
                self._mark(entry)
        for began, last in opened.values():
            self._gaps.append((began, last, None, []))
        return builder

    def _mark(self, entry: Entry) -> None:
        self._marks.append(entry)
        extra = entry.extra or {}
        facts = self._facts
        if "recording" in extra:
            facts["recording"] = {**(facts["recording"] or {}), **extra["recording"]}
            if "audit" in extra:
                facts["audited"] = bool(extra["audit"])
        for why in ("unserved", "unlistable"):
            for kind in extra.get(why) or ():
                facts[why] |= {kind, kind.split(".", 1)[0]}
        if SCHEDULERS in extra:
            facts["schedulers"] = list(extra[SCHEDULERS])
        if KUBERNETES in extra:
            facts["kubernetes"] = extra[KUBERNETES]

    @cached_property
    def _model(self) -> tuple[list[Change], dict[str, Life], list[Action]]:
        """The changes in the cluster's order, each bounded by its stamp and its neighbours;
        the lives; the audit log's requests joined to them; and, where the audit log can
        vouch that it has every write, each change dated by the request that made it and its
        neighbours bounded again by those."""
        built = self._built
        changes = built.order()
        built.bound(self.end)
        self._place_gaps(changes)
        lives = lives_of(built.sequences.values())
        named: dict[tuple[str, str, str], list[Life]] = {}
        for life in lives.values():
            named.setdefault(life.key, []).append(life)
        actions = sorted(self._actions, key=lambda a: (a.hi, a.lo, a.entry.seq))
        join(actions, lives, named, built.timed)
        if built.timed and self.audited and actions and not self.troubles_of({AUDIT_LOG}):
            # the log is whole up to the judgement once read to it, else up to what was read
            horizon = INF if self.audit_caught_up else max(a.hi for a in actions)
            for _ in range(DATING_ROUNDS):  # a dated change may tell another request's life
                if not date(lives.values(), actions, self.offset, horizon):
                    break
                built.bound(self.end)
                self._place_gaps(changes)
                join(actions, lives, named, built.timed)
        self._named_lives = named
        if len(changes) >= KEEP_OUT_AT:
            keep_out(self)
        return changes, lives, actions

    @property
    def changes(self) -> list[Change]:
        """Every change of an object the API server serves, in the cluster's order."""
        return self._model[0]

    def troubles_of(self, reads: set[str]) -> list[Trouble]:
        """The recorder's own errors and the audit log's gaps, before the changes are placed
        (those that need no change's moment)."""
        self._built  # noqa: B018
        found = [t for t in self._moments if t.resource in reads]
        found += [Trouble(began.resource, began.mono, ended.mono if ended else INF,
                          began.detail) for began, last, ended, listed in self._gaps
                  if began.resource in reads and not self._vouched(began, last, ended, listed)]
        return found

    def _vouched(self, began: Entry, last: Change | None, ended: Entry | None,
                 listed: list[Change]) -> bool:
        """A gap the audit log vouches hid nothing: its re-list found no difference, and the
        log, read whole up to the judgement, has no write of the resource from the last change
        the watch delivered to the re-list (an object made and gone inside it, or changed and
        changed back, leaves the same list; it cannot leave no request)."""
        resource = began.resource
        if ended is None or listed or resource in UNAUDITED or resource in (AUDIT_LOG,
                                                                           APP_STATES):
            return False
        writes = self._writes
        if writes is None:
            return False
        start = min(last.lo if last is not None else self.origin, began.mono) - VOUCH_SLACK
        end = ended.mono + VOUCH_SLACK
        return not any(lo <= end and hi >= start for lo, hi in writes.get(resource, ()))

    @cached_property
    def _writes(self) -> dict[str, list[tuple[float, float]]] | None:
        """Each resource's audited requests (when each was received and completed), when the
        log can vouch it has every one: read whole to the judgement, with no trouble of its
        own (None otherwise)."""
        if not self._facts["audited"] or not self.audit_caught_up or \
                self.troubles_of({AUDIT_LOG}):
            return None
        found: dict[str, list[tuple[float, float]]] = {}
        for action in self._actions:
            found.setdefault(action.resource, []).append((action.lo, action.hi))
        return found

    def _place_gaps(self, changes: list[Change]) -> None:
        """Each gap as a trouble from the last change of its resource the recorder had (or,
        for a deletion a watch never delivered, of that object), and each deletion a re-list
        found dated from then."""
        troubles = []
        for began, last, ended, found in self._gaps:
            if self._vouched(began, last, ended, found):
                continue
            placed = [c for c in found if c.placed]
            if began.detail.startswith(MISSED) and placed:
                start = min((c.previous.lo if c.previous else -INF) for c in placed)
            else:
                start = last.lo if last is not None else self.origin
            start = min(start, began.mono)
            for change in found:  # each written after the last change the watch delivered
                change.lo = min(max(change.lo, start), change.hi)
            end = ended.mono if ended is not None else INF
            what = (f"a gap in the history of {began.resource} ({began.detail})" if ended
                    else f"a gap in the history of {began.resource} that never closed "
                         f"({began.detail})")
            troubles.append(Trouble(began.resource, start, end, what))
        self._troubles = troubles + self._moments

    @cached_property
    def reads(self) -> list[Change]:
        """An application's reads of its own state (``appstates``), in the order it read."""
        self._model  # noqa: B018 (the gaps placed first)
        return sorted(self._built.reads, key=lambda c: (c.hi, c.entry.seq))

    # --- what the recorder said of the record -------------------------------------------

    def troubles(self, reads: frozenset[str] | set[str]) -> list[Trouble]:
        self._model  # noqa: B018
        return [t for t in self._troubles if t.resource in reads]

    def unsure_why(self, reads: Iterable[str], change: Change) -> str:
        """Why a change's moment is known only within its span: the gap it fell in, or the
        whole-second stamp it carries."""
        trouble = self.blind(reads, change.lo, change.hi)
        if trouble is not None:
            return trouble.what
        return "its moment is known only to the second the API server stamped"

    def blind(self, reads: Iterable[str], start: float, end: float) -> Trouble | None:
        """The first trouble on ``reads`` that touches [start, end], if any."""
        wanted = set(reads)
        return next((t for t in self.troubles(wanted) if t.overlaps(start, end)), None)

    @property
    def recording(self) -> dict[str, str] | None:
        """What the recorder said it records (None: a history from before it said so)."""
        self._built  # noqa: B018
        return self._facts["recording"]

    @property
    def unserved(self) -> set[str]:
        self._built  # noqa: B018
        return self._facts["unserved"]

    @property
    def unlistable(self) -> set[str]:
        self._built  # noqa: B018
        return self._facts["unlistable"]

    @property
    def audited(self) -> bool | None:
        self._built  # noqa: B018
        return self._facts["audited"]

    @property
    def audit_sync(self) -> Entry | None:
        """The last reading of the audit log before a judgement, if any."""
        self._built  # noqa: B018
        return self._facts["sync"]

    @property
    def audit_caught_up(self) -> bool:
        sync = self.audit_sync
        return sync is None or bool((sync.extra or {}).get("caught_up", False))

    @property
    def schedulers(self) -> list[dict[str, Any]] | None:
        """The schedulers the harness established the cluster runs (None: none said)."""
        self._built  # noqa: B018
        return self._facts["schedulers"]

    @cached_property
    def marks(self) -> list[Mark]:
        """What the harness did (its steps, the faults it fired), each at its own moment."""
        self._built  # noqa: B018
        return [Mark(entry) for entry in self._marks]

    # --- objects ---------------------------------------------------------------------------

    @cached_property
    def _by_resource(self) -> dict[str, list[Change]]:
        found: dict[str, list[Change]] = {}
        for change in self.changes:
            found.setdefault(change.resource, []).append(change)
        return found

    def changes_of(self, resources: Iterable[str] | str | None = None,
                   namespace: str | None = None) -> list[Change]:
        """The changes of these resources (all, with None), in the cluster's order."""
        if resources is None:
            found = self.changes
        elif isinstance(resources, str):
            found = self._by_resource.get(resources, [])
        else:
            wanted = set(resources)
            if len(wanted) == 1:
                found = self._by_resource.get(next(iter(wanted)), [])
            else:
                found = [c for c in self.changes if c.resource in wanted]
            if APP_STATES in wanted:
                found = merged(found, self.reads)
        if namespace is not None:
            found = [c for c in found if c.namespace == namespace]
        return found

    @property
    def lives(self) -> dict[str, Life]:
        """Every object's lives, by uid (or, in a history that kept none, name and count)."""
        return self._model[1]

    @property
    def _named(self) -> dict[tuple[str, str, str], list[Life]]:
        self._model  # noqa: B018
        return self._named_lives

    def lives_of(self, resource: str, namespace: str | None = None,
                 name: str | None = None) -> list[Life]:
        """The lives of one resource (in a namespace, of a name), first made first."""
        if name is not None and namespace is not None:
            return list(self._named.get((resource, namespace, name), ()))
        return [life for key, lives in self._named.items() if key[0] == resource
                and (namespace is None or key[1] == namespace)
                and (name is None or key[2] == name) for life in lives]

    def life(self, uid: str) -> Life | None:
        return self.lives.get(uid)

    # --- who did what --------------------------------------------------------------------

    @property
    def actions(self) -> list[Action]:
        """The audit log's requests, in the order the API server completed them, each joined
        to the life it acted on where the record can tell which."""
        return self._model[2]

    # --- replaying -------------------------------------------------------------------------

    def replay(self, resources: Iterable[str] | str | None = None,
               state: State | None = None) -> Iterator[tuple[Change, State]]:
        """Each change (of ``resources``) with the state just after it (one State, updated in
        place), in the cluster's order. A re-list's changes are one snapshot: each is yielded
        with all of them applied (in their list order, an object's listed state beside another's
        older one would be a state the cluster never had)."""
        state = state if state is not None else State()
        put = state.put
        changes = self.changes_of(resources)
        i, n = 0, len(changes)
        while i < n:
            change = changes[i]
            i += 1
            if change.seen:  # a watch's change: its own moment
                put(change.key, change.after, change)
                yield change, state
                continue
            first = i - 1
            while i < n and changes[i].entry is change.entry and not changes[i].seen:
                i += 1
            snapshot = changes[first:i]
            for listed in snapshot:
                put(listed.key, listed.after, listed)
            for listed in snapshot:
                yield listed, state

    def state_by(self, moment: float, resources: Iterable[str] | str | None = None
                 ) -> tuple[State, list[Change]]:
        """The state of ``resources`` at ``moment``: every change certainly made by then
        applied, and the changes that may or may not have been (their span holds it)."""
        state = State()
        unsure: list[Change] = []
        for change in self.changes_of(resources):
            if change.lo > moment:
                break
            if change.hi <= moment:
                state.put(change.key, change.after, change)
            else:
                unsure.append(change)
        return state, unsure

    # --- witnesses ---------------------------------------------------------------------

    @cached_property
    def _spans(self) -> dict[int, Span]:
        spans: dict[int, Span] = {}
        for change in [*self.changes, *self.reads]:
            key = id(change.entry)
            known = spans.get(key)
            spans[key] = change.at if known is None else \
                Span(min(known.lo, change.lo), max(known.hi, change.hi))
        for action in self.actions:
            spans[id(action.entry)] = action.at
        return spans

    def when(self, entry: Entry) -> Span:
        """When what ``entry`` recorded happened, on the cluster's clock (a mark, a moment of
        the recorder's own, is its own time)."""
        found = self._spans.get(id(entry))
        if found is not None:
            return found
        return Span.at(entry.mono)


def merged(changes: list[Change], reads: list[Change]) -> list[Change]:
    """The API server's changes and an application's reads as one sequence: a read is placed
    after every change that was certainly made before it was answered."""
    if not reads:
        return changes
    out: list[Change] = []
    position = 0
    for read in reads:
        while position < len(changes) and changes[position].lo <= read.hi:
            out.append(changes[position])
            position += 1
        out.append(read)
    out.extend(changes[position:])
    return out


def nan(value: float) -> bool:
    return math.isnan(value)
