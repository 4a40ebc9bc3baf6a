"""B6, B7: a gang scheduler makes progress (docs/properties.md). A pod group waiting for its
minimum while the nodes have room for the pods it lacks is bound within a bound: two gangs
that compete are not both left waiting (one of them fits, so one is bound), and a gang that
cannot be bound holds no room from one that can (a scheduler that keeps the room of a gang it
did not bind, as scheduler-plugins#713's assumed pods did, starves every gang after it), and
single pods made after a waiting gang do not pass it over (their taking its room does not end
its wait). B7:
a gang that is not bound holds no device (no claim of its unbound pods stays allocated).

The room is counted by ``properties/room.py`` from the nodes, pods and (for pods that claim
devices) the claims, classes and slices as the history records them, on the cluster's order,
by first fit, which may miss a packing that exists but never finds one that does not: a
violation is a wait that a placement, named, shows was needless. What that model cannot follow
(affinity, spread, volumes, a claim's selectors) is not judged: UNKNOWN, naming it."""

from __future__ import annotations

import math
from collections.abc import Iterable

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import allocated_devices, claim_names
from aftershock.concepts.gang_scheduler import TERMINAL, PodGroup, deleting, newly_bound
from aftershock.history import INF, Change, History, seconds
from aftershock.history.state import State, node_of, phase
from aftershock.properties.base import Params, check, prop
from aftershock.properties.binding import group_evictions
from aftershock.properties.room import DRA, Unjudged, place, placed_beyond_room

Recorded = History | Iterable


def bound_when_room(history: Recorded, group: PodGroup, within: float,
                    name: str = "bound_when_room") -> Verdict:
    """B6: the group never waits longer than ``within`` seconds for its minimum while the nodes
    have room for the pods it lacks (its own waiting pods enough to make it). Room a single pod
    of the same scheduler took from it, one created after the group's waiting pods and of no
    higher priority, still counts as room: the wait goes on from when the room was first
    there (a gang starved by a stream of single pods)."""
    history = History.of(history)
    origin = history.origin
    recorded = _recorded_pods(history, group)
    claiming = any((pod.get("spec") or {}).get("resourceClaims") for pod in recorded)
    # a group whose pods claim devices: its room reads claims, classes and slices too
    reads = frozenset({"pods", "nodes", group.resource} | (set(DRA) if claiming else set()))
    since: tuple[Change, list[str]] | None = None
    opened = INF  # the latest the room stood by (the cluster's order may bound it sooner)
    passed: Change | None = None  # the binding of a later pod that took the group's room
    waits, unjudged = 0, ""
    for change, state in history.replay(reads):
        if since is not None and change.lo > opened + within:
            return _starved(name, group, since, opened, within, change.lo, origin, reads,
                            passed)
        room = _room_for(state, group)
        if isinstance(room, str):
            unjudged, since, passed = unjudged or room, None, None
            continue
        if room is None:
            if since is not None and passed is None and _passes_over(change, state, group):
                # the room stood before the binding that took it: a deletion that made the
                # room may have no moment of its own sooner than the end of the record
                passed, opened = change, min(opened, change.hi)
            if passed is None or _waiting(state, group) is None:
                since, passed = None, None
        elif since is None:
            since, opened, waits = (change, room), change.hi, waits + 1
    if since is not None:
        if history.end > opened + within:
            return _starved(name, group, since, opened, within, history.end, origin, reads,
                            passed)
        return Verdict(name, UNKNOWN, f"{group.ref} waited with room for its minimum from "
                       f"+{opened - origin:.3f}s, less than {within:g}s before the "
                       "history ends", [since[0].entry], origin, reads=reads)
    if unjudged:
        return Verdict(name, UNKNOWN, unjudged, [], origin, reads=reads)
    summary = (f"{group.ref} never waited {within:g}s with room for its minimum"
               + (f" ({waits} waits with room, each ended in time)" if waits else ""))
    return Verdict(name, PASS, summary, [], origin, subjects=int(bool(recorded)),
                   reads=reads)


def _passes_over(change: Change, state: State, group: PodGroup) -> bool:
    """Whether the change binds a pod that passes over the waiting group: a pod of no group
    (it lacks a label the profile's pod selector names), for the same scheduler, created after
    every waiting pod of the group (on the cluster's clock, to the second) and of no higher
    priority than the highest of them. A later group is not judged so: which of two groups
    goes first is the scheduler's to order."""
    pod = change.after
    if change.resource != "pods" or pod is None or not newly_bound(change.before, pod):
        return False
    meta = pod.get("metadata") or {}
    found = _waiting(state, group)
    if found is None or (pod.get("spec") or {}).get("schedulerName") != group.scheduler_name \
            or group.selector().keys() <= (meta.get("labels") or {}).keys():
        return False
    created = meta.get("creationTimestamp")
    waiting = found[0]
    stamps = [(p.get("metadata") or {}).get("creationTimestamp") for p in waiting]
    times = [seconds(s) for s in (created, *stamps) if s]
    if len(times) < 1 + len(stamps) or any(math.isnan(t) for t in times):
        return False  # a stamp missing or not parsed: not judged as passing over
    return times[0] > max(times[1:]) and \
        _priority(pod) <= max(_priority(p) for p in waiting)


def _priority(pod: dict) -> int:
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) else 0


def _recorded_pods(history: History, group: PodGroup) -> list[dict]:
    return [change.after for change in history.changes_of("pods")
            if change.after is not None and change.namespace == group.namespace
            and group.selector().items() <=
            ((change.after.get("metadata") or {}).get("labels") or {}).items()]


def _starved(name: str, group: PodGroup, since: tuple[Change, list[str]], opened: float,
             within: float, until: float, origin: float, reads: frozenset[str],
             passed: Change | None = None) -> Verdict:
    start, placement = since
    shown = ", ".join(placement)
    waited = (f"{group.ref} waited for its minimum from +{opened - origin:.3f}s to at least "
              f"+{until - origin:.3f}s, more than {within:g}s")
    if passed is None:
        return Verdict(name, VIOLATED, f"{waited}, while the nodes had room for the pods it "
                       f"lacked ({shown}) and nothing recorded changed that", [start.entry],
                       origin, subjects=1, window=(start.lo, opened + within),
                       by_absence=True, reads=reads)
    return Verdict(name, VIOLATED, f"{waited}: the nodes had room for the pods it lacked "
                   f"({shown}), and pod/{passed.namespace}/{passed.name}, created after them "
                   f"and of no higher priority, was bound into it at "
                   f"+{passed.hi - origin:.3f}s", [start.entry, passed.entry], origin,
                   subjects=1, window=(start.lo, opened + within), by_absence=True,
                   reads=reads)


def _waiting(state: State, group: PodGroup) -> tuple[list[dict], int] | None:
    """The group's waiting pods by name and how many of them it lacks for its minimum, if it
    waits for it and has them (None: it does not wait, or has too few pods to make it)."""
    minimum = group.min_member(state)
    if minimum is None:
        return None
    need = minimum - len(group.kept(state))
    waiting = sorted((p for p in group.pods(state) if not node_of(p) and not deleting(p)
                      and phase(p) not in TERMINAL
                      and not (p.get("spec") or {}).get("schedulingGates")),
                     key=lambda p: p["metadata"]["name"])
    return (waiting, need) if 0 < need <= len(waiting) else None


def _room_for(state: State, group: PodGroup) -> list[str] | str | None:
    """Where the pods the group lacks would go now (pod, node), if it waits for its minimum
    and the nodes have room for them; None if it does not wait or there is no room; or why its
    wait is not judged."""
    found = _waiting(state, group)
    if found is None:
        return None
    waiting, need = found
    for pod in waiting:
        why = placed_beyond_room(pod)
        if why:
            return (f"pod/{group.namespace}/{pod['metadata']['name']} asks for {why}, which "
                    "the room judged here does not count: its wait is not judged")
    try:
        return place(state, group.namespace, waiting[:need])
    except Unjudged as why:
        return f"{why}: the wait of {group.ref} is not judged"


def holds_no_device(history: Recorded, group: PodGroup, within: float,
                    name: str = "holds_no_device") -> Verdict:
    """B7: no claim of an unbound pod of the group stays allocated longer than ``within``
    seconds while the group is below its minimum: a gang that is not bound holds no device."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", "resourceclaims", group.resource})
    since: dict[str, Change] = {}  # claim -> the change from which it has been held so
    claims_seen: set[str] = set()
    for change, state in history.replay(reads):
        held = _held(state, group, claims_seen)
        for claim, start in list(since.items()):
            if change.lo > start.hi + within:
                return _held_too_long(name, group, claim, start, within, change.lo, origin,
                                      reads)
            if claim not in held:
                del since[claim]
        for claim in held:
            since.setdefault(claim, change)
    for claim, start in since.items():
        if history.end > start.hi + within:
            return _held_too_long(name, group, claim, start, within, history.end, origin,
                                  reads)
    for claim, start in since.items():
        return Verdict(name, UNKNOWN, f"resourceclaim/{group.namespace}/{claim} was "
                       f"allocated for an unbound pod of {group.ref} from "
                       f"+{start.hi - origin:.3f}s, less than {within:g}s before the history "
                       "ends", [start.entry], origin, reads=reads)
    summary = (f"no claim of {group.ref}'s unbound pods stayed allocated {within:g}s while it "
               f"was below its minimum ({len(claims_seen)} claims)")
    return Verdict(name, PASS, summary, [], origin, subjects=len(claims_seen), reads=reads)


def _held(state: State, group: PodGroup, seen: set[str]) -> set[str]:
    """The claims of the group's unbound pods that are allocated now, while the group is
    below its minimum (``seen`` gathers every claim of its pods)."""
    minimum = group.min_member(state)
    below = minimum is not None and len(group.kept(state)) < minimum
    held = set()
    for pod in group.pods(state):
        for claim in claim_names(pod):
            seen.add(claim)
            obj = state.get("resourceclaims", group.namespace, claim)
            if below and not node_of(pod) and not deleting(pod) and obj is not None \
                    and allocated_devices(obj):
                held.add(claim)
    return held


def _held_too_long(name: str, group: PodGroup, claim: str, start: Change, within: float,
                   until: float, origin: float, reads: frozenset[str]) -> Verdict:
    return Verdict(name, VIOLATED, f"resourceclaim/{group.namespace}/{claim} was allocated for "
                   f"an unbound pod of {group.ref} from +{start.hi - origin:.3f}s to at least "
                   f"+{until - origin:.3f}s, more than {within:g}s, while the group was below "
                   "its minimum: a gang that is not bound held a device", [start.entry], origin,
                   subjects=1, window=(start.lo, start.hi + within), by_absence=True,
                   reads=reads)


def preemption_paid_off(history: Recorded, group: PodGroup, preemptor: str, who: str,
                        within: float, name: str = "preemption_paid_off") -> Verdict:
    """B8: every pod of the group the scheduler (``who``, by the audit log) evicts while the
    preemptor waits unbound is followed, within ``within`` seconds of the eviction (the
    cluster's clock), by the preemptor's binding: no victim is evicted in vain."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", "audit"})
    evictions, loose = group_evictions(history, group, who)
    if loose:
        return Verdict(name, UNKNOWN, f"{who} evicted {', '.join(sorted({a.ref for a in loose}))}"
                       ", and the record cannot tell which life of that name it removed", [],
                       origin, reads=reads)
    ref = f"pod/{group.namespace}/{preemptor}"
    binding = next((c for c in history.changes_of("pods") if c.namespace == group.namespace
                    and c.name == preemptor and c.after is not None and node_of(c.after)), None)
    judged = 0
    for eviction in sorted(evictions, key=lambda a: a.hi):
        if binding is not None and binding.hi <= eviction.lo:
            continue  # bound before it: that eviction was not for this preemptor
        judged += 1
        deadline = eviction.hi + within
        if binding is not None and binding.hi <= deadline:
            continue
        if binding is not None and binding.lo <= deadline:
            return Verdict(name, UNKNOWN, f"whether {ref} was bound within {within:g}s of "
                           f"{who}'s eviction of {eviction.ref}, the record's moments cannot "
                           "say", [], origin, reads=reads)
        if history.end < deadline:
            return Verdict(name, UNKNOWN, f"the history ends less than {within:g}s after "
                           f"{who} evicted {eviction.ref} at +{eviction.hi - origin:.3f}s",
                           [], origin, reads=reads)
        return Verdict(name, VIOLATED, f"{who} evicted {eviction.ref} of {group.ref} while "
                       f"{ref} waited, and {ref} was not bound {within:g}s later: a victim "
                       "evicted in vain", [eviction.entry], origin, subjects=1,
                       window=(eviction.lo, deadline), by_absence=True, reads=reads)
    summary = (f"{ref} was bound within {within:g}s of each of {judged} evictions of "
               f"{group.ref}'s pods by {who}" if judged
               else f"{who} evicted no pod of {group.ref} while {ref} waited")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _group(p: Params) -> PodGroup:
    return PodGroup(**p["group"])


@check("bound_when_room", "A pod group never waits longer than a bound for its minimum while "
       "the nodes have room for the pods it lacks.")
def _bound_when_room(history: History, p: Params) -> Verdict:
    return bound_when_room(history, _group(p), p["within"])


prop("B6", "Progress: a pod group waiting for its minimum while the nodes have room for the "
     "pods it lacks is bound within a bound. Two gangs that compete are not both left waiting "
     "(one fits, so one is bound), and a gang that cannot be bound holds no room from one that "
     "can (scheduler-plugins#713: a pending group's pods, assumed at Permit and never bound, "
     "kept their capacity, and other pods starved), nor is passed over by single pods made "
     "after it: room a pod of no group of the same scheduler, created later and of no higher "
     "priority, took from it is room it waited in (volcano#5805: a gang stayed below its "
     "minimum while single pods took the capacity it freed). The room is counted from the recorded "
     "nodes and pods (a node selector followed) and, for pods that claim devices, the "
     "recorded claims, classes and node-local slices: a device allocated to no claim, a claim "
     "its pods share placed once (kubernetes#137617: a gang whose pods shared one claim was "
     "never bound, each pod refused while the claim's allocation was in flight). A pod placed "
     "by more than that (affinity, spread, volumes, a request's selectors) is not judged.",
     ["bound_when_room"], ("gang_scheduler",))


@check("holds_no_device", "No claim of an unbound pod of a pod group stays allocated longer "
       "than a bound while the group is below its minimum.")
def _holds_no_device(history: History, p: Params) -> Verdict:
    return holds_no_device(history, _group(p), p["within"])


prop("B7", "A gang that is not bound holds no device: no claim of an unbound pod of a pod group "
     "stays allocated longer than a bound while the group is below its minimum (a gang "
     "scheduler that allocates the claims of a group it then does not bind keeps devices from "
     "every other pod; kube-scheduler allocates in PreBind, after a gang's Permit).",
     ["holds_no_device"], ("gang_scheduler",))


@check("preemption_paid_off", "Every pod of a group the scheduler evicts while a preemptor "
       "waits is followed within a bound by the preemptor's binding (by the audit log).",
       audit=True)
def _preemption_paid_off(history: History, p: Params) -> Verdict:
    return preemption_paid_off(history, _group(p), p["preemptor"], p["actor"], p["within"])


prop("B8", "No victim is evicted in vain: once a scheduler evicts a pod of a group for a pod "
     "of higher priority, that pod is bound within a bound (a preemption whose preemptor then "
     "does not bind, its room taken by another pod or never usable by it, disrupts the victim "
     "for nothing; kube-scheduler nominates the freed node to the preemptor for this). The "
     "evictions are the scheduler's deletes in the audit log, each counted from its audited "
     "time; one made after the preemptor was bound was not for it.",
     ["preemption_paid_off"], ("gang_scheduler",))
