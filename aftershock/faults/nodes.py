"""Node faults: cordon, node failure (its kubelet stops), node deletion without a drain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes import client

from aftershock.kube import cordon, uncordon


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
        client.CoreV1Api(self.api).delete_node(self.node)

    def revert(self) -> None:
        self.cluster.reset_nodes()
