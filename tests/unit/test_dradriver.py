"""The DRA driver's decisions, judged before anything is written (pure: no cluster)."""

import pytest

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
from implementations.dradriver.slices import (
    OWNER_LABEL,
    Create,
    Delete,
    plan_slices,
    slice_body,
    slice_name,
)

DRIVER, NS = "gpu.aftershock.io", "scenario-1"
VARIANTS = ("faulty", "correct")


def _slice(node, uid, namespace=NS, driver=DRIVER, count=1):
    body = slice_body(node, uid, driver=driver, count=count, namespace=namespace)
    body["metadata"]["uid"] = f"slice-{node}"
    return body


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
    body = slice_body("node-1", "uid-1", driver=DRIVER, count=2, namespace=NS)
    assert slice_name("node-1", DRIVER) == "node-1-gpu-aftershock-io"
    assert body["apiVersion"] == "resource.k8s.io/v1" and body["kind"] == "ResourceSlice"
    assert body["metadata"]["name"] == "node-1-gpu-aftershock-io"
    assert body["metadata"]["labels"] == {OWNER_LABEL: NS}
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "uid-1"}]
    spec = body["spec"]
    assert (spec["driver"], spec["nodeName"]) == (DRIVER, "node-1")
    assert spec["pool"] == {"name": "node-1", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in spec["devices"]] == ["dev-0", "dev-1"]
    assert spec["devices"][1]["attributes"]["index"] == {"int": 1}


def test_every_node_without_a_slice_gets_one():
    actions = plan_slices({"node-2": "u2", "node-1": "u1"}, [_slice("node-1", "u1")],
                          driver=DRIVER, count=1, namespace=NS)
    assert actions == [Create("node-2", "u2")]


def test_slice_of_a_vanished_or_recreated_node_is_deleted_not_republished():
    slices = [_slice("node-1", "old-uid"), _slice("node-9", "u9")]
    actions = plan_slices({"node-1": "new-uid"}, slices, driver=DRIVER, count=1, namespace=NS)
    assert actions == [Delete("node-1-gpu-aftershock-io", "slice-node-1",
                              "node/node-1 was recreated"),
                       Delete("node-9-gpu-aftershock-io", "slice-node-9",
                              "node/node-9 gone or not selected")]


def test_slice_with_other_devices_is_replaced():
    actions = plan_slices({"node-1": "u1"}, [_slice("node-1", "u1", count=2)], driver=DRIVER,
                          count=1, namespace=NS)
    assert [type(a) for a in actions] == [Delete]


def test_slices_of_other_scenarios_and_drivers_are_left_alone():
    slices = [_slice("node-1", "u1", namespace="other"), _slice("node-2", "u2", driver="x.io")]
    actions = plan_slices({}, slices, driver=DRIVER, count=1, namespace=NS)
    assert actions == []


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
