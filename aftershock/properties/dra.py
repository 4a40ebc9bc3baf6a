"""D: dynamic resource allocation (CONFORMANCE.md), on the real scheduler and resource-claim
controller, with the profile's driver (its prepare log travels with the judgement)."""

from __future__ import annotations

from aftershock.checks.verdict import Verdict
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.sut import dra as judge


@check("allocated_before_bind", "When a pod is bound, each of its claims already has an "
       "allocation for that node that lists the pod in reservedFor.")
def allocated_before_bind(history: History, p: Params) -> Verdict:
    return judge.allocated_before_bind(history.entries, p["namespace"])


@check("exclusive_devices", "A device is in at most one claim's allocation at any recorded "
       "moment.")
def exclusive_devices(history: History, p: Params) -> Verdict:
    return judge.exclusive_devices(history.entries)


@check("node_side_exclusive", "On a node, a device is never prepared for two claims at once "
       "(by the driver's prepare log).")
def node_side_exclusive(history: History, p: Params) -> Verdict:
    return judge.node_side_exclusive(p["prepare_log"], list(history.entries))


@check("never_deallocated_in_use", "A claim's allocation never changes to another, and is "
       "never cleared while the claim is reserved.")
def never_deallocated_in_use(history: History, p: Params) -> Verdict:
    return judge.never_deallocated_in_use(history.entries)


@check("nothing_from_gone_slices", "Once a node is deleted, nothing is allocated from its "
       "devices.")
def nothing_from_gone_slices(history: History, p: Params) -> Verdict:
    return judge.nothing_from_gone_slices(history.entries, p["node"])


CONCEPTS = ("device_driver",)
prop("D1", "Allocate before bind: when a pod is bound, each of its claims is allocated for "
     "that node and lists the pod in reservedFor.", ["allocated_before_bind"], CONCEPTS)
prop("D2", "Exclusive devices: a device is in at most one claim's allocation at any time.",
     ["exclusive_devices"], CONCEPTS)
prop("D3", "No deallocation while in use: an allocation never changes to another, and is never "
     "cleared while reserved.", ["never_deallocated_in_use"], CONCEPTS)
prop("D4", "Release: a departed consumer leaves reservedFor, and an unused generated claim is "
     "deleted, within T.", ["eventually"], CONCEPTS)
prop("D5", "Node-side exclusivity: on a node a device is never prepared for two claims at "
     "once.", ["node_side_exclusive"], CONCEPTS)
prop("D6", "Node loss: ResourceSlices of a deleted node disappear; nothing new is allocated "
     "from them.", ["eventually", "nothing_from_gone_slices"], CONCEPTS, ("node_delete",))
prop("D7", "D2-D4 hold across kube-controller-manager / kube-scheduler restarts and watch "
     "delays.", ["eventually", "exclusive_devices", "allocated_before_bind",
                 "node_side_exclusive", "never_deallocated_in_use"], CONCEPTS,
     ("component_restart",))
