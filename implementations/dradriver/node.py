"""The node side, pure: which claims a pod uses, which allocated devices are this driver's on
the pod's node, and the prepare/unprepare decisions over the per-node prepared map."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Prepared:
    """One device prepared on a node for a claim (pool = node: one pool per node)."""
    node: str
    device: str
    claim: str  # <ns>/<name>
    claim_uid: str
    pod: str  # <ns>/<name>: the pod that prepared it, or that released it last


@dataclass(frozen=True)
class Prepare:
    devices: tuple[str, ...]  # empty: all prepared for this claim already


@dataclass(frozen=True)
class Wait:
    device: str
    holder_uid: str


def log_line(action: str, entry: Prepared, driver: str, now: float) -> dict[str, Any]:
    """One line of the prepare log (--log), joined onto the harness's timeline by time."""
    return {"time": now, "action": action, "node": entry.node, "driver": driver,
            "pool": entry.node, "device": entry.device, "claim": entry.claim,
            "claim_uid": entry.claim_uid, "pod": entry.pod}


# ---------------------------------------------------------------- reading objects

def pod_key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL


def terminating_gracefully(pod: Mapping[str, Any]) -> bool:
    """Being deleted with a grace period: the kubelet gets to stop it (and unprepare). A force
    deletion (kubectl --grace-period=0 --force, the pod GC) also shows a deletionTimestamp for
    one event before DELETED, but with deletionGracePeriodSeconds 0."""
    meta = pod.get("metadata") or {}
    grace = meta.get("deletionGracePeriodSeconds")
    return bool(meta.get("deletionTimestamp")) and (grace is None or grace > 0)


def wants_devices(pod: Mapping[str, Any]) -> bool:
    """Bound, not terminal, not being deleted: a kubelet would start its containers."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    return bool(spec.get("nodeName")) and not terminal(pod) and not meta.get("deletionTimestamp")


def pod_claim_names(pod: Mapping[str, Any]) -> list[str] | None:
    """The ResourceClaim names a pod uses: resourceClaimName for a direct one; for a template
    the name in status.resourceClaimStatuses (None: not generated yet — try later; a status with
    no name: the controller decided no claim is needed)."""
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses")
                or ()}
    names: list[str] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if entry.get("resourceClaimName"):
            names.append(entry["resourceClaimName"])
        elif entry.get("name") not in statuses:
            return None
        elif statuses[entry["name"]].get("resourceClaimName"):
            names.append(statuses[entry["name"]]["resourceClaimName"])
    return names


def reserved_for(claim: Mapping[str, Any], pod_uid: str) -> bool:
    return any(ref.get("uid") == pod_uid
               for ref in (claim.get("status") or {}).get("reservedFor") or ())


def node_devices(claim: Mapping[str, Any], driver: str, node: str) -> list[str]:
    """The devices of the claim's allocation that are this driver's on this node (our pools
    are named after their node), in allocation order, each once."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or ()
    found = [r.get("device", "") for r in results
             if r.get("driver") == driver and r.get("pool") == node]
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------- decisions

def decide(prepared: Mapping[str, Prepared], devices: Iterable[str], claim_uid: str,
           variant: str) -> Prepare | Wait:
    """What to do for a claim's devices on one node. correct: a device prepared for another
    claim is never prepared again — wait. faulty: the scheduler allocated it, so it must be
    free: prepared over whatever is there."""
    wanted = list(devices)
    if variant == "correct":
        for device in wanted:
            holder = prepared.get(device)
            if holder is not None and holder.claim_uid != claim_uid:
                return Wait(device, holder.claim_uid)
    return Prepare(tuple(d for d in wanted
                         if d not in prepared or prepared[d].claim_uid != claim_uid))


def forgets(variant: str, forced: bool) -> bool:
    """faulty: a pod that vanished by force deletion leaves its devices prepared."""
    return variant == "faulty" and forced


@dataclass
class Ledger:
    """What the driver's plugins hold: per node, device -> its Prepared; per (node, claim uid),
    the pods (uid -> <ns>/<name>) on that node using the claim."""
    variant: str
    prepared: dict[str, dict[str, Prepared]] = field(default_factory=dict)
    users: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def on(self, node: str) -> dict[str, Prepared]:
        return self.prepared.get(node, {})

    def uses(self, node: str, claim_uid: str, pod_uid: str) -> bool:
        return pod_uid in self.users.get((node, claim_uid), {})

    def prepare(self, node: str, devices: Iterable[str], claim: str, claim_uid: str,
                pod_uid: str, pod: str) -> list[Prepared]:
        """Records the devices as prepared for the claim (over any entry: the caller decided)
        and the pod as its user; returns what was newly prepared."""
        done = [Prepared(node, d, claim, claim_uid, pod) for d in devices]
        self.prepared.setdefault(node, {}).update({p.device: p for p in done})
        self.users.setdefault((node, claim_uid), {})[pod_uid] = pod
        return done

    def release(self, pod_uid: str, forced: bool) -> list[Prepared]:
        """The pod terminated or went: each claim it used that no other pod on the node uses
        any more has its devices there unprepared (the returned entries name this pod)."""
        gone: list[Prepared] = []
        for (node, claim_uid), pods in list(self.users.items()):
            pod = pods.pop(pod_uid, None)
            if pod is None or pods:
                continue
            del self.users[(node, claim_uid)]
            if forgets(self.variant, forced):
                continue
            held = self.prepared.get(node, {})
            for device, entry in list(held.items()):
                if entry.claim_uid == claim_uid:
                    gone.append(replace(held.pop(device), pod=pod))
        return gone

    def pods(self) -> set[str]:
        return {uid for pods in self.users.values() for uid in pods}
