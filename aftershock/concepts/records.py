"""The node records concept: per-node bookkeeping (a record holding an index per node) read off
the recorded state, and the N properties judged over the whole history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aftershock.concepts import concept, get_path
from aftershock.history.state import State
from aftershock.kube import labels, stamps


@dataclass(frozen=True)
class NodeRecords:
    resource: str  # plural, as recorded
    namespace: str
    index_path: str
    node_path: str
    touched_path: str
    staleness: float
    poll: float
    slots: int
    node_selector: tuple[labels.Requirement, ...] = ()  # the nodes it keeps records for

    @classmethod
    def of(cls, scenario) -> NodeRecords:
        mapping = concept(scenario, "node_records")
        return cls(mapping["resource"]["plural"], scenario.namespace, mapping["index_path"],
                   mapping["node_path"], mapping["touched_path"],
                   float(mapping["staleness_seconds"]), float(mapping["poll_seconds"]),
                   int(mapping["slots"]), labels.parse(mapping.get("node_selector", "")))

    @property
    def highest(self) -> int:
        return self.slots - 1

    def reclaim_bound(self, latency: float) -> float:
        """From a node's deletion: its last touch is at most a poll earlier, staleness runs
        from there, the next poll notices, and the implementation takes ``latency`` to act."""
        return self.staleness + 2 * self.poll + latency

    def all(self, state: State) -> list[dict[str, Any]]:
        return state.select(self.resource, self.namespace)

    def index(self, record: dict[str, Any]) -> int | None:
        return get_path(record, self.index_path)

    def node(self, record: dict[str, Any]) -> str | None:
        return get_path(record, self.node_path)

    def holder(self, state: State, index: int) -> str | None:
        """The node holding ``index`` now, or None when no record holds it."""
        for record in self.all(state):
            if self.index(record) == index:
                return self.node(record)
        return None

    def nodes(self, state: State) -> set[str]:
        """The nodes it keeps records for (kind's control plane is no worker: a selector
        such as !node-role.kubernetes.io/control-plane leaves it out)."""
        if not self.node_selector:
            return state.names("nodes")
        return {node["metadata"]["name"] for node in state.select("nodes")
                if labels.matches(self.node_selector, node["metadata"].get("labels"))}

    def nodes_with_records(self, state: State) -> set[str]:
        return {self.node(record) for record in self.all(state)}

    def touched(self, record: dict[str, Any]) -> float | None:
        stamp = get_path(record, self.touched_path)
        if not stamp:
            return None
        return stamps.seconds(stamp)
