"""The N and S judgements over synthetic histories: each fails on the bug it guards."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.concepts.records import NodeRecords
from aftershock.concepts.storage import StorageCluster
from aftershock.properties.records import never_reclaimed_early
from aftershock.properties.rule import settle
from aftershock.properties.storage import (
    data_kept,
    never_shrank,
    only_removed_touched,
    reads_clean,
    shrank_after_done,
)
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.state import State

NS = "ns"
EPOCH = 1.9e9
RECORDS = NodeRecords("noderecords", NS, "spec.slot", "spec.node", "spec.touchedAt",
                      staleness=5, poll=1, slots=3)
STORAGE = StorageCluster("data", NS, {
    "resource": {"plural": "storageclusters"}, "members_path": "status.members",
    "terminal_path": "status.decommissioned", "workload": {"kind": "StatefulSet",
                                                           "name": "{name}"},
    "member_pod": "{name}-{ordinal}", "destructive_reasons": ["DataWiped", "Decommissioning"]})


class History:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, at: float, resource: str, name: str, obj: dict, type: str = "ADDED",
            namespace: str = NS) -> None:
        self.entries.append(Entry(seq=len(self.entries), mono=at, wall=EPOCH + at, kind=WATCH,
                                  resource=resource, namespace=namespace, name=name,
                                  uid=f"uid-{resource}-{name}", rv=str(len(self.entries) + 1),
                                  type=type, object=obj))

    def node(self, at: float, name: str, type: str = "ADDED") -> None:
        self.add(at, "nodes", name, {"metadata": {"name": name}}, type, namespace="")

    def record(self, at: float, slot: int, node: str, touched: float,
               type: str = "MODIFIED") -> None:
        stamp = datetime.fromtimestamp(EPOCH + touched, UTC).isoformat().replace("+00:00", "Z")
        self.add(at, "noderecords", f"slot-{slot}",
                 {"metadata": {"name": f"slot-{slot}"},
                  "spec": {"slot": slot, "node": node, "touchedAt": stamp}}, type)


def _records_history() -> History:
    history = History()
    history.node(0, "node-1")
    history.node(0, "node-2")
    history.record(0.1, 0, "node-1", touched=0.1, type="ADDED")
    history.record(0.1, 1, "node-2", touched=0.1, type="ADDED")
    history.record(1.0, 0, "node-1", touched=1.0)
    history.node(1.5, "node-1", "DELETED")
    return history


def test_a_stale_record_of_a_vanished_node_may_be_released():
    history = _records_history()
    history.record(7.0, 0, "node-1", touched=1.0, type="DELETED")
    assert never_reclaimed_early(history.entries, RECORDS).status == PASS


def test_releasing_before_the_staleness_window_is_a_violation():
    history = _records_history()
    history.record(3.0, 0, "node-1", touched=1.0, type="DELETED")
    verdict = never_reclaimed_early(history.entries, RECORDS)
    assert verdict.status == VIOLATED and "before the 5s staleness window" in verdict.summary


def test_releasing_the_record_of_a_live_node_is_a_violation():
    history = _records_history()
    history.record(9.0, 1, "node-2", touched=0.1, type="DELETED")
    verdict = never_reclaimed_early(history.entries, RECORDS)
    assert verdict.status == VIOLATED and "node/node-2 still existed" in verdict.summary


def test_the_node_selector_leaves_out_nodes_it_keeps_no_records_for():
    """kind's control plane is a node too; records are kept for the workers only."""
    from aftershock.kube import labels
    from aftershock.timeline.state import State

    workers = dataclasses.replace(RECORDS, node_selector=labels.parse(
        "!node-role.kubernetes.io/control-plane"))
    history = _records_history()
    history.add(0, "nodes", "kind-control-plane", {"metadata": {
        "name": "kind-control-plane",
        "labels": {"node-role.kubernetes.io/control-plane": ""}}}, namespace="")
    state = State()
    for entry in history.entries:
        state.apply(entry)
    assert workers.nodes(state) == {"node-2"}  # node-1 was deleted
    assert RECORDS.nodes(state) == {"node-2", "kind-control-plane"}


def test_reassigning_a_record_counts_as_its_release():
    history = _records_history()
    history.record(3.0, 0, "node-3", touched=3.0)  # handed over 2 s after the last touch
    assert never_reclaimed_early(history.entries, RECORDS).status == VIOLATED


def _event(history: History, at: float, reason: str, pod: str) -> None:
    history.add(at, "events", f"{pod}.{at}", {"metadata": {"name": f"{pod}.{at}"},
                                              "reason": reason, "message": "wiped",
                                              "involvedObject": {"kind": "Pod", "name": pod}})


def test_a_wipe_of_a_member_not_being_removed_is_caught():
    history = History()
    _event(history, 1.0, "DataWiped", "data-2")
    assert only_removed_touched(history.entries, STORAGE, {2}).status == PASS
    _event(history, 2.0, "DataWiped", "data-0")
    verdict = only_removed_touched(history.entries, STORAGE, {2})
    assert verdict.status == VIOLATED and "[0]" in verdict.summary
    assert [e.name for e in verdict.witness] == ["data-0.2.0"]


def test_a_silent_loss_on_a_member_that_stays_is_caught():
    history = History()
    _event(history, 1.0, "DataWiped", "data-2")
    intact = {"members": {"node-1/member-0": {"objects": 1, "index": True}}}
    emptied = {"members": {"node-1/member-0": {"objects": 0, "index": True}}}
    assert only_removed_touched(history.entries, STORAGE, {2}, intact, LEDGER).status == PASS
    verdict = only_removed_touched(history.entries, STORAGE, {2}, emptied, LEDGER)
    assert verdict.status == VIOLATED and "member 0: 0 of 1" in verdict.summary


LEDGER = {"written": [{"object": "obj-0", "member": 0}, {"object": "obj-1", "member": 2},
                      {"object": "obj-2", "member": 2}]}


def test_retained_data_must_all_be_there():
    full = {"members": {"node-3/member-2": {"objects": 2, "index": True}}}
    half = {"members": {"node-3/member-2": {"objects": 1, "index": True}}}
    assert data_kept(full, LEDGER, {2}, [], 0.0).status == PASS
    nothing = settle(data_kept(full, LEDGER, {1}, [], 0.0), properties.History([]))
    assert nothing.status == UNKNOWN and "nothing to judge" in nothing.summary, \
        "nothing written to the removed member: nothing shows it was kept"
    verdict = data_kept(half, LEDGER, {2}, [], 0.0)
    assert verdict.status == VIOLATED and "member 2: 1 of 2" in verdict.summary


def test_data_moved_to_a_member_that_stays_is_kept():
    """safe_decommission: the removed member's directory is gone, its objects are in another."""
    moved = {"members": {"node-1/member-0": {"objects": 3, "index": True}}}
    assert data_kept(moved, LEDGER, {2}, [], 0.0).status == PASS
    own_only = {"members": {"node-1/member-0": {"objects": 1, "index": True}}}
    verdict = data_kept(own_only, LEDGER, {2}, [], 0.0)
    assert verdict.status == VIOLATED and "member 2: 0 of 2" in verdict.summary


NODE_LEDGER = {"written": [{"object": "obj-0", "member": 0, "node": "node-1"},
                           {"object": "obj-1", "member": 2, "node": "node-3"},
                           {"object": "obj-2", "member": 2, "node": "node-3"}]}


def test_a_node_inventory_names_the_objects_lost_and_where_they_were():
    """What each node's disk keeps (AIStore's mountpaths): an object counts wherever it is."""
    rebalanced = {"nodes": {"node-1": {"objects": ["obj-0"]},
                            "node-2": {"objects": ["obj-1", "obj-2"]}, "node-3": {"objects": []}}}
    assert data_kept(rebalanced, NODE_LEDGER, {2}, [], 0.0).status == PASS
    wiped = {"nodes": {"node-1": {"objects": ["obj-0"]}, "node-3": {"objects": ["obj-2"]}}}
    verdict = data_kept(wiped, NODE_LEDGER, {2}, [], 0.0)
    assert verdict.status == VIOLATED
    assert "member 2: 1 of 2" in verdict.summary
    assert "member 2 (written on node/node-3): obj-1" in verdict.summary
    emptied = {"nodes": {"node-1": {"objects": []}, "node-3": {"objects": ["obj-1", "obj-2"]}}}
    stays = only_removed_touched([], STORAGE, {2}, emptied, NODE_LEDGER)
    assert stays.status == VIOLATED and "member 0 (written on node/node-1): obj-0" in \
        stays.summary


def test_a_mode_that_lets_removed_data_go_loses_none_it_must_keep():
    gone = {"nodes": {"node-1": {"objects": ["obj-0"]}}}
    verdict = data_kept(gone, NODE_LEDGER, {2}, [], 0.0, loss_allowed=True)
    assert verdict.status == PASS and "0 of the 2 objects" in verdict.summary
    assert verdict.subjects == 1, "the removed member's objects were judged"
    assert data_kept(gone, NODE_LEDGER, {2}, [], 0.0).status == VIOLATED


def test_reads_allow_a_clean_loss_only_where_the_mode_allows_it():
    lost = [{"object": "obj-0", "status": "ok"}, {"object": "obj-1", "status": "not_found"},
            {"object": "obj-2", "status": "not_found"}]
    assert reads_clean(lost, LEDGER, {2}, True, [], 0.0).status == PASS
    assert reads_clean(lost, LEDGER, {2}, False, [], 0.0).status == VIOLATED
    errors = [{"object": "obj-0", "status": "ok"}, {"object": "obj-1", "status": "error",
                                                    "detail": "bucket-1 missing"},
              {"object": "obj-2", "status": "not_found"}]
    verdict = reads_clean(errors, LEDGER, {2}, True, [], 0.0)
    assert verdict.status == VIOLATED and "1 server errors" in verdict.summary
    unread = reads_clean(lost[:2], LEDGER, {2}, True, [], 0.0)  # the probe said nothing of one
    assert unread.status == UNKNOWN and "gave no answer for 1 of 3" in unread.summary
    odd = [{**lost[0], "status": "timeout"}, *lost[1:]]
    assert reads_clean(odd, LEDGER, {2}, True, [], 0.0).status == VIOLATED


def _cluster(history: History, at: float, done: list[int]) -> None:
    history.add(at, "storageclusters", "data", {"metadata": {"name": "data"},
                                                "status": {"decommissioned": done}})


def _workload(history: History, at: float, replicas: int) -> None:
    history.add(at, "statefulsets", "data", {"metadata": {"name": "data"},
                                             "spec": {"replicas": replicas}}, "MODIFIED")


def test_shrinking_before_the_removed_member_is_done_is_caught():
    good, bad = History(), History()
    for history in (good, bad):
        _cluster(history, 0, [])
        _workload(history, 0, 3)
    _cluster(good, 1, [2])
    _workload(good, 2, 2)
    _workload(bad, 1, 2)
    _cluster(bad, 2, [2])
    assert shrank_after_done(good.entries, STORAGE, {2}).status == PASS
    assert shrank_after_done(bad.entries, STORAGE, {2}).status == VIOLATED


def test_a_workload_that_shrinks_is_caught():
    history = History()
    assert never_shrank(history.entries, STORAGE).status == "unknown"
    _workload(history, 0, 3)
    _workload(history, 1, 3)
    assert never_shrank(history.entries, STORAGE).status == PASS
    _workload(history, 2, 2)
    verdict = never_shrank(history.entries, STORAGE)
    assert verdict.status == VIOLATED and "from 3 to 2" in verdict.summary


def test_listed_members_are_compared_with_the_ready_pods():
    state = State()
    for entry_pod, ready in (("data-0", "True"), ("data-1", "False"), ("other-0", "True")):
        state.put(("pods", NS, entry_pod), {
            "metadata": {"name": entry_pod},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}})
    state.put(("storageclusters", NS, "data"), {"status": {"members": [0, 1]}})
    assert STORAGE.ready_members(state) == [0]
    assert STORAGE.listed_members(state) == [0, 1]
    assert STORAGE.ordinal("data-12") == 12 and STORAGE.ordinal("database-1") is None


APP = StorageCluster("data", NS, {**STORAGE.mapping, "members_path": None, "terminal_path": None,
                                  "app_state": ["probe"]})


def _said(history: History, at: float, members: list[int], finished: list[int]) -> None:
    """What the application said of itself at ``at`` (a read, stamped on the nodes' clock)."""
    history.add(at, "appstates", "data", {"metadata": {"name": "data", "namespace": NS},
                                          "members": members, "finished": finished},
                "MODIFIED")


def _shrink(history: History, at: float, written: float) -> None:
    """The workload's shrink, the API server's time of the write (whole seconds) with it."""
    _workload(history, at, 2)
    stamp = datetime.fromtimestamp(EPOCH + written, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    history.entries[-1].extra["written"] = stamp


def test_the_application_saying_a_member_is_done_orders_it_against_the_shrink():
    """AIStore's cluster map, read every second: done before the second of the shrink passes;
    a read from the next second on saying not done is the violation; within the second, the
    reads cannot say."""
    good = History()
    _workload(good, 0, 3)
    for at, finished in ((1, []), (2, []), (3, [2]), (4, [2])):
        _said(good, at, [0, 1], finished)
    _shrink(good, 6.5, written=6)
    verdict = shrank_after_done(good.entries, APP, {2}, since=0.5)
    assert verdict.status == PASS and "by what the application said" in verdict.summary
    bad = History()
    _workload(bad, 0, 3)
    _said(bad, 1, [0, 1], [])
    _shrink(bad, 2.2, written=2)
    _said(bad, 3.1, [0, 1], [])
    _said(bad, 4.1, [0, 1], [2])
    verdict = shrank_after_done(bad.entries, APP, {2}, since=0.5)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "while member 2 had not finished its removal: the application said so" in \
        verdict.summary and [e.mono for e in verdict.witness] == [2.2, 3.1]
    close = History()
    _workload(close, 0, 3)
    _said(close, 1, [0, 1], [])
    _said(close, 2.4, [0, 1], [2])
    _shrink(close, 2.6, written=2)
    verdict = shrank_after_done(close.entries, APP, {2}, since=0.5)
    assert verdict.status == UNKNOWN and "while the shrink was being written" in verdict.summary
    # the audit log's write of the workload's spec narrows the second to its moment
    close.entries.append(Entry(seq=len(close.entries), mono=2.55, wall=EPOCH + 2.55,
                               kind="audit", resource="statefulsets", namespace=NS,
                               name="data", verb="patch", code=200))
    assert shrank_after_done(close.entries, APP, {2}, since=0.5).status == PASS
    early = History()
    _workload(early, 0, 3)
    _said(early, 1, [0, 1], [])
    _shrink(early, 2.6, written=2)
    early.entries.append(Entry(seq=len(early.entries), mono=2.3, wall=EPOCH + 2.3,
                               kind="audit", resource="statefulsets", namespace=NS,
                               name="data", verb="patch", code=200))
    _said(early, 2.7, [0, 1], [])
    _said(early, 3.5, [0, 1], [2])
    verdict = shrank_after_done(early.entries, APP, {2}, since=0.5)
    assert verdict.status == VIOLATED and [e.mono for e in verdict.witness] == [2.6, 2.7], \
        verdict.explain()


def test_a_gap_in_what_the_application_said_leaves_the_order_unknown():
    from aftershock.timeline.entry import GAP_START

    gapped = History()
    _workload(gapped, 0, 3)
    _said(gapped, 1, [0, 1], [])
    _said(gapped, 3, [0, 1], [2])
    gapped.entries.append(Entry(seq=len(gapped.entries), mono=4, wall=EPOCH + 4, kind=GAP_START,
                                resource="appstates", detail="the probe stalled"))
    _shrink(gapped, 6, written=6)
    verdict = properties.judge(["shrank_after_done"], properties.Judgement(
        "shrank_after_done", {"cluster": dataclasses.asdict(APP), "removed": [2],
                              "since": 0.5}), gapped.entries)
    assert verdict.status == UNKNOWN and "the probe stalled" in verdict.summary, verdict.explain()


def test_membership_is_what_the_application_lists_when_the_profile_reads_it():
    state = State()
    history = History()
    _said(history, 1, [0, 1], [2])
    for entry in history.entries:
        state.apply(entry)
    assert APP.listed_members(state) == [0, 1] and APP.finished(state) == {2}
    assert APP.state_resource == "appstates" and APP.members_known


def test_lost_objects_are_named_by_member_node_and_where_the_disks_keep_them():
    lost = [{"object": "obj-0", "status": "not_found"}, {"object": "obj-1", "status": "ok"},
            {"object": "obj-2", "status": "ok"}]
    inventory = {"nodes": {"node-1": {"objects": ["obj-0"]}, "node-3": {"objects": ["obj-1"]}}}
    verdict = reads_clean(lost, NODE_LEDGER, {2}, False, [], 0.0, inventory=inventory)
    assert verdict.status == VIOLATED
    assert "1 objects lost that the mode keeps: 1 written to member 0 on node/node-1; the " \
        "nodes' disks keep 1 on node/node-1 (e.g. obj-0)" in verdict.summary, verdict.summary


def test_the_witness_of_lost_objects_is_each_object_not_the_verdict_again():
    lost = [{"object": "obj-0", "status": "not_found"}, {"object": "obj-1", "status": "ok"},
            {"object": "obj-2", "status": "ok"}]
    inventory = {"nodes": {"node-1": {"objects": ["obj-0"]}}}
    verdict = reads_clean(lost, NODE_LEDGER, {2}, False, [], 0.0, inventory=inventory)
    assert verdict.explain().splitlines()[1:] == [
        "found (1), from the data probe's inventory of each node's disk and its reads:",
        "  obj-0: not found; written to member 0 on node/node-1; kept on the disk of node/node-1"]
