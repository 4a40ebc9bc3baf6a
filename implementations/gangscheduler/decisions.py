"""What the gang scheduler decides, as pure functions of pods, nodes and groups (plain dicts,
as the API serves them)."""

from __future__ import annotations

import math
import re
from typing import Any

# faulty: five safety bugs (B1-B5) and a pod bound before its claims are allocated (D1);
# holds-room: correct but for one progress bug (B6), the room of a group it could not bind
# kept from every group after it (scheduler-plugins#713); holds-devices: correct but for B7,
# the claims of a group it could not bind allocated all the same, and left so;
# preempts-in-vain: correct but for B8, it evicts a group for a pod of higher priority and
# then never binds that pod (it binds only pods of a group); passes-over: correct but for B6
# with single pods, it binds pods of no group before the groups of a pass, however long a group
# has waited (volcano#5805)
VARIANTS = ("correct", "faulty", "holds-room", "holds-devices", "preempts-in-vain",
            "passes-over")
SCHEDULER_NAME = "aftershock-gang-scheduler"
GROUP_LABEL = "aftershock.io/pod-group"
TERMINAL = ("Succeeded", "Failed")
UNITS = {"": 1, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
         "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40}
Obj = dict[str, Any]


def quantity(text: str | int | float) -> float:
    found = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text).strip())
    if not found or found.group(2) not in UNITS:
        raise ValueError(f"not a quantity: {text!r}")
    return float(found.group(1)) * UNITS[found.group(2)]


def name(obj: Obj) -> str:
    return obj["metadata"]["name"]


def node_of(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def deleting(obj: Obj) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase", "")


def holds_place(pod: Obj) -> bool:
    """Bound and not finished: it uses its node's room (while being deleted too)."""
    return bool(node_of(pod)) and phase(pod) not in TERMINAL


def requests(pod: Obj) -> dict[str, float]:
    total: dict[str, float] = {}
    for container in (pod.get("spec") or {}).get("containers") or []:
        for key, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[key] = total.get(key, 0.0) + quantity(value)
    return total


def takes(node: Obj, pod: Obj, variant: str) -> bool:
    """Whether the node would take the pod at all (its room aside)."""
    if variant == "faulty":
        return True  # the bug: readiness, cordons and taints are not looked at
    ready = [c for c in (node.get("status") or {}).get("conditions") or []
             if c.get("type") == "Ready"]
    if not ready or ready[0].get("status") != "True":
        return False
    spec = node.get("spec") or {}
    if spec.get("unschedulable"):
        return False
    tolerated = (pod.get("spec") or {}).get("tolerations") or []
    return not any(t.get("effect") in ("NoSchedule", "NoExecute") and
                   not any(_tolerates(tol, t) for tol in tolerated)
                   for t in spec.get("taints") or [])


def _tolerates(toleration: Obj, taint: Obj) -> bool:
    # its own, as B2's judge has its own: what is judged shares no code with what judges it
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return (toleration.get("key") == taint.get("key")
            and toleration.get("value", "") == taint.get("value", ""))


def room(nodes: list[Obj], pods: list[Obj],
         devices: dict[str, list] | None = None) -> dict[str, dict[str, float]]:
    """What each node has left of its allocatable resources (pods counted as one each) and,
    where ``devices`` says, of its free devices."""
    left = {}
    for node in nodes:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        left[name(node)] = {key: quantity(value) for key, value in allocatable.items()}
        if devices is not None:
            left[name(node)]["devices"] = len(devices.get(name(node), []))
    for pod in pods:
        if holds_place(pod) and node_of(pod) in left:
            have = left[node_of(pod)]
            for key, value in {**requests(pod), "pods": 1}.items():
                if key in have:
                    have[key] -= value
    return left


def claims_of(pod: Obj) -> list[str]:
    """The pod's claims (by the name of its claim in its spec)."""
    return [c["name"] for c in (pod.get("spec") or {}).get("resourceClaims") or []]


def place(pods: list[Obj], nodes: list[Obj], left: dict[str, dict[str, float]],
          variant: str) -> list[tuple[Obj, str]]:
    """First fit, in name order; ``left`` is updated by every placement (a pod's claims take
    as many of the node's free devices, ``left[node]["devices"]``)."""
    placed = []
    for pod in sorted(pods, key=name):
        need = {**requests(pod), "pods": 1, "devices": len(claims_of(pod))}
        for node in sorted(nodes, key=name):
            have = left.get(name(node), {})
            if takes(node, pod, variant) and all(have.get(k, 0) >= v for k, v in need.items()
                                                 if k in have or (k == "devices" and v)):
                for key, value in need.items():
                    if key in have:
                        have[key] -= value
                placed.append((pod, name(node)))
                break
    return placed


def free_devices(slices: list[Obj], claims: list[Obj]) -> dict[str, list[tuple[str, str, str]]]:
    """Each node's devices (driver, pool, device) that no claim has allocated."""
    taken = {(r.get("driver"), r.get("pool"), r.get("device")) for claim in claims
             for r in (((claim.get("status") or {}).get("allocation") or {}).get("devices")
                       or {}).get("results") or []}
    free: dict[str, list[tuple[str, str, str]]] = {}
    for item in slices:
        spec = item.get("spec") or {}
        node = spec.get("nodeName")
        for device in spec.get("devices") or []:
            key = (spec.get("driver"), (spec.get("pool") or {}).get("name"), device.get("name"))
            if node and key not in taken:
                free.setdefault(node, []).append(key)
    return free


def minimum(group: Obj) -> int:
    return int((group.get("spec") or {}).get("minMember", 1))


def kept(pods: list[Obj], variant: str) -> int:
    """How many pods count towards the group's minimum: bound and alive, and (the correct
    variant) those that Succeeded."""
    alive = [p for p in pods if holds_place(p) and not deleting(p)]
    done = [p for p in pods if phase(p) == "Succeeded"] if variant != "faulty" else []
    return len(alive) + len(done)


def bindings(group: Obj, pods: list[Obj], nodes: list[Obj], left: dict[str, dict[str, float]],
             variant: str, headroom: float = math.inf) -> list[tuple[Obj, str]]:
    """The bindings to make for one group now: all of its waiting pods that fit, when they
    bring it to its minimum and its queue has the CPU for them (``headroom``; the faulty
    variant: whatever fits, its queue not looked at)."""
    waiting = [p for p in pods if not node_of(p) and not deleting(p)]
    if not waiting:
        return []
    trial = {node: dict(have) for node, have in left.items()}
    placed = place(waiting, nodes, trial, variant)
    if variant != "faulty" and (kept(pods, variant) + len(placed) < minimum(group)
                                or cpu(p for p, _ in placed) > headroom):
        if variant == "holds-room":
            left.update(trial)  # the bug: what it could not bind keeps its room
        return []
    left.update(trial)
    return placed


def cpu(pods) -> float:
    return sum(requests(p).get("cpu", 0.0) for p in pods)


def queue_of(group: Obj) -> str:
    return (group.get("spec") or {}).get("queue") or ""


def headroom(queue: Obj | None, groups: list[Obj], pods_of) -> float:
    """What a queue has left of its CPU limit: the limit less what the pods of its groups that
    hold a place (and are not going) request. No queue object: no limit."""
    if queue is None or "cpu" not in ((queue.get("spec") or {}).get("limits") or {}):
        return math.inf
    used = cpu(p for g in groups if queue_of(g) == name(queue) for p in pods_of(g)
               if holds_place(p) and not deleting(p))
    return quantity(queue["spec"]["limits"]["cpu"]) - used


def evictions(pods: list[Obj], variant: str) -> list[Obj]:
    """The pods a stale group loses: all of them alive (the faulty variant: one)."""
    alive = sorted((p for p in pods if not deleting(p) and phase(p) not in TERMINAL), key=name)
    return alive[:1] if variant == "faulty" else alive


def priority(pod: Obj) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def victims(preemptor: Obj, pods: list[Obj], nodes: list[Obj],
            left: dict[str, dict[str, float]], variant: str) -> list[Obj]:
    """The pods to evict so the preemptor fits: on the first node (by name) that would take
    it and have room once the pods of a lower priority there are gone, their groups' alive
    pods, every one (the faulty variant: the one pod on that node). None while a pod there is
    already going (the room is freeing) or where nothing makes room."""
    need = {**requests(preemptor), "pods": 1}
    for node in sorted(nodes, key=name):
        if not takes(node, preemptor, variant):
            continue
        on = [p for p in pods if node_of(p) == name(node) and holds_place(p)]
        if any(deleting(p) for p in on):
            return []
        lower = [p for p in on if priority(p) < priority(preemptor)
                 and GROUP_LABEL in (p["metadata"].get("labels") or {})]
        have = dict(left.get(name(node), {}))
        for pod in lower:
            for key, value in {**requests(pod), "pods": 1}.items():
                if key in have:
                    have[key] += value
        if not lower or not all(have.get(k, 0) >= v for k, v in need.items() if k in have):
            continue
        if variant == "faulty":
            return lower
        groups = {(p["metadata"].get("labels") or {})[GROUP_LABEL] for p in lower}
        return [p for p in pods if (p["metadata"].get("labels") or {}).get(GROUP_LABEL) in groups
                and not deleting(p) and phase(p) not in TERMINAL]
    return []
