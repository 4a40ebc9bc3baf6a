"""What the audit log says was asked of the API server: each request with who asked, what it
answered, and when on the cluster's clock (received and completed), joined to the life it acted
on: by the uid its response named (a create), else the one life of that name the record shows
existing at that moment. A request the record cannot tie to one life stays unjoined, and a
judge that needed it says so."""

from __future__ import annotations

from collections.abc import Sequence

from aftershock.history.clock import INF, Span, seconds
from aftershock.history.lives import Life
from aftershock.timeline.entry import Entry

EVICTION = "eviction"


class Action:
    __slots__ = ("actor", "code", "entry", "group", "hi", "labels", "life", "lo", "name",
                 "namespace", "refusal", "resource", "rv", "subresource", "uid", "verb")

    def __init__(self, entry: Entry, offset: float) -> None:
        extra = entry.extra or {}
        self.entry = entry
        self.resource, self.namespace, self.name = entry.resource, entry.namespace, entry.name
        self.subresource, self.verb, self.actor = entry.subresource, entry.verb, entry.actor
        self.code, self.uid = entry.code, entry.uid
        self.refusal = entry.detail  # why the API server refused it (audit_fields: else "")
        self.group = extra.get("group", "")
        self.labels: dict[str, str] = extra.get("labels") or {}
        self.rv = str(extra.get("rv", ""))
        received = seconds(extra.get("received", "")) if "received" in extra else float("nan")
        self.hi = entry.mono  # completed: the moment the log stamps it with
        self.lo = received + offset if received == received else entry.mono
        self.lo = min(self.lo, self.hi)
        self.life: Life | None = None

    @property
    def at(self) -> Span:
        return Span(self.lo, self.hi)

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource, self.namespace, self.name)

    @property
    def deletes(self) -> bool:
        """A delete or an eviction the API server accepted."""
        return self.ok and ((self.verb == "delete" and not self.subresource) or
                            (self.verb == "create" and self.subresource == EVICTION))

    @property
    def creates(self) -> bool:
        """A create the API server accepted, or a server-side apply that made the object (its
        answer, 201, says so)."""
        return self.ok and not self.subresource and (
            self.verb == "create" or (self.verb == "patch" and self.code == 201))

    @property
    def binds(self) -> bool:
        return self.ok and self.verb == "create" and self.subresource == "binding"

    @property
    def ref(self) -> str:
        return self.entry.ref

    def __repr__(self) -> str:
        sub = f"/{self.subresource}" if self.subresource else ""
        return f"<{self.verb}{sub} {self.ref} by {self.actor} {self.code} {self.at}>"


def join(actions: Sequence[Action], lives: dict[str, Life],
         named: dict[tuple[str, str, str], list[Life]], timed: bool = True) -> None:
    """Each action's life: the uid its response named, else the one life of its name that
    the record shows could have existed when it was made (a life whose create the log has by
    its uid was made when that create was received, at the earliest: a watch that lost its
    creation in a gap cannot say so). Once the log has made a life of the name that the record
    lost, a request of the name after it may have been of that one: it is joined to none."""
    made: dict[str, float] = {}
    creates: dict[tuple[str, str, str], list[Action]] = {}  # by name, as the log made them
    for action in actions:
        action.life = None
        if action.uid and action.uid in lives:
            life = action.life = lives[action.uid]
            if action.creates and action.lo > made.get(life.id, -INF):
                made[life.id] = action.lo
        if action.uid and action.creates and action.key in named:
            creates.setdefault(action.key, []).append(action)
    lost = _lost(creates, lives)
    for action in actions:
        if action.life is not None:
            continue
        candidates = [life for life in named.get(action.key, ())
                      if may_act_on(life, action, timed, made.get(life.id, -INF))]
        if len(candidates) == 1 and not any(lo <= action.hi and action.lo < hi
                                            for lo, hi in lost.get(action.key, ())):
            action.life = candidates[0]


def _lost(creates: dict[tuple[str, str, str], list[Action]], lives: dict[str, Life]
          ) -> dict[tuple[str, str, str], list[tuple[float, float]]]:
    """For each name, when a life the log made but the record lost may have been there: from
    its create to the next create of the name (a name's lives come one after another)."""
    found: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for key, made in creates.items():
        for this, after in zip(made, [*made[1:], None], strict=True):
            if this.uid not in lives:
                found.setdefault(key, []).append((this.lo, INF if after is None else after.hi))
    return found


def may_act_on(life: Life, action: Action, timed: bool = True, made: float = -INF) -> bool:
    """Whether the action could have acted on ``life``: it was not certainly made after the
    action completed (nor, for a create, before it was received), nor certainly gone before it
    was received; and a deletion left it going (a history whose moments are arrivals, when
    the recorder heard of it, cannot say so). ``made``: the earliest it was made, by the
    create the log joined to it by uid."""
    at, born = action.at, life.born
    if max(born.lo, made) > at.hi:
        return False
    if action.creates:
        return born.hi >= at.lo
    gone = life.gone
    if gone is not None and gone.at.hi < at.lo:
        return False
    if action.deletes and timed:  # it left the life going: at its moment, or going already
        going = life.going
        return going is not None and going.lo <= at.hi
    return True
