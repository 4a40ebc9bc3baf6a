"""B: gang schedulers (docs/properties.md): a pod group bound all or nothing, onto nodes that
take it, evicted whole, never evicted while it keeps its minimum, and a queue's pods within its
limit. Judged from the API server's record: the pods', nodes', groups' and queues' watched
history and, for who evicted, the audit log."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from aftershock.checks.attribution import actor, pod_deleted
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import revision
from aftershock.concepts.gang_scheduler import PodGroup, Queue, cpu_of, deleting, newly_bound
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.timeline.entry import AUDIT, WATCH, Entry
from aftershock.timeline.state import State, node_of, phase, replay, selects


def _of_group(entry: Entry, group: PodGroup) -> bool:
    return (entry.kind == WATCH and entry.resource == "pods"
            and entry.namespace == group.namespace
            and selects(group.selector(), entry.object or {}))


def _bindings(entries: list[Entry], group: PodGroup) -> list[Entry]:
    """The watch entries that show one of the group's pods bound (its moment recorded: a
    binding a re-list found happened somewhere in a gap, and is no witness of when)."""
    last: dict[str, dict[str, Any]] = {}
    found = []
    for entry in entries:
        if not _of_group(entry, group):
            continue
        after = None if entry.type == "DELETED" else entry.object
        if entry.type != "DELETED" and newly_bound(last.get(entry.name), after):
            found.append(entry)
        last[entry.name] = after or {}
    return found


def all_or_nothing(entries: Iterable[Entry], group: PodGroup, window: float,
                   name: str = "all_or_nothing") -> Verdict:
    """B1: every binding of a group's pod is followed, within ``window`` seconds, by a recorded
    moment at which the group keeps at least its minimum (pods bound and not finished, or
    Succeeded), so a binding in part never stands longer than the binding window."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"pods", group.resource})
    pending: list[Entry] = []
    judged = 0
    bindings = {id(e) for e in _bindings(entries, group)}
    most: dict[int, int] = {}
    known: set[int] = set()  # bindings whose window saw the group's minimum
    for entry, state in replay(entries):
        late = [b for b in pending if entry.mono > b.mono + window]
        if late and not any(id(b) in known for b in late):
            return Verdict(name, UNKNOWN, f"{late[0].ref} was bound, and no minimum of "
                           f"{group.ref} was recorded in the {window:g}s after (no object, or "
                           f"no number at {group.mapping['min_member_path']})", [], origin,
                           reads=reads)
        if late:
            first = late[0]
            return Verdict(name, VIOLATED, _partial(group, first, most.get(id(first), 0),
                                                    window), late, origin, subjects=judged + 1,
                           window=(first.mono, first.mono + window), by_absence=True,
                           reads=reads)
        if id(entry) in bindings:
            pending.append(entry)
        if not pending:
            continue
        minimum = group.min_member(state)
        kept = len(group.kept(state))
        for binding in pending:
            most[id(binding)] = max(most.get(id(binding), 0), kept)
            if minimum is not None:
                known.add(id(binding))
        if minimum is not None and kept >= minimum:
            judged += len(pending)
            pending = []
    if pending:
        return Verdict(name, UNKNOWN, f"{pending[0].ref} was bound at "
                       f"+{pending[0].mono - origin:.3f}s, less than {window:g}s before the "
                       f"history ends, and {group.ref} has not kept its minimum since",
                       [], origin, reads=reads)
    summary = (f"each of {judged} bindings of {group.ref}'s pods was followed within "
               f"{window:g}s by the group keeping its minimum" if judged else
               f"no pod of {group.ref} was bound")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _partial(group: PodGroup, binding: Entry, most: int, window: float) -> str:
    return (f"{binding.ref} was bound to node/{node_of(binding.object or {})} and {group.ref} "
            f"kept at most {most} pods (bound or Succeeded) in the {window:g}s after, below "
            "its minimum: a binding in part")


def _unfit(node: dict[str, Any], pod: dict[str, Any]) -> str | None:
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


def bound_onto_fit_nodes(entries: Iterable[Entry], group: PodGroup, grace: float,
                         name: str = "bound_onto_fit_nodes") -> Verdict:
    """B2: no pod of the group is bound onto a node that, at the binding's revision, was
    cordoned, tainted against it or not Ready, and had been so for ``grace`` seconds (a
    scheduler decides on a snapshot: a change a moment before its binding is a race every
    scheduler has, kube-scheduler too)."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"pods", "nodes"})
    nodes: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.kind == WATCH and entry.resource == "nodes":
            nodes.setdefault(entry.name, []).append(entry)
    bindings = _bindings(entries, group)
    for binding in bindings:
        pod = binding.object or {}
        history = sorted((e for e in nodes.get(node_of(pod), [])
                          if revision(e) < revision(binding)), key=revision)
        if not history or history[-1].type == "DELETED":
            continue  # a node never recorded (or gone) is not judged here
        why = _unfit(history[-1].object or {}, pod)
        if why is None:
            continue
        since = history[-1]
        for earlier in reversed(history[:-1]):
            if earlier.type == "DELETED" or _unfit(earlier.object or {}, pod) != why:
                break
            since = earlier
        if binding.mono - since.mono >= grace:
            return Verdict(name, VIOLATED, f"{binding.ref} was bound to "
                           f"node/{node_of(pod)}, {why} for {binding.mono - since.mono:.2f}s "
                           "by then", [since, history[-1], binding] if since is not history[-1]
                           else [since, binding], origin, subjects=len(bindings), reads=reads)
    summary = (f"{len(bindings)} bindings of {group.ref}'s pods, each onto a node that took "
               "them" if bindings else f"no pod of {group.ref} was bound")
    return Verdict(name, PASS, summary, [], origin, subjects=len(bindings), reads=reads)


def _evictions(entries: list[Entry], group: PodGroup, who: str) -> list[Entry]:
    names = {e.name for e in entries if _of_group(e, group)}
    deleted = pod_deleted(group.namespace, names)
    is_actor = actor(who, exact=True)
    return [e for e in entries if e.kind == AUDIT and deleted(e) and is_actor(e.actor)]


def _asked_gone(entries: list[Entry], namespace: str, name: str, until: float,
                besides: Entry | None = None) -> bool:
    """Whether the audit log, on the cluster's clock, has a delete or eviction of the pod
    answered by ``until`` (other than ``besides``): its watch can deliver it later than that,
    on a pod watch behind, and what the recorder had seen by then is not what the cluster
    had done."""
    asked = pod_deleted(namespace, {name})
    return any(e.kind == AUDIT and e is not besides and e.mono <= until and asked(e)
               for e in entries)


def _state_at(entries: list[Entry], moment: float) -> State:
    """The watched state as recorded up to ``moment`` (the recorder sees a write after the
    API server made it, so this never shows a change the moment had not seen)."""
    state = State()
    for entry in entries:
        if entry.kind != AUDIT and entry.mono <= moment:
            state.apply(entry)
    return state


def _state_met(entries: list[Entry], eviction: Entry) -> State:
    """The watched state an eviction met: as recorded up to its audit time (when its response
    completed), without its own doing: the pod it removed shown going or gone, which the watch
    can deliver before that time. A pod no one had asked to remove before was not going."""
    first = not _asked_gone(entries, eviction.namespace, eviction.name, eviction.mono, eviction)
    state = State()
    for entry in entries:
        if entry.kind == AUDIT or entry.mono > eviction.mono:
            continue
        if first and entry.resource == "pods" and entry.name == eviction.name \
                and entry.namespace == eviction.namespace and (
                    entry.type == "DELETED"
                    or ((entry.object or {}).get("metadata") or {}).get("deletionTimestamp")):
            continue
        state.apply(entry)
    return state


def evicted_whole(entries: Iterable[Entry], group: PodGroup, who: str, window: float,
                  name: str = "evicted_whole") -> Verdict:
    """B3: once the scheduler (``who``, by the audit log) evicts or deletes a pod of the group,
    every pod the group had bound then is gone or going within ``window`` seconds."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"pods", "audit"})
    evictions = _evictions(entries, group, who)
    for eviction in evictions:
        if entries[-1].mono < eviction.mono + window:
            return Verdict(name, UNKNOWN, f"the history ends less than {window:g}s after "
                           f"{group.ref}'s eviction at +{eviction.mono - origin:.3f}s",
                           [], origin, reads=reads)
        then = _state_at(entries, eviction.mono)
        later = _state_at(entries, eviction.mono + window)
        for pod in group.bound(then):
            pod_name = pod["metadata"]["name"]
            now = later.get("pods", group.namespace, pod_name)
            if now is None or deleting(now) or phase(now) in ("Succeeded", "Failed") \
                    or _asked_gone(entries, group.namespace, pod_name, eviction.mono + window):
                continue
            last = _last_entry(entries, now, eviction.mono + window)
            return Verdict(name, VIOLATED, f"{who} evicted "
                           f"pod/{eviction.namespace}/{eviction.name} of {group.ref}, "
                           f"and pod/{group.namespace}/{pod_name} of it "
                           f"was still bound to node/{node_of(now)} {window:g}s later",
                           sorted([eviction, *([last] if last else [])],
                                  key=lambda e: e.mono), origin,
                           subjects=len(evictions),
                           window=(eviction.mono, eviction.mono + window),
                           by_absence=True, reads=reads)
    summary = (f"{len(evictions)} evictions of {group.ref}'s pods by {who}, each taking the "
               "whole group" if evictions else f"{who} evicted no pod of {group.ref}")
    return Verdict(name, PASS, summary, [], origin, subjects=len(evictions), reads=reads)


def _last_entry(entries: list[Entry], pod: dict[str, Any], until: float) -> Entry | None:
    uid = (pod.get("metadata") or {}).get("uid")
    found = [e for e in entries if e.kind == WATCH and e.resource == "pods" and e.uid == uid
             and e.mono <= until]
    return found[-1] if found else None


def kept_not_evicted(entries: Iterable[Entry], group: PodGroup, who: str,
                     name: str = "kept_not_evicted") -> Verdict:
    """B4: the scheduler (``who``, by the audit log) never evicts or deletes a pod of a group
    that keeps its minimum then, counting its Succeeded pods: a gang that is completing is not
    stale."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"pods", group.resource, "audit"})
    evictions = _evictions(entries, group, who)
    for eviction in evictions:
        then = _state_met(entries, eviction)
        minimum = group.min_member(then)
        kept = [pod for pod in group.kept(then) if not _asked_gone(
            entries, group.namespace, pod["metadata"]["name"], eviction.mono, eviction)]
        if minimum is None:
            return Verdict(name, UNKNOWN, f"{who} evicted pod/{eviction.namespace}/"
                           f"{eviction.name} when no minimum of {group.ref} was on record",
                           [], origin, reads=reads)
        if len(kept) >= minimum:
            done = [p["metadata"]["name"] for p in kept if phase(p) == "Succeeded"]
            shown = [e for e in (_last_entry(entries, p, eviction.mono) for p in kept) if e]
            return Verdict(name, VIOLATED, f"{who} evicted "
                           f"pod/{eviction.namespace}/{eviction.name} of {group.ref} while it "
                           f"kept {len(kept)} pods, at least its minimum {minimum}"
                           + (f" ({len(done)} Succeeded: {', '.join(sorted(done))})"
                              if done else ""),
                           sorted([*shown, eviction], key=lambda e: e.mono), origin,
                           subjects=len(evictions), reads=reads)
    # a "never" over the group's whole history: each pod recorded is judged, evicted or not
    pods = {e.name for e in entries if _of_group(e, group)}
    summary = (f"{len(evictions)} evictions of {group.ref}'s pods by {who}, none while it kept "
               "its minimum" if evictions else
               f"{who} evicted none of the {len(pods)} pods of {group.ref}")
    return Verdict(name, PASS, summary, [], origin, subjects=len(pods), reads=reads)


def within_queue_limit(entries: Iterable[Entry], queue: Queue,
                       name: str = "within_queue_limit") -> Verdict:
    """B5: at no recorded moment do the pods bound through a queue (bound, not finished, not
    being deleted, of the groups that name it) request more CPU than the queue's limit then."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    group_resource = queue.mapping["resource"]["plural"]
    reads = frozenset({"pods", group_resource, queue.resource})
    last: dict[str, Entry] = {}
    judged: set[str] = set()
    limits: set[str] = set()
    for entry, state in replay(entries):
        if entry.kind != WATCH or entry.resource not in reads:
            continue
        if entry.resource == "pods":
            last[entry.name] = entry
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
                           key=lambda e: e.mono)
            return Verdict(name, VIOLATED, f"the pods bound through {queue.ref} requested "
                           f"{_cores(used)} CPU, over its limit of {_cores(limit)}: "
                           + ", ".join(f"pod/{queue.namespace}/{n}" for n in names),
                           shown, origin, subjects=len(judged), reads=reads)
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
    return all_or_nothing(history.entries, _group(p), p["window"])


@check("bound_onto_fit_nodes", "No pod of a pod group is bound onto a node that was cordoned, "
       "tainted against it or not Ready for a grace period before the binding.")
def _bound_onto_fit_nodes(history: History, p: Params) -> Verdict:
    return bound_onto_fit_nodes(history.entries, _group(p), p.get("grace", 2.0))


@check("evicted_whole", "Once the scheduler evicts a pod of a pod group, every pod the group "
       "had bound then is gone or going within a window (by the audit log).", audit=True)
def _evicted_whole(history: History, p: Params) -> Verdict:
    return evicted_whole(history.entries, _group(p), p["actor"], p["window"])


@check("kept_not_evicted", "The scheduler never evicts a pod of a pod group that keeps its "
       "minimum, its Succeeded pods counted (by the audit log).", audit=True)
def _kept_not_evicted(history: History, p: Params) -> Verdict:
    return kept_not_evicted(history.entries, _group(p), p["actor"])


@check("within_queue_limit", "At no recorded moment do the pods bound through a queue request "
       "more CPU than its limit then.")
def _within_queue_limit(history: History, p: Params) -> Verdict:
    return within_queue_limit(history.entries, Queue(**p["queue"]))


CONCEPTS = ("gang_scheduler",)
prop("B1", "All or nothing: a pod group's pods are bound only when its minimum can be; no "
     "group is left with some but fewer than minMember pods bound past the binding window (a "
     "gang bound in part holds nodes it cannot use, and two such gangs deadlock: what gang "
     "scheduling exists to prevent).", ["all_or_nothing"], CONCEPTS)
prop("B2", "No pod is bound onto a cordoned, tainted (not tolerated) or NotReady node (a node "
     "cordoned for a drain, tainted for maintenance, or lost).", ["bound_onto_fit_nodes"],
     CONCEPTS)
prop("B3", "An evicted or preempted pod group goes whole: no remnant pods keep their places "
     "(a remnant holds nodes no gang can use). A pod's deletion counts from its audited "
     "time, the cluster's clock, when its watch event came later.", ["evicted_whole"], CONCEPTS)
prop("B4", "A pod group that keeps its minimum, its Succeeded pods counted, is never evicted "
     "as stale (KAI-scheduler #1968: its informer dropped Succeeded pods, and gangs that were "
     "completing were evicted). A pod whose deletion the audit log has before the eviction "
     "was not kept, whenever its watch event came.", ["kept_not_evicted"], CONCEPTS)
prop("B5", "A queue's limit is never exceeded: the pods the gang scheduler bound through a "
     "queue never request more than the queue's hard limit (KAI-scheduler's `limit`; its "
     "`quota` is a share over-quota scheduling may exceed), so one team cannot take what "
     "another was promised.", ["within_queue_limit"], ("gang_scheduler.queue",))
