"""Node faults: cordon, node failure (its kubelet stops), a node taken out of service, node
deletion without a drain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes import client

from aftershock.kube import door
from aftershock.kube.api import (
    cordon,
    node_label,
    set_node_label,
    set_taint,
    suppress_not_found,
    uncordon,
)


@dataclass
class Cordon:
    api: Any
    node: str

    @property
    def description(self) -> str:
        return f"node/{self.node} cordoned"

    @property
    def undo(self) -> dict:
        """How `cluster gc` undoes it on a reused cluster when the run was killed."""
        return {"do": "uncordon", "node": self.node}

    def apply(self) -> None:
        cordon(self.api, self.node)

    def revert(self) -> None:
        uncordon(self.api, self.node)


@dataclass
class NodeLabel:
    """A node's label set (``value``) or removed (None), as ``kubectl label node`` does; its
    value before is put back at the end."""

    api: Any
    node: str
    key: str
    value: str | None
    before: str | None = None

    @property
    def description(self) -> str:
        if self.value is None:
            return f"label {self.key} removed from node/{self.node}"
        return f"node/{self.node} labelled {self.key}={self.value}"

    @property
    def undo(self) -> dict:
        # asked for once, before the fault is applied (Scenario.inject): the value to put back
        self.before = node_label(self.api, self.node, self.key)
        return {"do": "label", "node": self.node, "key": self.key, "value": self.before}

    def apply(self) -> None:
        set_node_label(self.api, self.node, self.key, self.value)

    def revert(self) -> None:
        with suppress_not_found():
            set_node_label(self.api, self.node, self.key, self.before)


@dataclass
class NodeFailure:
    """The node's kubelet stops: its lease is no longer renewed, nothing else changes. The real
    node lifecycle controller then marks it NotReady and taints it."""

    cluster: Any
    node: str

    @property
    def description(self) -> str:
        return f"node/{self.node} failed (kubelet stopped)"

    def apply(self) -> None:
        self.cluster.stop_kubelet(self.node)

    def revert(self) -> None:
        self.cluster.start_kubelet(self.node)


OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown",
                  "effect": "NoExecute"}


@dataclass
class OutOfService:
    """The node is marked out of service, as an administrator does for a node that went down
    (Kubernetes' non-graceful node shutdown): its pods are evicted, and the pod garbage
    collector force-deletes those of a node that is not Ready, so a StatefulSet makes them
    again elsewhere."""

    api: Any
    node: str

    @property
    def description(self) -> str:
        return f"node/{self.node} out of service"

    def apply(self) -> None:
        set_taint(self.api, self.node, OUT_OF_SERVICE, True)

    def revert(self) -> None:
        with suppress_not_found():
            set_taint(self.api, self.node, OUT_OF_SERVICE, False)


@dataclass
class NodeDeletion:
    """The Node object is deleted without a drain, and its kubelet is gone with it."""

    cluster: Any
    api: Any
    node: str

    @property
    def description(self) -> str:
        return f"node/{self.node} deleted without a drain"

    def apply(self) -> None:
        self.cluster.stop_kubelet(self.node)
        door.delete(client.CoreV1Api(self.api).delete_node, self.node)

    def revert(self) -> None:
        self.cluster.reset_nodes()
