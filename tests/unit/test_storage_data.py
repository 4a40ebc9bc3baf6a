"""The storage implementation's data layer and decisions (pure: a tmp dir, no cluster)."""

import collections
import datetime as dt
import json

import pytest
from kubernetes import client

from implementations.storage import data, decisions, probe, removal
from implementations.storage.data import ERROR, NOT_FOUND, OK, Member

NS, CLUSTER = "ns", "data"
SPREAD = {0: "node-1", 1: "node-2", 2: "node-3"}


def _cluster(root, objects=30, ready=SPREAD):
    """A cluster of Ready members with objects written through the probe."""
    ledger = probe.put(root, NS, CLUSTER, ready, objects)
    return [w["object"] for w in ledger["written"]]


def _member(root, node, ordinal):
    return Member(node, ordinal, data.member_dir(root, node, NS, CLUSTER, ordinal))


def _statuses(root, names):
    return collections.Counter(r["status"] for r in data.read_all(root, NS, CLUSTER, names))


def _by_object(root, names):
    return {r["object"]: r["status"] for r in data.read_all(root, NS, CLUSTER, names)}


def _owned_by(root, ordinal):
    return sorted(data.read_index(_member(root, SPREAD[ordinal], ordinal).path))


# --- layout, writes and reads -------------------------------------------------------------

def test_put_spreads_round_robin_and_everything_reads_back_ok(tmp_path):
    ledger = probe.put(tmp_path, NS, CLUSTER, SPREAD, 7)["written"]
    assert [(w["object"], w["member"], w["node"]) for w in ledger] == [
        ("obj-0", 0, "node-1"), ("obj-1", 1, "node-2"), ("obj-2", 2, "node-3"),
        ("obj-3", 0, "node-1"), ("obj-4", 1, "node-2"), ("obj-5", 2, "node-3"),
        ("obj-6", 0, "node-1")]
    assert (tmp_path / "node-1" / NS / CLUSTER / "member-0" / "bucket-3" / "obj-3").is_file()
    results = data.read_all(tmp_path, NS, CLUSTER, [w["object"] for w in ledger])
    assert {r["status"] for r in results} == {OK}
    assert results[0]["where"] == "node-1/member-0"


def test_index_writes_are_atomic_and_leave_no_temporary_file(tmp_path):
    path = tmp_path / "m"
    assert data.ensure_member(path) is True and data.ensure_member(path) is False
    data.write_index(path, {"a": "1"})
    assert sorted(p.name for p in path.iterdir()) == ["index.json"]
    assert data.read_index(path) == {"a": "1"}


def test_missing_file_or_wrong_checksum_is_a_server_error_not_a_clean_miss(tmp_path):
    names = _cluster(tmp_path, 6)
    member = _member(tmp_path, "node-1", 0)
    data.object_file(member.path, "obj-0").unlink()
    data.object_file(member.path, "obj-3").write_bytes(b"bit rot")
    assert _by_object(tmp_path, names) == {
        "obj-0": ERROR, "obj-1": OK, "obj-2": OK, "obj-3": ERROR, "obj-4": OK, "obj-5": OK}


def test_an_unreadable_index_is_an_error_unless_another_member_serves_the_object(tmp_path):
    names = _cluster(tmp_path, 3)
    (_member(tmp_path, "node-2", 1).path / data.INDEX).write_text("{half")
    assert _by_object(tmp_path, names) == {"obj-0": OK, "obj-1": ERROR, "obj-2": OK}
    data.store(_member(tmp_path, "node-1", 0).path, {"obj-1": (1, b"a replica")})
    assert _by_object(tmp_path, names) == {"obj-0": OK, "obj-1": OK, "obj-2": OK}


def test_objects_listed_in_no_index_are_a_clean_not_found(tmp_path):
    names = _cluster(tmp_path, 3)
    (_member(tmp_path, "node-3", 2).path / data.INDEX).unlink()
    results = data.read_all(tmp_path, NS, CLUSTER, [*names, "never-written"])
    assert [(r["object"], r["status"]) for r in results] == [
        ("obj-0", OK), ("obj-1", OK), ("obj-2", NOT_FOUND), ("never-written", NOT_FOUND)]


def test_inventory_counts_objects_buckets_and_index_per_member_dir(tmp_path):
    _cluster(tmp_path, 6)
    data.ensure_member(data.member_dir(tmp_path, "node-3", NS, CLUSTER, 0))
    assert data.inventory(tmp_path, NS, CLUSTER) == {
        "node-1/member-0": {"objects": 2, "buckets": [0, 3], "index": True},
        "node-2/member-1": {"objects": 2, "buckets": [0, 1], "index": True},
        "node-3/member-0": {"objects": 0, "buckets": [], "index": True},
        "node-3/member-2": {"objects": 2, "buckets": [1, 2], "index": True}}


def test_the_probe_prints_one_json_document(tmp_path, capsys):
    _cluster(tmp_path, 4)
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps({"written": [{"object": "obj-1"}, {"object": "obj-9"}]}))
    args = ["--data-root", str(tmp_path), "--namespace", NS, "--cluster", CLUSTER]
    assert probe.main([*args, "get", "--ledger", str(ledger)]) == 0
    assert [r["status"] for r in json.loads(capsys.readouterr().out)["results"]] == [
        OK, NOT_FOUND]
    assert probe.main([*args, "put"]) == 1
    assert "kubeconfig" in json.loads(capsys.readouterr().out)["error"]


# --- the correct retention modes ----------------------------------------------------------

def test_decommission_removes_the_index_first(tmp_path):
    _cluster(tmp_path)
    path = _member(tmp_path, "node-3", 2).path
    steps = removal.decommission_steps(path)
    assert [s.action for s in steps] == ["remove_index", *["remove_bucket"] * 4, "remove_dir"]


@pytest.mark.parametrize("done", range(1, 7))
def test_an_interrupted_decommission_still_reads_as_a_clean_not_found(tmp_path, done):
    names = _cluster(tmp_path)
    removed = _owned_by(tmp_path, 2)
    removal.run(removal.decommission_steps(_member(tmp_path, "node-3", 2).path), limit=done)
    statuses = _by_object(tmp_path, names)
    assert {statuses[n] for n in removed} == {NOT_FOUND}
    assert collections.Counter(statuses.values()) == {OK: 20, NOT_FOUND: 10}


def test_decommission_touches_only_the_removed_member_and_says_so(tmp_path):
    _cluster(tmp_path)
    data.ensure_member(data.member_dir(tmp_path, "node-3", NS, CLUSTER, 0))  # pod 0 landed
    before = data.inventory(tmp_path, NS, CLUSTER)
    outcomes = removal.retire(_member(tmp_path, "node-3", 2), "decommission")
    assert [(o.reason, o.member.ordinal) for o in outcomes] == [(removal.DATA_WIPED, 2)]
    assert data.inventory(tmp_path, NS, CLUSTER) == {
        k: v for k, v in before.items() if k != "node-3/member-2"}


def test_safe_decommission_copies_into_a_remaining_member_and_loses_nothing(tmp_path):
    names = _cluster(tmp_path)
    outcomes = removal.retire(_member(tmp_path, "node-3", 2), "safe_decommission",
                              _member(tmp_path, "node-2", 1))
    assert [o.reason for o in outcomes] == [removal.DATA_MIGRATED, removal.DATA_WIPED]
    assert _statuses(tmp_path, names) == {OK: 30}
    assert "node-3/member-2" not in data.inventory(tmp_path, NS, CLUSTER)
    assert data.inventory(tmp_path, NS, CLUSTER)["node-2/member-1"]["objects"] == 20


def test_safe_decommission_without_a_remaining_member_keeps_the_data(tmp_path):
    names = _cluster(tmp_path)
    outcomes = removal.retire(_member(tmp_path, "node-3", 2), "safe_decommission", None)
    assert [o.reason for o in outcomes] == [removal.RETAINED]
    assert _statuses(tmp_path, names) == {OK: 30}


def test_retain_keeps_the_inventory_intact(tmp_path):
    names = _cluster(tmp_path)
    before = data.inventory(tmp_path, NS, CLUSTER)
    outcomes = removal.retire(_member(tmp_path, "node-3", 2), "retain")
    assert [o.reason for o in outcomes] == [removal.RETAINED]
    assert data.inventory(tmp_path, NS, CLUSTER) == before
    assert _statuses(tmp_path, names) == {OK: 30}


# --- the faulty wipe (the incident) -------------------------------------------------------

def _landed(root):
    """Member 0 was Pending, then landed on node-3 (freed by member 2) and took writes there."""
    names = _cluster(root)
    extra = probe.put(root, NS, "other", {0: "node-3"}, 4)  # another cluster: never touched
    data.store(data.member_dir(root, "node-3", NS, CLUSTER, 0),
               {f"new-{k}": (data.bucket_of(k), b"x%d" % k) for k in range(4)})
    return [*names, *(f"new-{k}" for k in range(4))], [w["object"] for w in extra["written"]]


def test_the_faulty_wipe_leaves_server_errors_not_clean_misses(tmp_path):
    names, _ = _landed(tmp_path)
    removal.faulty_wipe(tmp_path, "node-3", NS, CLUSTER)
    statuses = _by_object(tmp_path, names)
    wiped = [n for n in _owned_by(tmp_path, 2) if statuses[n] != OK]
    assert wiped and {statuses[n] for n in wiped} == {ERROR}
    assert NOT_FOUND not in statuses.values()
    assert (_member(tmp_path, "node-3", 2).path / data.INDEX).exists()


def test_the_faulty_wipe_stops_halfway_through_every_member_dir_on_the_node(tmp_path):
    _, other = _landed(tmp_path)
    before = data.inventory(tmp_path, NS, CLUSTER)
    outcomes = removal.faulty_wipe(tmp_path, "node-3", NS, CLUSTER)
    after = data.inventory(tmp_path, NS, CLUSTER)
    assert [(o.reason, o.member.key) for o in outcomes] == [
        (removal.DATA_WIPED, "node-3/member-0"), (removal.DATA_WIPED, "node-3/member-2")]
    assert all("interrupted" in o.message for o in outcomes)
    for key in ("node-3/member-0", "node-3/member-2"):  # member 0 was not being removed
        assert len(after[key]["buckets"]) == len(before[key]["buckets"]) // 2
    assert {k: v for k, v in after.items() if k.startswith("node-3/")} != \
        {k: v for k, v in before.items() if k.startswith("node-3/")}
    assert after["node-1/member-0"] == before["node-1/member-0"]
    assert any(_by_object(tmp_path, [f"new-{k}" for k in range(4)])[f"new-{k}"] == ERROR
               for k in range(4))
    assert {r["status"] for r in data.read_all(tmp_path, NS, "other", other)} == {OK}


# --- decisions ----------------------------------------------------------------------------

@pytest.mark.parametrize(("current", "desired", "removed"), [
    (3, 2, [2]), (5, 2, [2, 3, 4]), (2, 3, []), (3, 3, []), (3, 0, [0, 1, 2])])
def test_scaling_down_removes_the_highest_ordinals(current, desired, removed):
    assert decisions.removed_ordinals(current, desired) == removed


def _pod(name, node="node-1", *, phase="Running", ready=True, deleting=False):
    meta = client.V1ObjectMeta(name=name, deletion_timestamp=dt.datetime.now(dt.UTC)
                               if deleting else None)
    conditions = [client.V1PodCondition(type="Ready", status="True" if ready else "False")]
    return client.V1Pod(metadata=meta, spec=client.V1PodSpec(containers=[], node_name=node),
                        status=client.V1PodStatus(phase=phase, conditions=conditions))


def test_ready_members_are_running_ready_and_not_terminating():
    pods = [_pod("data-0", "node-3"), _pod("data-1", None, phase="Pending", ready=False),
            _pod("data-2", "node-2", ready=False), _pod("data-3", deleting=True),
            _pod("data-big-4"), _pod("data-5", "node-1")]
    assert decisions.ready_members(pods, CLUSTER) == {0: "node-3", 5: "node-1"}


def _node(name, *, ready=True, cordoned=False):
    status = client.V1NodeStatus(conditions=[client.V1NodeCondition(
        type="Ready", status="True" if ready else "False")])
    return client.V1Node(metadata=client.V1ObjectMeta(name=name),
                         spec=client.V1NodeSpec(unschedulable=cordoned or None), status=status)


NODES = [_node("node-1", cordoned=True), _node("node-2"), _node("node-3"),
         _node("node-4", ready=False)]


def test_correct_autoscale_counts_ready_nodes_cordoned_or_not():
    assert decisions.autoscale_size(NODES, "correct") == 3


def test_faulty_autoscale_shrinks_the_cluster_when_a_node_is_cordoned():
    assert decisions.autoscale_size(NODES, "faulty") == 2


def test_migration_targets_are_ready_remaining_members():
    ready = {1: "node-2", 2: "node-3", 3: "node-1"}  # member 0 Pending
    assert decisions.migration_target(2, ready, 2) == (1, "node-2")
    assert decisions.migration_target(3, {0: "n0", 1: "n1", 3: "n3"}, 2) == (1, "n1")
    assert decisions.migration_target(2, {2: "node-3"}, 2) is None


def test_a_removed_member_is_hosted_by_its_pod_and_wherever_its_dirs_are(tmp_path):
    _cluster(tmp_path)
    data.ensure_member(data.member_dir(tmp_path, "node-1", NS, CLUSTER, 2))  # an older home
    pods = [_pod("data-2", "node-3"), _pod("data-0", "node-3")]
    assert decisions.hosts([2], pods, data.members(tmp_path, NS, CLUSTER), CLUSTER) == {
        2: {"node-1", "node-3"}}


def test_retire_plan_takes_every_removed_member_at_once_when_nothing_needs_a_target():
    assert decisions.retire_plan([1, 2], {}, 1, "decommission") == ({1: None, 2: None}, 1)
    assert decisions.retire_plan([0, 1], {0: "a"}, 0, "safe_decommission") == (
        {0: None, 1: None}, 0)  # nowhere to copy: kept (Retained)
    assert decisions.retire_plan([2], {1: "node-2"}, 2, "safe_decommission") == (
        {2: (1, "node-2")}, 2)


def test_safe_decommission_steps_down_one_member_at_a_time_while_a_remaining_one_is_pending():
    ready = {1: "node-2", 2: "node-3"}  # member 0 Pending: no free node until one is released
    assert decisions.retire_plan([1, 2], ready, 1, "safe_decommission") == (
        {2: (1, "node-2")}, 2)
    assert decisions.retire_plan([1], {1: "node-2"}, 1, "safe_decommission") is None
    assert decisions.retire_plan([1], {0: "node-3", 1: "node-2"}, 1, "safe_decommission") == (
        {1: (0, "node-3")}, 1)
