"""The node records concept: per-node bookkeeping (a record holding an index per node) read off
the recorded state, and the N properties judged over the whole history."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aftershock import labels
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.sut.concepts import concept, get_path
from aftershock.timeline.entry import GAP_END, WATCH, Entry
from aftershock.timeline.state import State, changes_of, replay


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
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _release(records: NodeRecords, entry: Entry, before: dict[str, Any] | None):
    """(released node, record as last seen) when ``entry`` releases or re-assigns a record."""
    if before is None or entry.kind != WATCH or entry.resource != records.resource \
            or entry.namespace != records.namespace:
        return None
    if entry.type == "DELETED" or records.node(entry.object or {}) != records.node(before):
        return records.node(before), before
    return None


def _revision(entry: Entry) -> int:
    return int(entry.rv) if entry.rv.isdigit() else 0


def _gone_by(entries: list[Entry], node: str, release: Entry) -> bool:
    """Whether node/<node> may have been deleted before ``release`` in etcd's order: its
    deletion has an earlier revision, wherever the node watch delivered it (arrival order
    across two watches is not the cluster's), or a re-list found it gone (when, a gap hides)."""
    for entry in entries:
        if entry.resource != "nodes":
            continue
        if entry.kind == WATCH and entry.name == node and entry.type == "DELETED" and \
                _revision(entry) < _revision(release):
            return True
        if entry.kind == GAP_END and any(key[2] == node and obj is None
                                         for key, obj in changes_of(entry)):
            return True
    return False


def never_reclaimed_early(entries: Iterable[Entry], records: NodeRecords,
                          name: str = "never_reclaimed_early") -> Verdict:
    """N2: every release or re-assignment of a record happens when its node is gone AND the
    record has not been touched for the staleness window."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"nodes", records.resource})
    last_seen: dict[str, tuple[dict[str, Any], Entry]] = {}
    node_gone_at: dict[str, Entry] = {}
    reclaims = 0
    seen: set[str] = set()
    for entry, state in replay(entries):
        if entry.kind == WATCH and entry.resource == "nodes" and entry.type == "DELETED":
            node_gone_at[entry.name] = entry
        earlier = last_seen.get(entry.name)
        released = _release(records, entry, earlier[0] if earlier else None)
        if entry.kind == WATCH and entry.resource == records.resource \
                and entry.namespace == records.namespace:
            seen.add(entry.name)
            if entry.type == "DELETED":  # a later ADDED is a new record, not a hand-over
                last_seen.pop(entry.name, None)
            else:
                last_seen[entry.name] = (entry.object or {}, entry)
        if released is None:
            continue
        reclaims += 1
        node, before = released
        prior = earlier[1] if earlier else entry  # what it was released from, as last seen
        touched = records.touched(before)
        if node in records.nodes(state) and not _gone_by(entries, node, entry):
            return Verdict(name, VIOLATED, f"{entry.ref} was released from node/{node} while "
                           f"node/{node} still existed", [prior, entry], origin,
                           subjects=len(seen), reads=reads)
        if touched is None:
            return Verdict(name, UNKNOWN, f"{entry.ref} was released but carries no "
                           f"{records.touched_path}: its freshness cannot be judged", [entry],
                           origin, reads=reads)
        # The recorder sees a release after it happened, so this never makes a correct
        # implementation look early; the touch time is the implementation's own stamp.
        fresh_for = entry.wall - touched
        if fresh_for < records.staleness:
            witness = sorted({id(e): e for e in (prior, node_gone_at.get(node), entry)
                              if e is not None}.values(), key=lambda e: e.seq)
            return Verdict(name, VIOLATED, f"{entry.ref} was released {fresh_for:.2f}s after "
                           f"its last touch, before the {records.staleness:g}s staleness window",
                           witness, origin, subjects=len(seen), reads=reads)
    summary = (f"{reclaims} releases, each of a stale record of a vanished node" if seen else
               "no node record was ever recorded")
    return Verdict(name, PASS, summary, [], origin, subjects=len(seen), reads=reads)
