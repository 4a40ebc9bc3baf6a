"""What the gang operator decides, as pure functions of pods and the previous status (no API
calls): each gang replica's status, when to terminate it, which pods to create or delete."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kubernetes import client

GANG_LABEL, GROUP_LABEL = "aftershock.io/gang", "aftershock.io/gang-group"
BREACH = "MinAvailableBreached"
HEALTHY, STARTING, BELOW, RECOVERED, TERMINATED = (
    "Healthy", "Starting", "BelowMinAvailable", "Recovered", "Terminated")
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
NEVER = datetime(1970, 1, 1, tzinfo=UTC)
VARIANTS = ("faulty", "correct")

Status = dict[str, Any]


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def parse_time(text: str | None) -> datetime:
    """A missing or unreadable time reads as long ago."""
    try:
        moment = datetime.fromisoformat(text) if text else NEVER
    except ValueError:
        return NEVER
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# ---------------------------------------------------------------- pods

def is_live(pod: client.V1Pod) -> bool:
    return not pod.metadata.deletion_timestamp


def is_scheduled(pod: client.V1Pod) -> bool:
    return is_live(pod) and bool(pod.spec and pod.spec.node_name)


def is_ready(pod: client.V1Pod) -> bool:
    conditions = (pod.status.conditions if pod.status else None) or ()
    return is_live(pod) and any(c.type == "Ready" and c.status == "True" for c in conditions)


def group_of(pod: client.V1Pod) -> int | None:
    value = (pod.metadata.labels or {}).get(GROUP_LABEL, "")
    return int(value) if value.isdigit() else None


def by_group(pods: Iterable[client.V1Pod], groups: int) -> tuple[dict[int, list], list]:
    """Live pods per gang replica 0..groups-1, and the live strays (no or a removed index)."""
    members: dict[int, list] = {g: [] for g in range(groups)}
    strays = []
    for pod in filter(is_live, pods):
        index = group_of(pod)
        if index in members:
            members[index].append(pod)
        else:
            strays.append(pod)
    return members, strays


def is_finished(pod: client.V1Pod) -> bool:
    return bool(pod.status and pod.status.phase in ("Succeeded", "Failed"))


def plan_pods(live: list[client.V1Pod], size: int, creating: int) -> tuple[int, list]:
    """(how many pods to create, which to delete) for one gang replica: never more than size
    live pods, counting creations issued and not yet seen. Finished pods are deleted (and
    replaced once gone); surplus goes unscheduled first, then not Ready, then the newest."""
    finished = [p for p in live if is_finished(p)]
    running = sorted((p for p in live if not is_finished(p)),
                     key=lambda p: (is_scheduled(p), is_ready(p), -_created(p)))
    surplus = max(0, len(live) - size - len(finished))
    return max(0, size - len(live) - creating), finished + running[:surplus]


def _created(pod: client.V1Pod) -> float:
    return (pod.metadata.creation_timestamp or NEVER).timestamp()


# ---------------------------------------------------------------- status

def breach(scheduled: int, min_available: int, was_healthy: bool, previous_reason: str | None,
           variant: str) -> tuple[str, str]:
    """(condition status, reason) of MinAvailableBreached.

    correct: breached once the gang replica has been healthy and scheduled < minAvailable.
    faulty (the incident): 0 < scheduled < minAvailable reads as "still starting up", so only
    a drop to zero is a breach; a partial regression is never reported, never terminated."""
    if scheduled >= min_available:
        return "False", RECOVERED if previous_reason in (BELOW, RECOVERED) else HEALTHY
    if not was_healthy:
        return "False", STARTING
    if variant == "faulty" and scheduled > 0:
        return "False", STARTING
    return "True", BELOW


def condition(previous: Status | None, status: str, reason: str, message: str,
              now: datetime) -> Status:
    """The condition; its lastTransitionTime changes only when its status does."""
    since = (previous or {}).get("lastTransitionTime")
    if not previous or previous.get("status") != status or not since:
        since = format_time(now)
    return {"type": BREACH, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": since}


def breach_condition(group: Status | None) -> Status | None:
    return next((c for c in (group or {}).get("conditions") or () if c.get("type") == BREACH),
                None)


def group_status(index: int, live: list[client.V1Pod], previous: Status | None,
                 min_available: int, variant: str, now: datetime) -> Status:
    """A gang replica's status from its live pods and its previous status."""
    scheduled = sum(map(is_scheduled, live))
    ready = sum(map(is_ready, live))
    was_healthy = bool((previous or {}).get("healthy"))
    before = breach_condition(previous)
    status, reason = breach(scheduled, min_available, was_healthy,
                            (before or {}).get("reason"), variant)
    message = f"gang replica {index}: {scheduled} scheduled, minAvailable {min_available}"
    return {"index": index, "scheduled": scheduled, "ready": ready,
            "healthy": was_healthy or scheduled >= min_available,
            "conditions": [condition(before, status, reason, message, now)]}


def terminate_due(group: Status, delay: float, now: datetime) -> bool:
    """The breach has been True for terminationDelaySeconds, from its lastTransitionTime."""
    cond = breach_condition(group)
    if not cond or cond.get("status") != "True":
        return False
    return (now - parse_time(cond.get("lastTransitionTime"))).total_seconds() >= delay


def breached_for(group: Status, now: datetime) -> float:
    cond = breach_condition(group) or {}
    return (now - parse_time(cond.get("lastTransitionTime"))).total_seconds()


def after_termination(group: Status, now: datetime) -> Status:
    """The gang replica starts over: its pods are gone, it is not healthy, not breached (a
    replica that never became healthy is not terminated again: one recycle per episode)."""
    index = group["index"]
    message = f"gang replica {index} terminated, its pods are recreated"
    return {**group, "scheduled": 0, "ready": 0, "healthy": False,
            "conditions": [condition(breach_condition(group), "False", TERMINATED, message,
                                     now)]}


def scheduled_zero(previous: Status | None, group: Status) -> bool:
    """scheduled has just become 0 (a first status of 0 is no transition)."""
    before = (previous or {}).get("scheduled")
    return isinstance(before, int) and before > 0 and group["scheduled"] == 0


def previous_groups(status: Status | None) -> dict[int, Status]:
    groups = (status or {}).get("groups") or ()
    return {g["index"]: g for g in groups if isinstance(g, dict) and isinstance(g.get("index"),
                                                                                 int)}
