"""B: gang schedulers (docs/properties.md): a pod group bound all or nothing, onto nodes that
take it, evicted whole, never evicted while it keeps its minimum, and a queue's pods within its
limit. Judged from the history model: each pod group's pod lives, their bindings and goings
(``episodes``) on the cluster's clock, the nodes' and groups' recorded states in the cluster's
order, and who evicted from the audit log, each eviction by the life it removed."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from aftershock.checks.attribution import actor
from aftershock.checks.verdict import NOT_APPLICABLE, PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.gang_scheduler import PodGroup, Queue, cpu_of
from aftershock.history import Action, Change, History, Life, Span
from aftershock.history.state import node_of, phase
from aftershock.properties.base import Params, check, prop
from aftershock.properties.episodes import (
    TERMINAL,
    Binding,
    Going,
    bindings,
    bound,
    deletions_by_life,
    going,
    lives_selected,
    succeeded,
    unjoined_deletions,
)

Recorded = History | Iterable


def _lives(history: History, group: PodGroup) -> list[Life]:
    return lives_selected(history, group.namespace, group.selector())


def all_or_nothing(history: Recorded, group: PodGroup, window: float,
                   name: str = "all_or_nothing") -> Verdict:
    """B1: every binding of a group's pod is followed, within ``window`` seconds, by a state
    in which the group keeps (pods bound and not finished, or Succeeded) at least its minimum
    as it was at the binding's revision: a minCount changed mid-flight judges the bindings
    after it by the new one, and excuses none before it. So a binding in part never stands
    longer than the binding window. A binding a list found
    (in a gap) has no moment to count the window from: it is not judged, and the gap keeps a
    PASS from being earned. A binding in part whose missing pods' binding calls the audit log
    shows failed in that window is excused: KEP-4671 accepts that binding "could fail for some
    pods in the workload"."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", group.resource})
    lives = _lives(history, group)
    found, _ = bindings(history, lives)
    failed = _failed_bindings(history, lives)
    excused: list[str] = []
    if not found:
        return Verdict(name, PASS, f"no pod of {group.ref} was bound", [], origin, subjects=0,
                       reads=reads)
    pending = list(found)
    seen = _Window()
    unsure: Verdict | None = None
    for change, state in history.replay({"pods", group.resource}):
        for binding in [b for b in pending if change.lo > b.at.hi + window]:
            pending.remove(binding)
            verdict = _expired(binding, group, window, seen, origin, reads, failed, found)
            if isinstance(verdict, str):
                excused.append(verdict)
                continue
            if verdict.status == VIOLATED:
                return verdict
            unsure = unsure or verdict
        minimum = group.min_member(state)
        kept = len(group.kept(state))
        still = []
        for binding in pending:
            if binding.change.order <= change.order:
                key = id(binding)
                seen.most[key] = max(seen.most.get(key, 0), kept)
                if minimum is not None and key not in seen.minimum:
                    seen.minimum.add(key)  # the minimum in force at the binding's revision:
                    seen.need[key] = minimum  # a later change of it does not excuse it
                need = seen.need.get(key)
                if need is not None and kept >= need:
                    if change is binding.change or change.hi <= binding.at.lo + window:
                        continue  # kept its minimum in the window, for certain
                    if change.lo <= binding.at.hi + window:
                        seen.maybe.add(key)
            still.append(binding)
        pending = still
    for binding in pending:
        if history.end < binding.at.hi + window:
            unsure = unsure or Verdict(name, UNKNOWN, f"{binding.ref} was bound at "
                                       f"+{binding.at.hi - origin:.3f}s, less than {window:g}s "
                                       f"before the history ends, and {group.ref} has not kept "
                                       "its minimum since", [], origin, reads=reads)
            continue
        verdict = _expired(binding, group, window, seen, origin, reads, failed, found)
        if isinstance(verdict, str):
            excused.append(verdict)
            continue
        if verdict.status == VIOLATED:
            return verdict
        unsure = unsure or verdict
    if unsure is not None:
        return unsure
    summary = (f"each of {len(found)} bindings of {group.ref}'s pods was followed within "
               f"{window:g}s by the group keeping its minimum")
    if excused:
        summary = (f"{summary}, but for {len(excused)} in part whose missing pods' binding "
                   f"calls failed (KEP-4671 accepts that race): {'; '.join(excused)}")
    return Verdict(name, PASS, summary, [], origin, subjects=len(found), reads=reads)


def _failed_bindings(history: History, lives: list[Life]) -> list[Action]:
    """The binding calls to the group's pods the API server refused (by the audit log)."""
    keys, ids = {life.key for life in lives}, {life.id for life in lives}
    return [a for a in history.actions if a.verb == "create" and a.subresource == "binding"
            and 400 <= a.code < 500 and a.key in keys and (a.life is None or a.life.id in ids)]


class _Window:
    """What each pending binding's window showed so far: the most pods kept, whether a
    minimum was on record, whether the group may have kept it in time."""

    def __init__(self) -> None:
        self.most: dict[int, int] = {}
        self.minimum: set[int] = set()
        self.need: dict[int, int] = {}  # the minimum in force at the binding
        self.maybe: set[int] = set()


def _expired(binding: Binding, group: PodGroup, window: float, seen: _Window, origin: float,
             reads: frozenset[str], failed: list[Action], found: list[Binding]) -> Verdict | str:
    """The verdict on a binding whose window certainly passed without the group certainly
    keeping its minimum in it; or why that binding in part is excused: the API server refused
    (4xx) the binding calls of enough of the group's pods not bound around it."""
    key = id(binding)
    if key not in seen.minimum:
        return Verdict("all_or_nothing", UNKNOWN, f"{binding.ref} was bound, and no minimum "
                       f"of {group.ref} was recorded in the {window:g}s after (no object, or no "
                       f"number at {group.mapping['min_member_path']})", [], origin,
                       reads=reads)
    if key in seen.maybe:
        return Verdict("all_or_nothing", UNKNOWN, f"{binding.ref} was bound to "
                       f"node/{binding.node}, and {group.ref} kept its minimum in a state "
                       f"written within a second of the {window:g}s binding window: whether in "
                       "time is not known", [binding.change.entry], origin, reads=reads)
    lo, hi = binding.at.lo - window, binding.at.hi + window
    bound = {b.life.name for b in found if b.at.hi >= lo and b.at.lo <= hi}
    near = {a.name for a in failed if a.hi >= lo and a.lo <= hi} - bound
    if near and seen.most.get(key, 0) + len(near) >= seen.need.get(key, 0):
        return (f"{binding.ref} bound, the calls to bind {', '.join(sorted(near))} refused "
                f"({', '.join(sorted({str(a.code) for a in failed if a.name in near}))})")
    return Verdict("all_or_nothing", VIOLATED, f"{binding.ref} was bound to "
                   f"node/{binding.node} and {group.ref} kept at most {seen.most.get(key, 0)} "
                   f"pods (bound or Succeeded) in the {window:g}s after, below its minimum: a "
                   "binding in part", [binding.change.entry], origin, subjects=1,
                   window=(binding.at.lo, binding.at.hi + window), by_absence=True,
                   reads=reads | {"audit"})  # no refused call of the others' excuses it


def unfit(node: dict[str, Any], pod: dict[str, Any]) -> str | None:
    """Why a node would not take the pod: cordoned, a taint the pod does not tolerate, or not
    Ready."""
    spec = node.get("spec") or {}
    if spec.get("unschedulable"):
        return "cordoned"
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in spec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and \
                not any(_tolerates(t, taint) for t in tolerations):
            return f"tainted {taint.get('key')}:{taint.get('effect')}"
    ready = [c for c in (node.get("status") or {}).get("conditions") or []
             if c.get("type") == "Ready"]
    if not ready or ready[0].get("status") != "True":
        return "not Ready"
    return None


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return (toleration.get("key") == taint.get("key")
            and toleration.get("value", "") == taint.get("value", ""))


def bound_onto_fit_nodes(history: Recorded, group: PodGroup, grace: float,
                         name: str = "bound_onto_fit_nodes") -> Verdict:
    """B2: no pod of the group is bound onto a node that, at the binding (the cluster's order),
    was cordoned, tainted against it or not Ready, and had been so for ``grace`` seconds (a
    scheduler decides on a snapshot: a change a moment before its binding is a race every
    scheduler has, kube-scheduler too). A binding a list found has no moment: not judged."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", "nodes"})
    found, _ = bindings(history, _lives(history, group))
    nodes: dict[str, list[Change]] = {}
    for change in history.changes_of("nodes"):
        nodes.setdefault(change.name, []).append(change)
    unsure: str | None = None
    for binding in found:
        pod = binding.change.after or {}
        earlier = [c for c in nodes.get(binding.node, []) if c.order < binding.change.order]
        if not earlier or earlier[-1].after is None:
            continue  # a node never recorded (or gone) is not judged here
        why = unfit(earlier[-1].after, pod)
        if why is None:
            continue
        since = earlier[-1]
        for change in reversed(earlier[:-1]):
            if change.after is None or unfit(change.after, pod) != why:
                break
            since = change
        least, longest = binding.at.lo - since.hi, binding.at.hi - since.lo
        if least >= grace:
            witness = [since.entry, binding.change.entry] if since is earlier[-1] else \
                [since.entry, earlier[-1].entry, binding.change.entry]
            return Verdict(name, VIOLATED, f"{binding.ref} was bound to "
                           f"node/{binding.node}, {why} for at least {least:.2f}s by then",
                           witness, origin, subjects=len(found), reads=reads)
        if longest >= grace and unsure is None:
            unsure = (f"{binding.ref} was bound to node/{binding.node}, {why} for "
                      f"{max(least, 0):.2f}s to {longest:.2f}s by then (whole-second stamps): "
                      f"whether for the {grace:g}s grace is not known")
    if unsure is not None:
        return Verdict(name, UNKNOWN, unsure, [], origin, subjects=len(found), reads=reads)
    summary = (f"{len(found)} bindings of {group.ref}'s pods, each onto a node that took "
               "them" if found else f"no pod of {group.ref} was bound")
    return Verdict(name, PASS, summary, [], origin, subjects=len(found), reads=reads)


def _evictions(history: History, lives: list[Life], who: str) -> tuple[list[Action],
                                                                         list[Action]]:
    """The evictions and deletes ``who`` made of these lives (each by the life it removed),
    and those of their names the record cannot tie to one life."""
    ids = {life.id for life in lives}
    is_actor = actor(who, exact=True)
    joined = [a for a in history.actions if a.deletes and a.life is not None
              and a.life.id in ids and is_actor(a.actor)]
    return joined, unjoined_deletions(history, lives, is_actor)


def group_evictions(history: History, group: PodGroup, who: str) -> tuple[list[Action],
                                                                          list[Action]]:
    """The evictions and deletes ``who`` made of the group's pods (each by the life it
    removed), and those of their names the record cannot tie to one life."""
    return _evictions(history, _lives(history, group), who)


def evicted_whole(history: Recorded, group: PodGroup, who: str, window: float,
                  name: str = "evicted_whole") -> Verdict:
    """B3: once the scheduler (``who``, by the audit log) evicts or deletes a pod of the group,
    every pod the group had bound then is gone or going within ``window`` seconds: going from
    the moment the deletion that made it go was written (its audited request, on the
    cluster's clock, wherever its watch event came), finished, or gone."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", "audit"})
    single = _disrupted_singly(history, group)
    if single:
        return Verdict(name, NOT_APPLICABLE, single, [], origin, subjects=0, reads=reads)
    lives = _lives(history, group)
    evictions, loose = _evictions(history, lives, who)
    deletions = deletions_by_life(history)
    goings = {life.id: going(history, life, deletions) for life in lives}
    unsure: str | None = None
    for eviction in evictions:
        deadline = eviction.hi + window
        if history.end < deadline:
            return Verdict(name, UNKNOWN, f"the history ends less than {window:g}s after "
                           f"{group.ref}'s eviction at +{eviction.hi - origin:.3f}s", [],
                           origin, reads=reads)
        for life in lives:
            if life is eviction.life:
                continue
            had = life.holds(eviction.at, bound)
            if had is False:
                continue
            gone = _gone_by(life, goings.get(life.id), deadline)
            if gone is True:
                continue
            if had is True and gone is False:
                last = [c for c in life.changes if c.lo <= deadline][-1:]
                return Verdict(name, VIOLATED, f"{who} evicted {eviction.ref} of {group.ref}, "
                               f"and {life.ref} of it was still bound to "
                               f"node/{node_of(life.latest or {})} {window:g}s later",
                               [eviction.entry, *(c.entry for c in last)], origin,
                               subjects=len(evictions), window=(eviction.lo, deadline),
                               by_absence=True, reads=reads)
            unsure = unsure or (f"whether {life.ref} was bound when {who} evicted "
                                f"{eviction.ref}, or gone {window:g}s later, the record's "
                                "moments cannot say")
    if unsure is None and loose:
        unsure = (f"{who} evicted {', '.join(sorted({a.ref for a in loose}))}, and the record "
                  f"cannot tell which life of that name it removed")
    if unsure is not None:
        return Verdict(name, UNKNOWN, unsure, [], origin, subjects=len(evictions), reads=reads)
    summary = (f"{len(evictions)} evictions of {group.ref}'s pods by {who}, each taking the "
               "whole group" if evictions else f"{who} evicted no pod of {group.ref}")
    return Verdict(name, PASS, summary, [], origin, subjects=len(evictions), reads=reads)


def _disrupted_singly(history: History, group: PodGroup) -> str | None:
    """Why B3 does not apply to the group: every recorded state of its object asks for its
    pods to be disrupted one at a time (KEP-5710: disruptionMode Single, the default)."""
    states = [obj for life in history.lives_of(group.resource, group.namespace, group.name)
              for obj in life.objects()]
    modes = {group.disrupted_whole(obj) for obj in states}
    if not states or modes != {False}:
        return None
    return (f"{group.ref}'s disruptionMode is Single (KEP-5710: \"Defaults to Single if "
            "unset\"), under which its pods may be disrupted one at a time; an eviction that "
            "takes it whole is asked only of disruptionMode All")


def _gone_by(life: Life, went: Going | None, deadline: float) -> bool | None:
    """Whether the life was going, finished or gone by ``deadline``."""
    if went is not None and went.at.hi <= deadline:
        return True
    finished = life.holds(Span.at(deadline), lambda obj: obj is None or not bound(obj))
    if finished is True:
        return True
    if went is not None and went.at.lo <= deadline:
        return None
    return finished


def kept_not_evicted(history: Recorded, group: PodGroup, who: str,
                     name: str = "kept_not_evicted") -> Verdict:
    """B4: the scheduler (``who``, by the audit log) never evicts or deletes a pod of a group
    that keeps its minimum then, its Succeeded pods counted: a gang that is completing is not
    stale. "Then" is when the eviction was written, on the cluster's clock: a pod kept then is
    one bound (not going, not finished) or Succeeded at that moment, its going dated by the
    deletion that made it go. Evictions of one sweep (their moments overlap) are ordered by
    none of the record's clocks; but one of them was written first, when the others' pods were
    still kept: if the group kept its minimum at each of them so counted, whichever came first
    broke it."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", group.resource, "audit"})
    lives = _lives(history, group)
    evictions, loose = _evictions(history, lives, who)
    deletions = deletions_by_life(history)
    goings = {life.id: going(history, life, deletions) for life in lives}
    unsure: str | None = None
    for eviction in evictions:
        sweep = [e for e in evictions if e.at.before(eviction.at) is None]
        counted = _kept_at(history, group, lives, goings, eviction, sweep)
        if isinstance(counted, str):
            unsure = unsure or counted
            continue
        minimum, kept, maybe = counted
        if len(kept) < minimum:
            if len(kept) + len(maybe) >= minimum:
                unsure = unsure or (f"{who} evicted {eviction.ref} of {group.ref} when it "
                                    f"kept {len(kept)} to {len(kept) + len(maybe)} pods, its "
                                    f"minimum {minimum}: the record's moments cannot say "
                                    f"whether {', '.join(life.ref for life in maybe)} "
                                    "was kept then")
            continue
        if len(sweep) > 1 and not _each_first(history, group, lives, goings, sweep):
            unsure = unsure or (f"{who} evicted {len(sweep)} pods of {group.ref} at once; "
                                "whichever was first may have met the group below its minimum")
            continue
        done = sorted(life.name for life in kept
                      if life.holds(eviction.at, succeeded) is True)
        shown = [life.changes[-1].entry for life in kept
                 if life.changes and life.changes[0].lo <= eviction.hi]
        what = (f"while it kept {len(kept)} pods, at least its minimum {minimum}" +
                (f" ({len(done)} Succeeded: {', '.join(done)})" if done else ""))
        if len(sweep) > 1:
            what += (f"; {len(sweep)} evictions of one sweep, and whichever was written first "
                     "met the group so")
        witness = sorted({id(e): e for e in [*(s.entry for s in sweep), *shown]}.values(),
                         key=lambda e: history.when(e).hi)
        return Verdict(name, VIOLATED, f"{who} evicted {eviction.ref} of {group.ref} {what}",
                       witness, origin, subjects=len(evictions), reads=reads)
    if unsure is None and loose:
        unsure = (f"{who} evicted {', '.join(sorted({a.ref for a in loose}))}, and the record "
                  f"cannot tell which life of that name it removed")
    if unsure is not None:
        return Verdict(name, UNKNOWN, unsure, [], origin, subjects=len(evictions), reads=reads)
    summary = (f"{len(evictions)} evictions of {group.ref}'s pods by {who}, none while it kept "
               "its minimum" if evictions else
               f"{who} evicted none of the {len(lives)} pods of {group.ref}")
    return Verdict(name, PASS, summary, [], origin, subjects=len(lives), reads=reads)


def _each_first(history: History, group: PodGroup, lives: list[Life],
                goings: dict[str, Going | None], sweep: list[Action]) -> bool:
    """Whether, whichever eviction of the sweep was written first, the group kept its minimum
    at it (the others' pods still kept then)."""
    for first in sweep:
        counted = _kept_at(history, group, lives, goings, first, sweep)
        if isinstance(counted, str):
            return False
        minimum, kept, _ = counted
        if len(kept) < minimum:
            return False
    return True


def _kept_at(history: History, group: PodGroup, lives: list[Life],
             goings: dict[str, Going | None], eviction: Action, sweep: list[Action]
             ) -> tuple[int, list[Life], list[Life]] | str:
    """(the group's minimum, the lives certainly kept, those maybe kept) when ``eviction`` was
    written, taking it as the first of ``sweep``; or why the minimum is not known."""
    states = [obj for life in history.lives_of(group.resource, group.namespace, group.name)
              for obj in life.possible(eviction.at)]
    values = {group.minimum_of(obj) for obj in states}
    if len(values) != 1 or None in values:
        return (f"{eviction.actor} evicted {eviction.ref} when no minimum of {group.ref} was "
                "on record" if values <= {None} else
                f"the minimum of {group.ref} changed as {eviction.ref} was evicted")
    minimum = values.pop()
    later = {id(action) for action in sweep}
    kept, maybe = [], []
    for life in lives:
        went = goings.get(life.id)
        asked = went is not None and went.action is not None
        # a going this eviction made, or (taken as first) a later one of the sweep, came after
        # it was written: so did whatever followed that going (the removal kwok's delete made)
        cut = went.change if asked and id(went.action) in later else None
        if life is eviction.life or (asked and id(went.action) in later):
            went = None  # its own going is the eviction's doing, or a later one's
        going_then = None if went is None else went.at.before(eviction.at)
        if going_then is True:
            continue
        # a going the audit log has is dated by it, whenever the watch showed its mark
        counts = _placed if asked or life is eviction.life else _kept
        held = life.holds(eviction.at, counts, until=cut)
        if held is True and going_then is None and went is not None:
            held = None  # it may have been going already
        if held is True:
            kept.append(life)
        elif held is None:
            maybe.append(life)
    return minimum, kept, maybe


def _kept(pod: dict[str, Any] | None) -> bool:
    """Counts towards its group's minimum: bound (not going, not finished), or Succeeded."""
    return bound(pod) or succeeded(pod)


def _placed(pod: dict[str, Any] | None) -> bool:
    """Counts towards its group's minimum, its deletion mark aside (dated elsewhere)."""
    return pod is not None and ((bool(node_of(pod)) and phase(pod) not in TERMINAL)
                                or succeeded(pod))


def within_queue_limit(history: Recorded, queue: Queue,
                       name: str = "within_queue_limit") -> Verdict:
    """B5: at no recorded state do the pods bound through a queue (bound, not finished, not
    being deleted, of the groups that name it) request more CPU than the queue's limit then."""
    history = History.of(history)
    origin = history.origin
    group_resource = queue.mapping["resource"]["plural"]
    reads = frozenset({"pods", group_resource, queue.resource})
    last: dict[str, Change] = {}
    judged: set[str] = set()
    limits: set[str] = set()
    for change, state in history.replay(reads):
        if change.resource == "pods":
            last[change.name] = change
        pods = queue.bound(state)
        if not pods:
            continue
        limit = queue.limit(state)
        if limit is None:
            limits.add("none")
            continue
        if limit < 0:
            limits.add("unlimited")
            continue
        judged.update(p["metadata"]["name"] for p in pods)
        used = sum((cpu_of(p) for p in pods), Decimal(0))
        if used > limit:
            names = sorted(p["metadata"]["name"] for p in pods)
            shown = sorted({id(last[n]): last[n] for n in names if n in last}.values(),
                           key=lambda c: c.order)
            return Verdict(name, VIOLATED, f"the pods bound through {queue.ref} requested "
                           f"{_cores(used)} CPU, over its limit of {_cores(limit)}: "
                           + ", ".join(f"pod/{queue.namespace}/{n}" for n in names),
                           [c.entry for c in shown], origin, subjects=len(judged), reads=reads)
    if not judged:
        why = {"none": f"no CPU limit of {queue.ref} was on record (no object, or no quantity "
                       f"at {queue.part['cpu_limit_path']}) while pods were bound through it",
               "unlimited": f"{queue.ref} has no CPU limit (a negative one)"}
        reason = why[sorted(limits)[0]] if limits else \
            f"no pod was bound through {queue.ref}"
        return Verdict(name, UNKNOWN, reason, [], origin, reads=reads)
    return Verdict(name, PASS, f"the {len(judged)} pods bound through {queue.ref} never "
                   "requested more CPU than its limit", [], origin, subjects=len(judged),
                   reads=reads)


def _cores(value: Decimal) -> str:
    return f"{(value * 1000).normalize():f}m"


def _group(p: Params) -> PodGroup:
    return PodGroup(**p["group"])


@check("all_or_nothing", "Every binding of a pod group's pod is followed, within the binding "
       "window, by a moment at which the group keeps its minimum (bound or Succeeded pods).")
def _all_or_nothing(history: History, p: Params) -> Verdict:
    return all_or_nothing(history, _group(p), p["window"])


@check("bound_onto_fit_nodes", "No pod of a pod group is bound onto a node that was cordoned, "
       "tainted against it or not Ready for a grace period before the binding.")
def _bound_onto_fit_nodes(history: History, p: Params) -> Verdict:
    return bound_onto_fit_nodes(history, _group(p), p.get("grace", 2.0))


@check("evicted_whole", "Once the scheduler evicts a pod of a pod group, every pod the group "
       "had bound then is gone or going within a window (by the audit log).", audit=True)
def _evicted_whole(history: History, p: Params) -> Verdict:
    return evicted_whole(history, _group(p), p["actor"], p["window"])


@check("kept_not_evicted", "The scheduler never evicts a pod of a pod group that keeps its "
       "minimum, its Succeeded pods counted (by the audit log).", audit=True)
def _kept_not_evicted(history: History, p: Params) -> Verdict:
    return kept_not_evicted(history, _group(p), p["actor"])


@check("within_queue_limit", "At no recorded moment do the pods bound through a queue request "
       "more CPU than its limit then.")
def _within_queue_limit(history: History, p: Params) -> Verdict:
    return within_queue_limit(history, Queue(**p["queue"]))


CONCEPTS = ("gang_scheduler",)
prop("B1", "All or nothing: a pod group's pods are bound only when its minimum can be; no "
     "group is left with some but fewer than minMember pods bound past the binding window, "
     "each binding judged by the minimum in force at its revision (a minCount lowered later "
     "does not excuse it) (a "
     "gang bound in part holds nodes it cannot use, and two such gangs deadlock: what gang "
     "scheduling exists to prevent). A binding in part whose missing pods' binding calls the "
     "audit log shows refused around it is excused (KEP-4671: binding \"could fail for some "
     "pods in the workload\", a risk it accepts).", ["all_or_nothing"], CONCEPTS)
prop("B2", "No pod is bound onto a cordoned, tainted (not tolerated) or NotReady node (a node "
     "cordoned for a drain, tainted for maintenance, or lost).", ["bound_onto_fit_nodes"],
     CONCEPTS)
prop("B3", "An evicted or preempted pod group goes whole: no remnant pods keep their places "
     "(a remnant holds nodes no gang can use). A pod's deletion counts from its audited "
     "time, the cluster's clock, when its watch event came later. Where the profile maps a "
     "group's disruption mode (KEP-5710's spec.disruptionMode: \"Defaults to Single if unset\"), "
     "it is asked only of a group in mode All; to one in Single, whose pods may be disrupted "
     "one at a time, it is NOT APPLICABLE.", ["evicted_whole"], CONCEPTS)
prop("B4", "A pod group that keeps its minimum, its Succeeded pods counted, is never evicted "
     "as stale (KAI-scheduler #1968: its informer dropped Succeeded pods, and gangs that were "
     "completing were evicted). A pod whose deletion the audit log has before the eviction "
     "was not kept, whenever its watch event came; of evictions made in one sweep, the first "
     "met the others' pods still kept.", ["kept_not_evicted"], CONCEPTS)
prop("B5", "A queue's limit is never exceeded: the pods the gang scheduler bound through a "
     "queue never request more than the queue's hard limit (KAI-scheduler's `limit`; its "
     "`quota` is a share over-quota scheduling may exceed), so one team cannot take what "
     "another was promised.", ["within_queue_limit"], ("gang_scheduler.queue",))
