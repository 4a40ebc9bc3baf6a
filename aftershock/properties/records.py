"""N: per-node bookkeeping outlives its node (CONFORMANCE.md), over the node_records concept
and, in its Kubernetes form, pod GC, leases and ResourceSlice clean-up."""

from __future__ import annotations

from aftershock.checks.verdict import Verdict
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.sut import records as judge
from aftershock.sut.records import NodeRecords


@check("never_reclaimed_early", "A node record is released or re-assigned only once its node is "
       "gone and it has not been touched for the staleness window.")
def never_reclaimed_early(history: History, p: Params) -> Verdict:
    return judge.never_reclaimed_early(history.entries, NodeRecords(**p["records"]))


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
