"""The controller side, pure: which ResourceSlice each node should have, and what to change."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

API_VERSION = "resource.k8s.io/v1"
OWNER_LABEL = "aftershock.io/namespace"  # the harness sweeps cluster-scoped objects by it
MODEL = "aftershock-sim"


def slice_name(node: str, driver: str) -> str:
    return f"{node}-{driver.replace('.', '-')}"


def devices(count: int, node: str) -> list[dict[str, Any]]:
    return [{"name": f"dev-{i}",
             "attributes": {"index": {"int": i}, "model": {"string": MODEL},
                            "node": {"string": node}}}
            for i in range(count)]


def slice_body(node: str, node_uid: str, *, driver: str, count: int,
               namespace: str) -> dict[str, Any]:
    """One slice, one pool named after the node, owned by the Node: the garbage collector
    deletes it with the node."""
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice",
            "metadata": {"name": slice_name(node, driver), "labels": {OWNER_LABEL: namespace},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                                              "uid": node_uid}]},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices(count, node)}}


@dataclass(frozen=True)
class Create:
    node: str
    node_uid: str


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


def _stale(slice_: Mapping[str, Any], nodes: Mapping[str, str], count: int) -> str | None:
    spec = slice_.get("spec") or {}
    node = spec.get("nodeName") or ""
    if node not in nodes:
        return f"node/{node} gone or not selected"
    if owner_uid(slice_) != nodes[node]:
        return f"node/{node} was recreated"
    if [d.get("name") for d in spec.get("devices") or ()] != [f"dev-{i}" for i in range(count)]:
        return f"devices differ from {count} per node"
    return None


def plan_slices(nodes: Mapping[str, str], slices: Iterable[Mapping[str, Any]], *, driver: str,
                count: int, namespace: str) -> list[Create | Delete]:
    """nodes: name -> uid of the live (selected) nodes. Deletions first: a slice of a vanished
    or recreated node, or with other devices; then a creation for every node without a good
    slice (a replaced one is created in a later round, once its deletion is seen)."""
    actions: list[Create | Delete] = []
    covered: set[str] = set()
    for slice_ in slices:
        if not ours(slice_, driver, namespace):
            continue
        meta = slice_.get("metadata") or {}
        node = (slice_.get("spec") or {}).get("nodeName") or ""
        why = _stale(slice_, nodes, count)
        if why:
            actions.append(Delete(meta.get("name", ""), meta.get("uid", ""), why))
        covered.add(node)
    actions += [Create(node, nodes[node]) for node in sorted(nodes) if node not in covered]
    return actions
