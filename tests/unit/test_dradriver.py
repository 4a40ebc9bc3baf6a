"""The DRA driver's decisions, judged before anything is written (pure: no cluster)."""

import logging
import threading

import pytest
from kubernetes import client

from implementations.dradriver import __main__ as dradriver
from implementations.dradriver.node import (
    Ledger,
    Prepare,
    Prepared,
    Wait,
    decide,
    log_line,
    node_devices,
    pod_claim_names,
    reserved_for,
    terminating_gracefully,
    wants_devices,
)
from implementations.dradriver.publisher import Publisher
from implementations.dradriver.slices import (
    DEVICES_LABEL,
    OWNER_LABEL,
    Create,
    Delete,
    NodeDevices,
    device_class_body,
    device_count,
    pick_version,
    plan_slices,
    slice_body,
    slice_name,
)

DRIVER, NS = "gpu.aftershock.io", "scenario-1"
API_VERSION = "resource.k8s.io/v1"
VARIANTS = ("faulty", "correct")


def _slice(node, uid, namespace=NS, driver=DRIVER, count=1):
    body = slice_body(node, uid, driver=driver, count=count, namespace=namespace,
                      api_version=API_VERSION)
    body["metadata"]["uid"] = f"slice-{node}"
    return body


def _plan(nodes, slices):
    """nodes: name -> (uid, device count)."""
    return plan_slices({name: NodeDevices(uid, count) for name, (uid, count) in nodes.items()},
                       slices, driver=DRIVER, namespace=NS)


def _claim(name, uid, results, reserved=("pod-a",)):
    return {"metadata": {"namespace": NS, "name": name, "uid": uid},
            "status": {"allocation": {"devices": {"results": results}},
                       "reservedFor": [{"resource": "pods", "name": r, "uid": r}
                                       for r in reserved]}}


def _result(device, pool="node-1", driver=DRIVER, request="gpu"):
    return {"request": request, "driver": driver, "pool": pool, "device": device}


def _prepare(ledger, claim_uid, pod_uid, node="node-1", devices=("dev-0",)):
    """What the plugin does for one claim of a bound pod: decide, then record a Prepare."""
    decision = decide(ledger.on(node), devices, claim_uid, ledger.variant)
    if isinstance(decision, Wait):
        return decision
    return ledger.prepare(node, decision.devices, f"{NS}/claim-{claim_uid}", claim_uid,
                          pod_uid, f"{NS}/{pod_uid}")


# ---------------------------------------------------------------- slices

def test_slice_is_named_after_node_and_driver_and_owned_by_the_node():
    body = slice_body("node-1", "uid-1", driver=DRIVER, count=2, namespace=NS,
                      api_version="resource.k8s.io/v1beta2")
    assert slice_name("node-1", DRIVER) == "node-1-gpu-aftershock-io"
    assert body["apiVersion"] == "resource.k8s.io/v1beta2" and body["kind"] == "ResourceSlice"
    assert body["metadata"]["name"] == "node-1-gpu-aftershock-io"
    assert body["metadata"]["labels"] == {OWNER_LABEL: NS}
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "uid-1"}]
    spec = body["spec"]
    assert (spec["driver"], spec["nodeName"]) == (DRIVER, "node-1")
    assert spec["pool"] == {"name": "node-1", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in spec["devices"]] == ["dev-0", "dev-1"]
    assert spec["devices"][1]["attributes"]["index"] == {"int": 1}


def test_every_node_with_devices_and_without_a_slice_gets_one_with_its_own_count():
    actions = _plan({"node-2": ("u2", 2), "node-1": ("u1", 1), "node-3": ("u3", 0)},
                    [_slice("node-1", "u1")])
    assert actions == [Create("node-2", "u2", 2)]


def test_a_slice_holds_exactly_its_nodes_devices():
    assert _plan({"node-1": ("u1", 2)}, [_slice("node-1", "u1", count=2)]) == []
    body = _slice("node-1", "u1", count=2)
    assert [d["name"] for d in body["spec"]["devices"]] == ["dev-0", "dev-1"]


def test_slice_of_a_vanished_or_recreated_node_is_deleted_not_republished():
    slices = [_slice("node-1", "old-uid"), _slice("node-9", "u9")]
    actions = _plan({"node-1": ("new-uid", 1)}, slices)
    assert actions == [Delete("node-1-gpu-aftershock-io", "slice-node-1",
                              "node/node-1 was recreated"),
                       Delete("node-9-gpu-aftershock-io", "slice-node-9",
                              "node/node-9 gone or not selected")]


def test_slice_of_a_node_left_without_devices_is_deleted():
    actions = _plan({"node-1": ("u1", 0)}, [_slice("node-1", "u1")])
    assert actions == [Delete("node-1-gpu-aftershock-io", "slice-node-1",
                              "node/node-1 has no devices")]


def test_changed_device_label_replaces_the_slice_delete_then_create():
    slices = [_slice("node-1", "u1", count=1)]
    assert _plan({"node-1": ("u1", 2)}, slices) == [
        Delete("node-1-gpu-aftershock-io", "slice-node-1",
               "devices differ from the 2 of node/node-1")]
    assert _plan({"node-1": ("u1", 2)}, []) == [Create("node-1", "u1", 2)]  # deletion seen


def test_slices_of_other_scenarios_and_drivers_are_left_alone():
    slices = [_slice("node-1", "u1", namespace="other"), _slice("node-2", "u2", driver="x.io")]
    assert _plan({}, slices) == []


@pytest.mark.parametrize(("label", "count"),
                         [(None, 0), ("0", 0), ("2", 2), ("12", 12), ("-1", None),
                          ("two", None), ("", None), (" 2", None), ("1.5", None)])
def test_device_count_from_the_node_label(label, count):
    assert device_count(label) == count


@pytest.mark.parametrize(("served", "version"),
                         [(["v1", "v1beta2", "v1beta1"], "v1"), (["v1beta1", "v1beta2"], "v1beta2"),
                          (["v1beta1"], None), ([], None)])
def test_newest_served_resource_version_is_picked(served, version):
    assert pick_version(served) == version


class _Cache:
    def __init__(self, items):
        self._items = items

    def items(self):
        return self._items


def _node(name, labels):
    return {"metadata": {"name": name, "uid": f"u-{name}", "labels": labels}}


def test_publisher_reads_each_nodes_count_and_warns_once_of_a_bad_label(caplog):
    """No cluster: the publisher's caches stubbed; only its plan is asked for."""
    publisher = Publisher(client.ApiClient(), threading.Event(), version="v1beta2",
                          driver=DRIVER, namespace=NS, node_selector=None)
    publisher.nodes = _Cache([_node("n-2", {DEVICES_LABEL: "2"}), _node("n-0", {}),
                              _node("n-bad", {DEVICES_LABEL: "lots"})])
    publisher.slices = _Cache([_slice("n-bad", "u-n-bad")])
    with caplog.at_level(logging.WARNING, logger="dradriver"):
        assert publisher.plan() == [
            Delete("n-bad-gpu-aftershock-io", "slice-n-bad", "node/n-bad has no devices"),
            Create("n-2", "u-n-2", 2)]
        publisher.plan()
    assert [r.getMessage() for r in caplog.records] == [
        "node/n-bad: label aftershock.io/devices='lots' is not a non-negative integer; "
        "no devices"]
    assert publisher.api_version == "resource.k8s.io/v1beta2"
    assert isinstance(publisher.resource, client.ResourceV1beta2Api)


def test_driver_exits_with_one_line_when_no_dra_version_is_served(tmp_path, monkeypatch,
                                                                  caplog):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    monkeypatch.setattr(dradriver, "served_versions", lambda _api: ["v1beta1"])
    monkeypatch.setattr("sys.argv", ["dradriver", "--variant", "correct", "--kubeconfig",
                                     str(kubeconfig), "--namespace", NS,
                                     "--log", str(tmp_path / "dra.jsonl")])
    with pytest.raises(SystemExit) as exit_:
        dradriver.main()
    assert exit_.value.code == 1
    assert [r.getMessage() for r in caplog.records if r.name == "dradriver"] == [
        "resource.k8s.io is served in none of v1, v1beta2 (served: v1beta1): no DRA API to drive"]


def test_device_class_selects_the_drivers_devices_and_is_not_swept():
    body = device_class_body(DRIVER, "resource.k8s.io/v1beta2")
    assert body["apiVersion"] == "resource.k8s.io/v1beta2" and body["kind"] == "DeviceClass"
    assert body["metadata"] == {"name": DRIVER}  # no OWNER_LABEL: shared by all scenarios
    assert body["spec"]["selectors"] == [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]


# ---------------------------------------------------------------- reading pods and claims

def test_claim_names_of_direct_and_template_claims():
    pod = {"spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "shared"},
                                       {"name": "gpu", "resourceClaimTemplateName": "t"},
                                       {"name": "none", "resourceClaimTemplateName": "t"}]},
           "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"},
                                                {"name": "none"}]}}
    assert pod_claim_names(pod) == ["shared", "p-gpu-x"]


def test_template_claim_not_made_yet_means_try_later():
    pod = {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}}
    assert pod_claim_names(pod) is None
    assert pod_claim_names({"spec": {}}) == []


def test_only_this_drivers_devices_on_this_node_are_prepared():
    claim = _claim("c", "u", [_result("dev-1"), _result("dev-0", pool="node-2"),
                              _result("dev-2", driver="other.io"), _result("dev-0")])
    assert node_devices(claim, DRIVER, "node-1") == ["dev-1", "dev-0"]
    assert node_devices({"status": {}}, DRIVER, "node-1") == []
    assert reserved_for(claim, "pod-a") and not reserved_for(claim, "pod-b")


def test_only_bound_live_pods_want_devices():
    bound = {"metadata": {}, "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}}
    assert wants_devices(bound)
    assert not wants_devices({**bound, "spec": {}})
    assert not wants_devices({**bound, "status": {"phase": "Succeeded"}})
    assert not wants_devices({**bound, "metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})


def test_a_force_deletion_is_not_a_graceful_termination():
    """As the API server shows them: a force-deleted pod has deletionGracePeriodSeconds 0 for
    the one event before DELETED; a graceful deletion shows its grace period first."""
    def pod(grace):
        return {"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z",
                             "deletionGracePeriodSeconds": grace}}
    assert terminating_gracefully(pod(30)) and not terminating_gracefully(pod(0))
    assert not terminating_gracefully({"metadata": {}})


def test_log_line_names_node_pool_device_claim_and_pod():
    entry = Prepared("node-1", "dev-0", f"{NS}/c", "cu", f"{NS}/p")
    assert log_line("prepare", entry, DRIVER, 12.5) == {
        "time": 12.5, "action": "prepare", "node": "node-1", "driver": DRIVER,
        "pool": "node-1", "device": "dev-0", "claim": f"{NS}/c", "claim_uid": "cu",
        "pod": f"{NS}/p"}


# ---------------------------------------------------------------- decisions, both variants

@pytest.mark.parametrize("variant", VARIANTS)
def test_free_device_is_prepared_once(variant):
    assert decide({}, ["dev-0"], "c1", variant) == Prepare(("dev-0",))
    held = {"dev-0": Prepared("node-1", "dev-0", "ns/c1", "c1", "ns/p")}
    assert decide(held, ["dev-0"], "c1", variant) == Prepare(())


@pytest.mark.parametrize(("variant", "forced"),
                         [("correct", False), ("correct", True), ("faulty", False)])
def test_correct_unprepares_on_every_departure_faulty_on_graceful_ones(variant, forced):
    ledger = Ledger(variant)
    _prepare(ledger, "c1", "pod-a")
    gone = ledger.release("pod-a", forced=forced)
    assert [(e.device, e.claim_uid, e.pod) for e in gone] == [("dev-0", "c1", f"{NS}/pod-a")]
    assert ledger.on("node-1") == {}


@pytest.mark.parametrize("variant", VARIANTS)
def test_shared_claim_is_unprepared_when_its_last_pod_on_the_node_goes(variant):
    ledger = Ledger(variant)
    _prepare(ledger, "c1", "pod-a")
    assert _prepare(ledger, "c1", "pod-b") == []  # prepared already: only a new user
    assert ledger.release("pod-a", forced=False) == []
    assert [e.pod for e in ledger.release("pod-b", forced=False)] == [f"{NS}/pod-b"]
    assert ledger.release("pod-b", forced=False) == []  # once


def test_correct_waits_for_a_device_prepared_for_another_claim():
    ledger = Ledger("correct")
    _prepare(ledger, "c1", "pod-a")
    assert _prepare(ledger, "c2", "pod-b") == Wait("dev-0", "c1")
    assert ledger.on("node-1")["dev-0"].claim_uid == "c1"
    assert _prepare(ledger, "c2", "pod-b", node="node-2") != Wait("dev-0", "c1")  # other node


def test_correct_after_a_force_delete_prepares_the_next_claim_cleanly():
    ledger = Ledger("correct")
    _prepare(ledger, "c1", "pod-a")
    assert [e.claim_uid for e in ledger.release("pod-a", forced=True)] == ["c1"]
    assert [e.claim_uid for e in _prepare(ledger, "c2", "pod-b")] == ["c2"]


# ---------------------------------------------------------------- the faulty variant's bug

def test_faulty_forgets_to_unprepare_a_force_deleted_pods_devices():
    ledger = Ledger("faulty")
    _prepare(ledger, "c1", "pod-a")
    assert ledger.release("pod-a", forced=True) == []
    assert ledger.on("node-1")["dev-0"].claim_uid == "c1"  # still prepared


def test_faulty_prepares_over_a_device_prepared_for_another_claim():
    held = {"dev-0": Prepared("node-1", "dev-0", "ns/c1", "c1", "ns/pod-a")}
    assert decide(held, ["dev-0"], "c2", "faulty") == Prepare(("dev-0",))


def test_faulty_prepares_one_device_for_two_claims_after_a_force_delete():
    """The prepare log it writes: prepare c1, (force delete: nothing), prepare c2 — dev-0 is
    prepared for two claims at once, which D5 must catch."""
    ledger = Ledger("faulty")
    log = [("prepare", e.claim_uid) for e in _prepare(ledger, "c1", "pod-a")]
    log += [("unprepare", e.claim_uid) for e in ledger.release("pod-a", forced=True)]
    log += [("prepare", e.claim_uid) for e in _prepare(ledger, "c2", "pod-b")]
    assert log == [("prepare", "c1"), ("prepare", "c2")]
