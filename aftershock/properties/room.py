"""The room B6 counts (docs/properties.md): where the pods a waiting group lacks would go now,
found from the recorded nodes, pods and, for pods that claim devices, the recorded
ResourceClaims, DeviceClasses and ResourceSlices.

Each node that would take a pod (not cordoned, no taint it does not tolerate, Ready, and its
labels those of the pod's node selector) has its allocatable CPU, memory and pods, less what
every pod bound or nominated to it and not finished requests. A claim already allocated puts
its pods where its allocation is available; one not yet allocated needs, for each of its
requests, free devices of the request's class on the node: a device of a slice local to that
node (spec.nodeName, its pool complete at its newest generation), of the driver the class
selects, allocated to no claim, untainted. Claims are placed by first fit as the pods are, one
device per request (its count), a claim its pods share placed once; first fit may miss a
packing that exists but never finds one that does not. What this model cannot follow (affinity,
spread, volumes, host ports, a request with selectors, a count of All, a class whose selectors
are more than its driver, a device with counters or binding conditions) is named instead, and
its wait not judged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kubernetes.utils import parse_quantity

from aftershock.concepts.dra import allocated_devices, current_pools, selects_node
from aftershock.concepts.gang_scheduler import TERMINAL, deleting
from aftershock.history.state import State, node_of, phase
from aftershock.properties.binding import unfit

ROOM = ("cpu", "memory", "pods")
DRA = ("resourceclaims", "resourceslices", "deviceclasses")  # read when a pod claims devices
# what places a pod beyond the room counted here: such a pod's wait is not judged
PLACEMENT = ("affinity", "topologySpreadConstraints", "nodeName")
DRIVER_ONLY = re.compile(r'^\s*device\.driver\s*==\s*"([^"]+)"\s*$')
Device = tuple[str, str, str]  # driver, pool, device


class Unjudged(Exception):
    """What the room model cannot follow, said in a sentence."""


@dataclass
class Room:
    """What each node has left, and the devices still free, as first fit takes them."""

    left: dict[str, tuple[dict[str, Any], dict[str, Decimal]]]
    free: dict[str, dict[str, list[Device]]] = field(default_factory=dict)  # node → driver
    placed: dict[str, str] = field(default_factory=dict)  # claim placed here → its node


def place(state: State, namespace: str, pods: list[dict[str, Any]]) -> list[str] | None:
    """Each pod onto the first node (by name) that takes it and has room for all it asks and
    claims, as ``pod/ns/p on node/n`` (with the devices it would take); None if one has
    nowhere. Raises Unjudged for a pod this model cannot place."""
    room = Room(_left(state))
    claims = {pod["metadata"]["name"]: _claims(state, namespace, pod) for pod in pods}
    if any(c is None for c in claims.values()):
        return None  # a claim not made yet: the scheduler waits for it too
    if any(claims.values()):
        room.free = _free_devices(state)
    shown = []
    for pod in pods:
        where = _fit(state, room, pod, claims[pod["metadata"]["name"]])
        if where is None:
            return None
        shown.append(f"pod/{namespace}/{pod['metadata']['name']} on node/{where}")
    return shown


def _fit(state: State, room: Room, pod: dict[str, Any],
         claims: list[dict[str, Any]]) -> str | None:
    need = requests(pod)
    selector = (pod.get("spec") or {}).get("nodeSelector") or {}
    for name in sorted(room.left):
        node, have = room.left[name]
        labels = (node.get("metadata") or {}).get("labels") or {}
        if unfit(node, pod) is not None or any(labels.get(k) != v for k, v in selector.items()):
            continue
        if not all(have.get(k, Decimal(-1)) >= v for k, v in need.items()):
            continue
        taken = _devices_on(state, room, name, claims)
        if taken is None:
            continue
        for key, value in need.items():
            have[key] -= value
        for claim, devices in taken.items():
            room.placed[claim] = name
            for device in devices:
                room.free[name][device[0]].remove(device)
        return name
    return None


def _devices_on(state: State, room: Room, node: str,
                claims: list[dict[str, Any]]) -> dict[str, list[Device]] | None:
    """The devices the pod's claims not yet placed would take on ``node`` (by claim), or None
    if one of its claims cannot be there."""
    taking: dict[str, list[Device]] = {}
    spare = {driver: list(devices) for driver, devices in room.free.get(node, {}).items()}
    for claim in claims:
        name = claim["metadata"]["name"]
        if allocated_devices(claim):
            if not selects_node(claim, node):
                return None
            continue
        if name in room.placed:
            if room.placed[name] != node:
                return None
            continue
        taking[name] = []
        for driver, count in _wanted(state, claim):
            if len(spare.get(driver, [])) < count:
                return None
            taking[name] += spare[driver][:count]
            spare[driver] = spare[driver][count:]
    return taking


def _wanted(state: State, claim: dict[str, Any]) -> list[tuple[str, int]]:
    """Each request of an unallocated claim: the driver its class selects, and how many."""
    ref = f"resourceclaim/{claim['metadata'].get('namespace', '')}/{claim['metadata']['name']}"
    devices = (claim.get("spec") or {}).get("devices") or {}
    if devices.get("constraints"):
        raise Unjudged(f"{ref} constrains its devices (spec.devices.constraints)")
    wanted = []
    for request in devices.get("requests") or []:
        exactly = request.get("exactly") or {}
        if not exactly or exactly.get("selectors") or exactly.get("adminAccess") \
                or exactly.get("tolerations") or exactly.get("capacity") \
                or exactly.get("allocationMode", "ExactCount") != "ExactCount":
            raise Unjudged(f"{ref} requests {request.get('name')} with more than a class and "
                           "a count")
        wanted.append((_driver(state, ref, exactly.get("deviceClassName", "")),
                       int(exactly.get("count", 1))))
    return wanted


def _driver(state: State, ref: str, name: str) -> str:
    device_class = state.get("deviceclasses", "", name)
    if device_class is None:
        raise Unjudged(f"{ref} names deviceclass/{name}, which was not recorded")
    spec = device_class.get("spec") or {}
    drivers = [DRIVER_ONLY.match((s.get("cel") or {}).get("expression", ""))
               for s in spec.get("selectors") or []]
    if len(drivers) != 1 or drivers[0] is None:
        raise Unjudged(f"deviceclass/{name} selects devices by more than their driver")
    return drivers[0].group(1)


def _claims(state: State, namespace: str, pod: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The pod's claims as recorded now (None: one is not made yet)."""
    statuses = {s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    found = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = entry.get("resourceClaimName") or statuses.get(entry.get("name"))
        claim = state.get("resourceclaims", namespace, name) if name else None
        if claim is None:
            return None
        found.append(claim)
    return found


def _free_devices(state: State) -> dict[str, dict[str, list[Device]]]:
    """The devices allocated to no claim, by node and driver, of slices local to one node
    whose pool is complete at its newest generation."""
    taken = {device for claim in state.select("resourceclaims")
             for device in allocated_devices(claim)}
    free: dict[str, dict[str, list[Device]]] = {}
    for (driver, pool), current in sorted(current_pools(state.select("resourceslices")).items()):
        if any(int(s["spec"]["pool"].get("resourceSliceCount", 1)) != len(current)
               for s in current):
            continue  # incomplete: the scheduler allocates nothing from it either
        for item in current:
            spec = item["spec"]
            if not spec.get("nodeName") or spec.get("sharedCounters"):
                continue
            for device in spec.get("devices") or []:
                key = (driver, pool, device.get("name", ""))
                if device.get("consumesCounters") or device.get("bindingConditions"):
                    raise Unjudged(f"resourceslice/{item['metadata']['name']}'s device "
                                   f"{key[2]} has counters or binding conditions")
                if key not in taken and not device.get("taints"):
                    free.setdefault(spec["nodeName"], {}).setdefault(driver, []).append(key)
    return free


def _left(state: State) -> dict[str, tuple[dict[str, Any], dict[str, Decimal]]]:
    """Each node (not being deleted): the node, and what it has left of its allocatable
    once the pods bound or nominated to it have theirs."""
    left = {}
    for node in state.select("nodes"):
        if deleting(node):
            continue
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        left[node["metadata"]["name"]] = (node, {key: parse_quantity(allocatable[key])
                                                 for key in ROOM if key in allocatable})
    for pod in state.select("pods"):
        # a pod a scheduler nominated to a node (to preempt for it) holds that room as well
        node = node_of(pod) or (pod.get("status") or {}).get("nominatedNodeName")
        if node in left and phase(pod) not in TERMINAL:
            have = left[node][1]
            for key, value in requests(pod).items():
                if key in have:
                    have[key] -= value
    return left


def placed_beyond_room(pod: dict[str, Any]) -> str | None:
    """What places the pod beyond this model (None: nothing)."""
    spec = pod.get("spec") or {}
    for name in PLACEMENT:
        if spec.get(name):
            return name
    if any(v.get("persistentVolumeClaim") or v.get("ephemeral") for v in spec.get("volumes") or []):
        return "a volume bound to a claim"
    if any(port.get("hostPort") for c in spec.get("containers") or []
           for port in c.get("ports") or []):
        return "a host port"
    return None


def requests(pod: dict[str, Any]) -> dict[str, Decimal]:
    """What a pod takes of a node's room, counted high: its containers' requests summed or its
    largest init container's, whichever is more, each resource, plus its overhead; one pod."""
    spec = pod.get("spec") or {}
    total: dict[str, Decimal] = {}
    for container in spec.get("containers") or []:
        for key, value in _asked(container).items():
            total[key] = total.get(key, Decimal(0)) + value
    for container in spec.get("initContainers") or []:
        for key, value in _asked(container).items():
            total[key] = max(total.get(key, Decimal(0)), value)
    for key, value in (spec.get("overhead") or {}).items():
        total[key] = total.get(key, Decimal(0)) + parse_quantity(value)
    total["pods"] = Decimal(1)
    return total


def _asked(container: dict[str, Any]) -> dict[str, Decimal]:
    resources = container.get("resources") or {}
    asked = {key: parse_quantity(v) for key, v in (resources.get("limits") or {}).items()}
    asked.update({key: parse_quantity(v) for key, v in (resources.get("requests") or {}).items()})
    return asked  # a limit with no request is the request
