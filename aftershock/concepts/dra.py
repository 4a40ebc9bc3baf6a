"""Dynamic resource allocation judged over the history (D1-D6 of docs/properties.md):
ResourceClaims and pods from the recorder, the driver's prepare log joined by wall time."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aftershock.history.state import State
from aftershock.profile.schema import SEEN_IDENTITIES

Device = tuple[str, str, str]  # driver, pool, device


def current_pools(slices: Iterable[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Each pool (driver, pool name) with its slices at its newest generation: what a scheduler
    reads, ignoring an older generation while a newer one is being published."""
    pools: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in slices:
        spec = item.get("spec") or {}
        pools.setdefault((spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")),
                         []).append(item)
    newest = {key: max(map(_generation, found)) for key, found in pools.items()}
    return {key: [s for s in found if _generation(s) == newest[key]]
            for key, found in pools.items()}


def _generation(item: dict[str, Any]) -> int:
    return int(((item.get("spec") or {}).get("pool") or {}).get("generation", 0))


def allocated_devices(claim: dict[str, Any]) -> list[Device]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    return [(r.get("driver", ""), r.get("pool", ""), r.get("device", "")) for r in results]


def shared_name(device: str, share: str | None) -> str:
    """A device, or one share of it (KEP-5075: a device that allows multiple allocations is
    held share by share, each result with its own shareID)."""
    return device + (f"#share-{share}" if share else "")


def admin_access(claim: dict[str, Any], device: Device) -> bool:
    """Whether the claim holds ``device`` (or a share of it) with admin access (KEP-5018: an
    admin-access allocation is not counted against the device's exclusivity). A device whose
    driver is not known ("") is matched by its pool and name."""
    driver, pool, name = device
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return any(r.get("adminAccess") and r.get("pool", "") == pool
               and driver in ("", r.get("driver", ""))
               and name in (shared_name(r.get("device", ""), r.get("shareID")), r.get("device"))
               for r in (allocation.get("devices") or {}).get("results") or [])


def held_alone(claim: dict[str, Any]) -> list[Device]:
    """The devices a claim holds alone: an admin-access result shares its device by design,
    and a result with a shareID holds a share of a device with consumable capacity (the share,
    not the device, is its own, so it counts as the device and its share)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    return [(r.get("driver", ""), r.get("pool", ""),
             shared_name(r.get("device", ""), r.get("shareID")))
            for r in results if not r.get("adminAccess")]


def _reserved(claim: dict[str, Any]) -> list[dict[str, Any]]:
    return (claim.get("status") or {}).get("reservedFor") or []


def consumers(claim: dict[str, Any]) -> set[str]:
    """The uids of every consumer the claim is reserved for: pods, and a PodGroup (KEP-5729)
    or any other resource that holds it."""
    return {ref.get("uid", "") for ref in _reserved(claim)}


def reserved_for(claim: dict[str, Any]) -> set[str]:
    """The pods (uids) the claim is reserved for. A consumer of another resource (KEP-5729: a
    PodGroup's claim is reserved for the group) is no pod, and not among them."""
    return {ref.get("uid", "") for ref in _reserved(claim)
            if ref.get("resource", "pods") == "pods" and not ref.get("apiGroup")}


def reserves(claim: dict[str, Any], pod: dict[str, Any], uid: str) -> bool:
    """Whether the claim is reserved for the pod: for it (its uid), or for the PodGroup it is
    scheduled in (KEP-5729: {apiGroup: scheduling.k8s.io, resource: podgroups, name}, the pod
    naming its group in spec.schedulingGroup.podGroupName). ``uid``: the pod's."""
    if uid in reserved_for(claim):
        return True
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    return bool(group) and any(
        ref.get("apiGroup") == "scheduling.k8s.io" and ref.get("resource") == "podgroups"
        and ref.get("name") == group for ref in _reserved(claim))


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
    """The ResourceClaims a pod uses: named directly, generated from a template, or made by
    the scheduler for the extended resources a DeviceClass backs (KEP-5004, named in the pod's
    status.extendedResourceClaimStatus)."""
    status = pod.get("status") or {}
    names = [c["resourceClaimName"] for c in (pod.get("spec") or {}).get("resourceClaims") or []
             if c.get("resourceClaimName")]
    names += [s["resourceClaimName"] for s in status.get("resourceClaimStatuses") or []
              if s.get("resourceClaimName")]
    extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    return [*names, extended] if extended else names


def read_prepare_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


KUBELET_DRA_STATE = "/var/lib/kubelet/dra_manager_state"


def kubelet_prepared(text: str) -> dict[Device, set[str]]:
    """What the kubelet's DRA checkpoint on a node (``KUBELET_DRA_STATE``) says is prepared:
    each device (driver, pool, device) and the claims (``ns/name``) it is prepared for. The
    kubelet writes an entry before it asks the driver (no devices yet) and fills in the devices
    from the driver's answer, so an entry with devices is a prepared claim. Written by the
    kubelet, not the driver: what the node shows, not what the driver says of itself. A share of
    a device (its ShareID, KEP-5075) is held on its own: ``device#share-<id>``.

    ValueError for a file that is not such a checkpoint, or whose checksum (CRC-32 of its
    ``Data``) does not match: a torn read is no evidence."""
    outer = json.loads(text)
    if not isinstance(outer, dict) or not isinstance(outer.get("Data"), str):
        raise ValueError("not a kubelet DRA checkpoint: no Data")
    if zlib.crc32(outer["Data"].encode()) != outer.get("Checksum"):
        raise ValueError("the checkpoint's checksum does not match its data")
    prepared: dict[Device, set[str]] = {}
    for claim in json.loads(outer["Data"]).get("ClaimInfoStateList") or []:
        name = f"{claim.get('Namespace', '')}/{claim.get('ClaimName', '')}"
        for driver, state in (claim.get("DriverState") or {}).items():
            for device in (state or {}).get("Devices") or []:
                key = (driver, device.get("PoolName", ""),
                       shared_name(device.get("DeviceName", ""), device.get("ShareID")))
                prepared.setdefault(key, set()).add(name)
    return prepared


def kubelet_claims(text: str) -> list[dict[str, Any]]:
    """The claims of the kubelet's DRA checkpoint as it stores them (``ClaimInfoStateList``).
    ValueError as for ``kubelet_prepared``."""
    kubelet_prepared(text)  # the same checks: a torn read is no evidence
    return list(json.loads(json.loads(text)["Data"]).get("ClaimInfoStateList") or [])


def kubelet_duplicates(text: str) -> list[tuple[str, str]]:
    """(claim ``ns/name``, what is repeated) for every claim the checkpoint lists a device
    twice for (the same pool, device and share), or a CDI device id twice: what a kubelet
    that appended a re-preparation's answer to the one it had kept wrote
    (kubernetes/kubernetes#140471). ValueError as for ``kubelet_prepared``."""
    found = []
    for claim in kubelet_claims(text):
        name = f"{claim.get('Namespace', '')}/{claim.get('ClaimName', '')}"
        for driver, state in sorted((claim.get("DriverState") or {}).items()):
            devices = (state or {}).get("Devices") or []
            keys = [(d.get("PoolName", ""), d.get("DeviceName", ""), d.get("ShareID") or "")
                    for d in devices]
            ids = [cdi for d in devices for cdi in d.get("CDIDeviceIDs") or []]
            for pool, device, share in sorted({k for k in keys if keys.count(k) > 1}):
                found.append((name, f"device {pool}/{device}{f'#{share}' if share else ''} of "
                              f"{driver} listed {keys.count((pool, device, share))} times"))
            for cdi in sorted({i for i in ids if ids.count(i) > 1}):
                found.append((name, f"CDI device {cdi} listed {ids.count(cdi)} times"))
    return found


def kubelet_consumers(text: str) -> dict[str, set[str]]:
    """The pods (UIDs) the kubelet's DRA checkpoint says each claim (``ns/name``) was prepared
    for on its node. ValueError as for ``kubelet_prepared``."""
    consumers: dict[str, set[str]] = {}
    for claim in kubelet_claims(text):
        name = f"{claim.get('Namespace', '')}/{claim.get('ClaimName', '')}"
        consumers.setdefault(name, set()).update(claim.get("PodUIDs") or ())
    return consumers


def departed_released(state: State, namespace: str) -> bool:
    """D4: no claim is reserved for a pod that is gone or finished (Succeeded or Failed: its
    containers will not run again), and no claim generated for such a pod still exists."""
    pods = {p["metadata"].get("uid") for p in state.select("pods", namespace)
            if not (p.get("metadata") or {}).get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")}
    for claim in state.select("resourceclaims", namespace):
        if reserved_for(claim) - pods:
            return False
        owners = [o for o in (claim.get("metadata") or {}).get("ownerReferences") or []
                  if o.get("kind") == "Pod"]
        if owners and all(o.get("uid") not in pods for o in owners):
            return False
    return True


# What a container shows of a device (the listener's log: aftershock-sees env/dev lines)
SEES = "aftershock-sees "


def container_claims(pod: dict[str, Any], container: str) -> list[str]:
    """The ResourceClaims a container of a pod uses: those its resources.claims name, through
    the pod's resourceClaims (a claim named directly, or the one generated from a template,
    by the pod's status)."""
    spec = pod.get("spec") or {}
    wanted = next(({c.get("name") for c in (x.get("resources") or {}).get("claims") or []}
                   for x in spec.get("containers") or [] if x.get("name") == container), set())
    generated = {s.get("name"): s.get("resourceClaimName")
                 for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    found = []
    for claim in spec.get("resourceClaims") or []:
        if claim.get("name") not in wanted:
            continue
        name = claim.get("resourceClaimName") or generated.get(claim.get("name"))
        found.append(name or f"<not generated yet: {claim.get('name')}>")
    return found


def env_name(text: str) -> str:
    """A name as the Kubernetes e2e test driver writes it into an environment variable's."""
    return re.sub(r"[^a-zA-Z0-9]", "_", text)


def seen_lines(log: str) -> tuple[list[str], bool]:
    """What a container's log says it sees, and whether it said all of it (its end line)."""
    lines = [line[len(SEES):] for line in log.splitlines() if line.startswith(SEES)]
    return [line for line in lines if line != "end"], "end" in lines


def seen_identities(lines: list[str], patterns: list[dict[str, str]]) -> set[tuple[str, str]]:
    """The devices (or claims) a container's environment and /dev show, by the profile's
    patterns: each {env: REGEX, device|claim|claim_uid: TEMPLATE}, the template's {value} the
    variable's value and {1}.. its groups; or {dev: REGEX, device: TEMPLATE} for /dev."""
    found = set()
    for line in lines:
        where, _, text = line.partition(" ")
        name, _, value = text.partition("=") if where == "env" else (text, "", "")
        for pattern in patterns:
            regex = pattern.get(where)
            match = re.fullmatch(regex, name) if regex else None
            if not match:
                continue
            for identity in SEEN_IDENTITIES:
                if identity in pattern:
                    found.add((identity, pattern[identity].format(
                        "", *match.groups(), value=value)))
    return found
