"""N: per-node bookkeeping outlives its node (docs/properties.md), over the node_records concept
and, in its Kubernetes form, pod GC, leases and ResourceSlice clean-up."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.records import NodeRecords
from aftershock.history import Change, History
from aftershock.properties.base import Params, check, prop

Recorded = History | Iterable


def _release(records: NodeRecords, change: Change) -> tuple[str | None, dict[str, Any]] | None:
    """(released node, record as it was) when ``change`` releases or re-assigns a record (its
    own life: a record deleted and made again is a new record, not a hand-over)."""
    before = change.before
    if before is None or change.resource != records.resource or \
            change.namespace != records.namespace:
        return None
    if change.after is None or records.node(change.after) != records.node(before):
        return records.node(before), before
    return None


def _gone_by(history: History, node: str, release: Change) -> bool:
    """Whether node/<node> may have been deleted before ``release`` in the cluster's order: a
    deletion of it earlier than the release, or one a re-list found (when, a gap hides)."""
    return any(change.after is None and change.name == node and
               (change.order < release.order or not change.seen)
               for change in history.changes_of("nodes"))


def never_reclaimed_early(history: Recorded, records: NodeRecords,
                          name: str = "never_reclaimed_early") -> Verdict:
    """N2: every release or re-assignment of a record happens when its node is gone AND the
    record has not been touched for the staleness window: by when the API server wrote the
    release (its moment, at the latest) against the implementation's own stamp of the touch."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads = frozenset({"nodes", records.resource})
    node_gone_at: dict[str, Change] = {}
    reclaims = 0
    seen: set[str] = set()
    unsure: str | None = None
    for change, state in history.replay(reads):
        if change.resource == "nodes" and change.after is None:
            node_gone_at[change.name] = change
        if change.resource == records.resource and change.namespace == records.namespace:
            seen.add(change.name)
        released = _release(records, change)
        if released is None:
            continue
        reclaims += 1
        node, before = released
        prior = change.previous or change  # what it was released from, as last recorded
        touched = records.touched(before)
        if node in records.nodes(state) and not _gone_by(history, node, change):
            # "never deleted before the release" is a fact about the whole history up to it:
            # a deletion and re-creation of the node inside a gap would make the release fair
            return Verdict(name, VIOLATED, f"{change.ref} was released from node/{node} while "
                           f"node/{node} still existed", [prior.entry, change.entry], origin,
                           subjects=len(seen), window=(origin, change.hi), by_absence=True,
                           reads=reads)
        if touched is None:
            return Verdict(name, UNKNOWN, f"{change.ref} was released but carries no "
                           f"{records.touched_path}: its freshness cannot be judged",
                           [change.entry], origin, reads=reads)
        # the touch time is the implementation's own stamp; the release, when it was written
        latest, earliest = change.hi - offset - touched, change.lo - offset - touched
        if latest < records.staleness:
            witness = sorted({id(c): c for c in (prior, node_gone_at.get(node), change)
                              if c is not None}.values(), key=lambda c: c.order)
            return Verdict(name, VIOLATED, f"{change.ref} was released at most {latest:.2f}s "
                           f"after its last touch, before the {records.staleness:g}s staleness "
                           "window", [c.entry for c in witness], origin, subjects=len(seen),
                           reads=reads)
        if earliest < records.staleness and unsure is None:
            unsure = (f"{change.ref} was released {max(earliest, 0):.2f}s to {latest:.2f}s after "
                      f"its last touch (whole-second stamps): whether before the "
                      f"{records.staleness:g}s staleness window is not known")
    if unsure is not None:
        return Verdict(name, UNKNOWN, unsure, [], origin, subjects=len(seen), reads=reads)
    summary = (f"{reclaims} releases, each of a stale record of a vanished node" if seen else
               "no node record was ever recorded")
    return Verdict(name, PASS, summary, [], origin, subjects=len(seen), reads=reads)


@check("never_reclaimed_early", "A node record is released or re-assigned only once its node is "
       "gone and it has not been touched for the staleness window.")
def _never_reclaimed_early(history: History, p: Params) -> Verdict:
    return never_reclaimed_early(history, NodeRecords(**p["records"]))


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
