"""N: per-node bookkeeping outlives its node (docs/properties.md), over the node_records concept
and, in its Kubernetes form, pod GC, leases and ResourceSlice clean-up."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.records import NodeRecords
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.timeline.entry import GAP_END, WATCH, Entry
from aftershock.timeline.state import changes_of, replay


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
            # "never deleted before the release" is a fact about the whole history up to it:
            # a deletion and re-creation of the node inside a gap would make the release fair
            return Verdict(name, VIOLATED, f"{entry.ref} was released from node/{node} while "
                           f"node/{node} still existed", [prior, entry], origin,
                           subjects=len(seen), window=(origin, entry.mono), by_absence=True,
                           reads=reads)
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



@check("never_reclaimed_early", "A node record is released or re-assigned only once its node is "
       "gone and it has not been touched for the staleness window.")
def _never_reclaimed_early(history: History, p: Params) -> Verdict:
    return never_reclaimed_early(history.entries, NodeRecords(**p["records"]))


CONCEPTS = ("node_records", "stateful_set")
prop("N1", "A record whose node no longer exists and which has not been touched for the "
     "staleness window is released or reused within S + poll period, for every index.",
     ["eventually"], CONCEPTS, ("node_delete",))
prop("N2", "A fresh record, or one whose node still exists, is never reclaimed, and a late "
     "clean-up never clobbers a re-assigned record.",
     ["never_reclaimed_early", "stays_for"], CONCEPTS)
prop("N3", "A new node is never refused for lack of slots while a reclaimable record exists.",
     ["eventually"], CONCEPTS, ("node_delete",))
prop("N4", "The number of records stays bounded by live nodes + in-flight boots + k.",
     ["always"], CONCEPTS)
prop("N5", "Index 0 behaves exactly like any other index.", ["eventually"], CONCEPTS,
     ("node_delete",))
