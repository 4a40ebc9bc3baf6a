"""Dynamic resource allocation judged over the history (D1-D6 of CONFORMANCE.md):
ResourceClaims and pods from the recorder, the driver's prepare log joined by wall time."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.timeline.entry import GAP_END, MARK, WATCH, Entry
from aftershock.timeline.state import State, replay

Device = tuple[str, str, str]  # driver, pool, device


def revision(entry: Entry) -> int:
    return int(entry.rv) if entry.rv.isdigit() else 0


def allocated_devices(claim: dict[str, Any]) -> list[Device]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    return [(r.get("driver", ""), r.get("pool", ""), r.get("device", "")) for r in results]


def reserved_for(claim: dict[str, Any]) -> set[str]:
    return {ref.get("uid", "") for ref in (claim.get("status") or {}).get("reservedFor") or []}


def selects_node(claim: dict[str, Any], node: str) -> bool:
    """Whether the allocation's node selector admits ``node`` (no selector: any node)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    selector = allocation.get("nodeSelector")
    if not selector:
        return True
    for term in selector.get("nodeSelectorTerms") or []:
        fields = term.get("matchFields") or []
        if all(f.get("key") == "metadata.name" and f.get("operator") == "In"
               and node in (f.get("values") or []) for f in fields) and fields:
            return True
        labels = term.get("matchExpressions") or []
        if labels and all(e.get("key") == "kubernetes.io/hostname" and e.get("operator") == "In"
                          and node in (e.get("values") or []) for e in labels):
            return True
    return False


def claim_names(pod: dict[str, Any]) -> list[str]:
    """The ResourceClaims a pod uses: named directly, or generated from a template."""
    names = [c["resourceClaimName"] for c in (pod.get("spec") or {}).get("resourceClaims") or []
             if c.get("resourceClaimName")]
    names += [s["resourceClaimName"] for s in
              (pod.get("status") or {}).get("resourceClaimStatuses") or []
              if s.get("resourceClaimName")]
    return names


def allocated_before_bind(entries: Iterable[Entry], namespace: str,
                          name: str = "allocated_before_bind") -> Verdict:
    """D1: at the revision a pod is bound, each of its claims is allocated for that node and
    reserved for that pod (ordered by etcd revision, one order across resources)."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    claims: dict[str, list[Entry]] = {}
    bound: dict[str, Entry] = {}
    reads = frozenset({"pods", "resourceclaims"})
    for entry in entries:
        if entry.kind != WATCH or entry.namespace != namespace:
            continue
        if entry.resource == "resourceclaims":
            claims.setdefault(entry.name, []).append(entry)
        elif entry.resource == "pods" and entry.uid not in bound and \
                ((entry.object or {}).get("spec") or {}).get("nodeName"):
            bound[entry.uid] = entry
    judged = 0
    for pod_uid, binding in bound.items():
        pod = binding.object or {}
        node = pod["spec"]["nodeName"]
        for claim_name in claim_names(pod):
            judged += 1
            earlier = [e for e in claims.get(claim_name, []) if revision(e) < revision(binding)
                       and e.type != "DELETED"]
            claim = earlier[-1].object if earlier else None
            problem = _not_ready_for(claim, node, pod_uid)
            if problem:
                witness = ([earlier[-1]] if earlier else []) + [binding]
                # With no earlier claim entry, a gap could have hidden its creation.
                return Verdict(name, VIOLATED, f"{binding.ref} was bound to node/{node} while "
                               f"resourceclaim/{namespace}/{claim_name} {problem}", witness,
                               origin, subjects=judged, by_absence=not earlier, reads=reads)
    summary = (f"{judged} claims of {len(bound)} bound pods were allocated and reserved before "
               "the binding" if judged else "no bound pod with a resource claim was recorded")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _not_ready_for(claim: dict[str, Any] | None, node: str, pod_uid: str) -> str | None:
    if claim is None:
        return "did not exist yet"
    if not allocated_devices(claim):
        return "was not allocated"
    if not selects_node(claim, node):
        return f"was allocated for another node than node/{node}"
    if pod_uid not in reserved_for(claim):
        return "was not reserved for the pod"
    return None


def exclusive_devices(entries: Iterable[Entry], name: str = "exclusive_devices") -> Verdict:
    """D2: at every recorded event, a device is in at most one claim's allocation."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"resourceclaims"})
    claims: set[str] = set()
    for entry, state in replay(entries):
        if entry.kind not in (WATCH, GAP_END) or entry.resource != "resourceclaims":
            continue
        claims.update(f"{k[1]}/{k[2]}" for k in state.index("resourceclaims").members)
        holders = _holders(state)
        shared = {d: c for d, c in holders.items() if len(c) > 1}
        if shared:
            device, owners = next(iter(shared.items()))
            return Verdict(name, VIOLATED, f"device {'/'.join(device)} is allocated to "
                           f"{len(owners)} claims at once: {', '.join(sorted(owners))}",
                           [entry], origin, subjects=len(claims), reads=reads)
    summary = (f"no device was ever in two allocations ({len(claims)} claims)" if claims else
               "no resource claim was ever recorded")
    return Verdict(name, PASS, summary, [], origin, subjects=len(claims), reads=reads)


def _holders(state: State) -> dict[Device, set[str]]:
    holders: dict[Device, set[str]] = {}
    for claim in state.select("resourceclaims"):
        meta = claim.get("metadata") or {}
        for device in allocated_devices(claim):
            holders.setdefault(device, set()).add(f"{meta.get('namespace')}/{meta.get('name')}")
    return holders


def read_prepare_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def as_entries(records: list[dict[str, Any]], timeline: list[Entry]) -> list[Entry]:
    """Log lines as timeline marks, placed on the recorder's clock by their wall time."""
    if not timeline:
        return []
    offset = timeline[0].mono - timeline[0].wall
    return [Entry(seq=-1, mono=r["time"] + offset, wall=r["time"], kind=MARK,
                  detail=f"driver {r['action']} {r['device']} on node/{r['node']} for claim "
                         f"{r['claim']} (pod {r.get('pod', '?')})")
            for r in records]


def node_side_exclusive(records: list[dict[str, Any]], timeline: list[Entry],
                        name: str = "node_side_exclusive") -> Verdict:
    """D5: on a node, a device is never prepared for two claims at once (the driver's log)."""
    origin = timeline[0].mono if timeline else 0.0
    prepared: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: r["time"]):
        key = (record["node"], record.get("pool", record["node"]), record["device"])
        if record["action"] == "prepare":
            held = prepared.get(key)
            if held and held[0] != record["claim_uid"]:
                witness = as_entries([held[1], record], timeline)
                return Verdict(name, VIOLATED, f"device {record['device']} on node/"
                               f"{record['node']} was prepared for claim {record['claim']} "
                               f"while still prepared for {held[1]['claim']}", witness, origin,
                               subjects=len(records), reads=frozenset())
            prepared[key] = (record["claim_uid"], record)
        elif record["action"] == "unprepare" and prepared.get(key, ("",))[0] == \
                record["claim_uid"]:
            del prepared[key]
    count = sum(1 for r in records if r["action"] == "prepare")
    summary = (f"{count} prepares, never two claims on one device" if count else
               "the driver logged no prepare at all")
    return Verdict(name, PASS, summary, [], origin, subjects=count, reads=frozenset())


def nothing_from_gone_slices(entries: Iterable[Entry], node: str,
                             name: str = "nothing_from_gone_slices") -> Verdict:
    """D6: once node/<node> is deleted, no claim gets a new allocation from its pool."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    gone_at: Entry | None = None
    allocated: dict[str, list[Device]] = {}
    previous: dict[str, Entry] = {}
    reads = frozenset({"nodes", "resourceclaims"})
    for entry in entries:
        if entry.kind != WATCH:
            continue
        if entry.resource == "nodes" and entry.name == node and entry.type == "DELETED":
            gone_at = entry
        if entry.resource != "resourceclaims":
            continue
        devices = allocated_devices(entry.object or {}) if entry.type != "DELETED" else []
        new = [d for d in devices if d not in allocated.get(entry.uid, [])]
        allocated[entry.uid] = devices
        before = previous.get(entry.uid)
        previous[entry.uid] = entry
        if gone_at is not None and any(pool == node for _, pool, _ in new):
            witness = sorted([e for e in (before, gone_at, entry) if e], key=lambda e: e.seq)
            return Verdict(name, VIOLATED, f"{entry.ref} was allocated a device of node/{node} "
                           "after the node was deleted", witness, origin, subjects=1,
                           by_absence=before is None, reads=reads)
    if gone_at is None:
        return Verdict(name, UNKNOWN, f"node/{node} was never seen deleted", [], origin,
                       subjects=0, reads=reads)
    return Verdict(name, PASS, f"nothing was allocated from node/{node} after its deletion",
                   [], origin, subjects=1, reads=reads)


def never_deallocated_in_use(entries: Iterable[Entry],
                             name: str = "never_deallocated_in_use") -> Verdict:
    """D3: a claim's allocation never turns into another allocation, and is never cleared
    while the claim is still reserved for a consumer."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    last: dict[str, tuple[list[Device], set[str], Entry]] = {}
    reads = frozenset({"resourceclaims"})
    for entry in entries:
        if entry.kind != WATCH or entry.resource != "resourceclaims":
            continue
        claim = entry.object or {}
        devices = [] if entry.type == "DELETED" else allocated_devices(claim)
        reserved = reserved_for(claim)
        before = last.get(entry.uid)
        if before and before[0]:
            if devices and devices != before[0]:
                return Verdict(name, VIOLATED, f"{entry.ref} was re-allocated from "
                               f"{_names(before[0])} to {_names(devices)}", [before[2], entry],
                               origin, subjects=len(last), reads=reads)
            if not devices and before[1] and reserved:
                return Verdict(name, VIOLATED, f"{entry.ref} lost its allocation while still "
                               f"reserved for {len(reserved)} consumers", [before[2], entry],
                               origin, subjects=len(last), reads=reads)
        last[entry.uid] = (devices, reserved, entry)
    return Verdict(name, PASS, f"{len(last)} claims, none re-allocated or freed while in use",
                   [], origin, subjects=len(last), reads=reads)


def _names(devices: list[Device]) -> str:
    return ", ".join("/".join(device) for device in devices)


def departed_released(state: State, namespace: str) -> bool:
    """D4: no claim is reserved for a pod that is gone, and no claim generated for a pod that
    is gone still exists."""
    pods = {p["metadata"].get("uid") for p in state.select("pods", namespace)
            if not (p.get("metadata") or {}).get("deletionTimestamp")}
    for claim in state.select("resourceclaims", namespace):
        if reserved_for(claim) - pods:
            return False
        owners = [o for o in (claim.get("metadata") or {}).get("ownerReferences") or []
                  if o.get("kind") == "Pod"]
        if owners and all(o.get("uid") not in pods for o in owners):
            return False
    return True
