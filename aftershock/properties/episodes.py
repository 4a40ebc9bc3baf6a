"""What happened to pods, computed once from the history model for the judges that rule on it
(B1-B4, G2-G8): when each life was bound and where, when it began to go and what made it go,
each with the evidence it rests on. A moment is the cluster's: a binding the watch delivered is
dated by its change, narrowed by the scheduler's audited request for it; a going by the audited
delete or eviction that caused it (the watch delivers it in its own time), else by the change
that showed it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aftershock.history import Action, Change, History, Life, Span
from aftershock.history.state import node_of, phase, selects

TERMINAL = ("Succeeded", "Failed")


def lives_selected(history: History, namespace: str, selector: dict[str, str]) -> list[Life]:
    """The pod lives of ``namespace`` recorded with these labels, first made first."""
    return [life for life in history.lives_of("pods", namespace)
            if life.ever(lambda obj: selects(selector, obj))]


def _narrowed(span: Span, action: Action | None) -> Span:
    if action is None or action.hi < span.lo or action.lo > span.hi:
        return span
    return Span(max(span.lo, action.lo), min(span.hi, action.hi))


@dataclass
class Binding:
    """A pod life bound to a node: the change that showed it, and its moment."""

    life: Life
    change: Change
    node: str
    at: Span
    action: Action | None  # the scheduler's audited binding request, where it was joined

    @property
    def ref(self) -> str:
        return self.change.ref


def bindings(history: History, lives: list[Life]) -> tuple[list[Binding], list[Change]]:
    """Each life's bindings a watch delivered (no node before, a node after), each dated on
    the cluster's clock; and those a list found (bound somewhere in a gap, or before the
    recording: their moment is not known, and no binding is dated by a later change)."""
    binds: dict[str, list[Action]] = {}
    for action in history.actions:
        if action.binds and action.life is not None:
            binds.setdefault(action.life.id, []).append(action)
    seen: list[Binding] = []
    unseen: list[Change] = []
    for life in lives:
        for change in life.changes:
            after = change.after
            if after is None or not node_of(after) or node_of(change.before or {}):
                continue
            if not change.seen:
                unseen.append(change)
                continue
            action = next((a for a in binds.get(life.id, ())
                           if a.at.before(change.at) is None), None)
            seen.append(Binding(life, change, node_of(after), _narrowed(change.at, action),
                                action))
    seen.sort(key=lambda b: b.change.order)
    return seen, unseen


@dataclass
class Going:
    """When a life began to go (a deletion mark, an eviction, its removal): the audited
    request that made it go where the record joins one, else the change that showed it."""

    life: Life
    at: Span
    action: Action | None
    change: Change | None


def going(history: History, life: Life, deletions: dict[str, list[Action]]) -> Going | None:
    """The first going of ``life``: its earliest delete or eviction the API server accepted
    (its moment is when that was written, wherever the watch delivered it), narrowed by the
    change that showed it, or that change alone."""
    change = life.going
    asked = deletions.get(life.id) or []
    action = min(asked, key=lambda a: (a.hi, a.lo)) if asked else None
    if action is None and change is None:
        return None
    if action is None:
        return Going(life, change.at, None, change)
    span = action.at
    if change is not None and action.at.before(change.at) is None:
        span = Span(max(action.lo, change.lo), min(action.hi, change.hi))
    return Going(life, span, action, change)


def deletions_by_life(history: History) -> dict[str, list[Action]]:
    """The deletes and evictions the API server accepted, by the life they were joined to."""
    found: dict[str, list[Action]] = {}
    for action in history.actions:
        if action.deletes and action.life is not None:
            found.setdefault(action.life.id, []).append(action)
    return found


def unjoined_deletions(history: History, lives: list[Life],
                       who: Callable[[str], bool] | None = None) -> list[Action]:
    """The deletes and evictions (by ``who``) of these lives' names that the record cannot tie
    to one life."""
    names = {life.key for life in lives}
    return [a for a in history.actions if a.deletes and a.life is None and a.key in names
            and (who is None or who(a.actor))]


def bound(pod: dict[str, Any] | None) -> bool:
    """Holds a place: bound, not being deleted, not finished."""
    return bool(pod) and bool(node_of(pod)) and not deleting(pod) and \
        phase(pod) not in TERMINAL


def succeeded(pod: dict[str, Any] | None) -> bool:
    return bool(pod) and phase(pod) == "Succeeded"


def deleting(pod: dict[str, Any] | None) -> bool:
    return bool(((pod or {}).get("metadata") or {}).get("deletionTimestamp"))
