"""The controller side, pure: which ResourceSlice each node should have, and what to change."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GROUP = "resource.k8s.io"
VERSIONS = ("v1", "v1beta2")  # preferred first: 1.34 serves v1, 1.33 only v1beta2 (same shape)
OWNER_LABEL = "aftershock.io/namespace"  # the harness sweeps cluster-scoped objects by it
DEVICES_LABEL = "aftershock.io/devices"  # set by the harness: the node's simulated devices
MODEL = "aftershock-sim"


def pick_version(served_versions: list[str]) -> str | None:
    """The version of resource.k8s.io to use, from the ones the cluster serves."""
    return next((v for v in VERSIONS if v in served_versions), None)


def device_count(label: str | None) -> int | None:
    """A node's device count from its DEVICES_LABEL: no label 0, not a count None."""
    if label is None:
        return 0
    return int(label) if re.fullmatch(r"[0-9]+", label) else None


def slice_name(node: str, driver: str) -> str:
    return f"{node}-{driver.replace('.', '-')}"


def devices(count: int, node: str) -> list[dict[str, Any]]:
    return [{"name": f"dev-{i}",
             "attributes": {"index": {"int": i}, "model": {"string": MODEL},
                            "node": {"string": node}}}
            for i in range(count)]


def slice_body(node: str, node_uid: str, *, driver: str, count: int, namespace: str,
               api_version: str) -> dict[str, Any]:
    """One slice, one pool named after the node, owned by the Node: the garbage collector
    deletes it with the node."""
    return {"apiVersion": api_version, "kind": "ResourceSlice",
            "metadata": {"name": slice_name(node, driver), "labels": {OWNER_LABEL: namespace},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                                              "uid": node_uid}]},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices(count, node)}}


def device_class_body(driver: str, api_version: str) -> dict[str, Any]:
    """The class claims name to get this driver's devices. No OWNER_LABEL: it is shared by
    every scenario, so no scenario's sweep may delete it."""
    return {"apiVersion": api_version, "kind": "DeviceClass", "metadata": {"name": driver},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


@dataclass(frozen=True)
class NodeDevices:
    uid: str
    devices: int


@dataclass(frozen=True)
class Create:
    node: str
    node_uid: str
    devices: int


@dataclass(frozen=True)
class Delete:
    name: str
    uid: str
    why: str


def owner_uid(slice_: Mapping[str, Any]) -> str | None:
    for ref in (slice_.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("kind") == "Node":
            return ref.get("uid")
    return None


def ours(slice_: Mapping[str, Any], driver: str, namespace: str) -> bool:
    meta, spec = slice_.get("metadata") or {}, slice_.get("spec") or {}
    return (spec.get("driver") == driver
            and (meta.get("labels") or {}).get(OWNER_LABEL) == namespace)


def _stale(slice_: Mapping[str, Any], nodes: Mapping[str, NodeDevices]) -> str | None:
    spec = slice_.get("spec") or {}
    node = spec.get("nodeName") or ""
    if node not in nodes:
        return f"node/{node} gone or not selected"
    if owner_uid(slice_) != nodes[node].uid:
        return f"node/{node} was recreated"
    count = nodes[node].devices
    if count == 0:
        return f"node/{node} has no devices"
    if [d.get("name") for d in spec.get("devices") or ()] != [f"dev-{i}" for i in range(count)]:
        return f"devices differ from the {count} of node/{node}"
    return None


def plan_slices(nodes: Mapping[str, NodeDevices], slices: Iterable[Mapping[str, Any]], *,
                driver: str, namespace: str) -> list[Create | Delete]:
    """nodes: name -> uid and device count of the live (selected) nodes. Deletions first: a
    slice of a vanished or recreated node, or with other devices than its node has; then a
    creation for every node with devices but without a good slice (a replaced one is created
    in a later round, once its deletion is seen)."""
    actions: list[Create | Delete] = []
    covered: set[str] = set()
    for slice_ in slices:
        if not ours(slice_, driver, namespace):
            continue
        meta = slice_.get("metadata") or {}
        node = (slice_.get("spec") or {}).get("nodeName") or ""
        why = _stale(slice_, nodes)
        if why:
            actions.append(Delete(meta.get("name", ""), meta.get("uid", ""), why))
        covered.add(node)
    actions += [Create(node, nodes[node].uid, nodes[node].devices) for node in sorted(nodes)
                if nodes[node].devices > 0 and node not in covered]
    return actions
