"""D5 judged from what a node shows: the kubelet's DRA checkpoint (dra_manager_state), which the
kubelet writes from the driver's answers, read on the node through the scenario; not a log the
driver under test writes about itself."""

from __future__ import annotations

import json
import zlib

import pytest

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.concepts.dra import kubelet_prepared
from aftershock.properties import Judgement
from aftershock.timeline.entry import WATCH, Entry
from tests.verdict_corpus import keep

DRIVER = "gpu.example.com"


def checkpoint(*claims: tuple[str, list[str]], torn: bool = False) -> str:
    """The kubelet's file: its data as a JSON string, with the CRC-32 of that string. A claim
    named ``other/name`` is of namespace ``other``, else of ``ns``."""
    entries = [{"ClaimUID": f"uid-{name}", "ClaimName": name.split("/")[-1],
                "Namespace": name.split("/")[0] if "/" in name else "ns",
                "PodUIDs": {f"pod-{name}": {}},
                "DriverState": {DRIVER: {"Devices": [
                    {"PoolName": "worker-1", "DeviceName": device, "RequestNames": ["gpu"]}
                    for device in devices]}}} for name, devices in claims]
    data = json.dumps({"kind": "DRACheckpoint", "apiVersion": "checkpoint.dra.kubelet.k8s.io/v1",
                       "ClaimInfoStateList": entries})
    return json.dumps({"Data": data, "Checksum": zlib.crc32(data.encode()) + int(torn)})


TIMELINE = [Entry(seq=0, mono=100.0, wall=1e9, kind=WATCH, resource="pods", namespace="ns",
                  name="p", uid="u", rv="1", type="ADDED", object={})]


def judge(*texts: str):
    snaps = [{"time": 1e9 + i, "node": "worker-1", "text": text} for i, text in enumerate(texts)]
    return properties.judge(["D5"], Judgement("node_state_exclusive", {
        "node_state": snaps, "namespace": "ns"}), TIMELINE)


def test_the_checkpoint_says_which_claims_hold_each_device():
    text = checkpoint(("a", ["gpu-0"]), ("b", ["gpu-1"]), ("pending", []))
    assert kubelet_prepared(text) == {(DRIVER, "worker-1", "gpu-0"): {"ns/a"},
                                      (DRIVER, "worker-1", "gpu-1"): {"ns/b"}}
    with pytest.raises(ValueError, match="checksum"):
        kubelet_prepared(checkpoint(("a", ["gpu-0"]), torn=True))


def test_one_device_prepared_for_two_claims_on_a_node_is_a_violation():
    verdict = judge(checkpoint(("a", ["gpu-3"])), checkpoint(("a", ["gpu-3"]), ("b", ["gpu-3"])))
    assert verdict.status == VIOLATED, verdict.explain()
    assert "worker-1/gpu-3" in verdict.summary and "ns/a, ns/b" in verdict.summary
    assert "node/worker-1" in verdict.witness[0].detail


def test_distinct_devices_pass_and_a_read_that_does_not_check_out_is_unknown():
    assert judge(checkpoint(("a", ["gpu-0"])), checkpoint(("a", ["gpu-0"]), ("b", ["gpu-1"]))
                 ).status == PASS
    torn = judge(checkpoint(("a", ["gpu-0"])), checkpoint(("b", ["gpu-1"]), torn=True))
    assert torn.status == UNKNOWN and "checksum" in torn.summary, torn.explain()
    assert judge(checkpoint()).status == UNKNOWN  # nothing was ever prepared: nothing judged


def test_a_claim_an_earlier_scenario_left_prepared_is_not_this_scenarios_violation():
    """A node deleted under its pod in an earlier scenario keeps that pod's claim prepared; a
    double preparation with it is UNKNOWN, naming it; one among this scenario's own claims, or
    with a claim of another namespace made during the scenario, is still a violation."""
    left = checkpoint(("earlier/x", ["gpu-3"]))
    verdict = judge(left, checkpoint(("earlier/x", ["gpu-3"]), ("a", ["gpu-3"])))
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "earlier/x was prepared there before this scenario began" in verdict.summary
    later = judge(left, checkpoint(("earlier/x", ["gpu-3"]), ("a", ["gpu-3"])),
                  checkpoint(("earlier/x", ["gpu-3"]), ("a", ["gpu-1"]), ("b", ["gpu-1"])))
    assert later.status == VIOLATED and "ns/a, ns/b" in later.summary, later.explain()
    made_during = judge(checkpoint(), checkpoint(("other/y", ["gpu-2"]), ("a", ["gpu-2"])))
    assert made_during.status == VIOLATED, made_during.explain()


def test_a_device_two_earlier_scenarios_claims_hold_is_not_judged_here():
    """Claims a faulty driver left prepared by two earlier scenarios share a device; this
    scenario's own claims never do. The judge raised on it (min() of nothing), and D5 read
    UNKNOWN: "cannot judge node_state_exclusive"."""
    left = checkpoint(("earlier/x", ["gpu-0"]), ("before/y", ["gpu-0"]))
    texts = (left, checkpoint(("earlier/x", ["gpu-0"]), ("before/y", ["gpu-0"]), ("a", ["gpu-1"])))
    verdict = judge(*texts)
    assert verdict.status == PASS, verdict.explain()
    assert "(not judged: node/worker-1 worker-1/gpu-0 held by two claims earlier scenarios " \
           "left)" in verdict.summary
    snaps = [{"time": 1e9 + i, "node": "worker-1", "text": text} for i, text in enumerate(texts)]
    keep("d5-two-claims-earlier-scenarios-left", TIMELINE,
         Judgement("node_state_exclusive", {"node_state": snaps, "namespace": "ns"}), ["D5"],
         {"D5": "pass"},
         wrong="D5: UNKNOWN: cannot judge node_state_exclusive: ValueError('min() arg is an "
               "empty sequence')",
         found="issue 46, the faulty reference plugin on kind at 1.37.2 (2026-11-28): its "
               "plugin-down scenario came after two that left claims prepared on one device")


def _claim(seq: int, name: str, device: str, admin: bool = False, share: str = "") -> Entry:
    result = {"request": "gpu", "driver": DRIVER, "pool": "worker-1", "device": device}
    if admin:
        result["adminAccess"] = True
    if share:
        result["shareID"] = share
    return Entry(seq=seq, mono=100.0 + seq, wall=1e9 + seq, kind=WATCH, resource="resourceclaims",
                 namespace="ns", name=name, uid=f"uid-{name}", rv=str(seq + 1), type="ADDED",
                 object={"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
                         "status": {"allocation": {"devices": {"results": [result]}}}})


def _shared(*claims: tuple[str, str, str]) -> str:
    """A checkpoint whose claims hold shares of one device: (claim, device, shareID)."""
    entries = [{"ClaimUID": f"uid-{name}", "ClaimName": name, "Namespace": "ns",
                "PodUIDs": {f"pod-{name}": {}}, "DriverState": {DRIVER: {"Devices": [
                    {"PoolName": "worker-1", "DeviceName": device, "ShareID": share,
                     "RequestNames": ["gpu"]}]}}} for name, device, share in claims]
    data = json.dumps({"kind": "DRACheckpoint", "apiVersion": "checkpoint.dra.kubelet.k8s.io/v1",
                       "ClaimInfoStateList": entries})
    return json.dumps({"Data": data, "Checksum": zlib.crc32(data.encode())})


def _judge_on(timeline: list[Entry], *texts: str):
    snaps = [{"time": 1e9 + i, "node": "worker-1", "text": text} for i, text in enumerate(texts)]
    judgement = Judgement("node_state_exclusive", {"node_state": snaps, "namespace": "ns"})
    return properties.judge(["D5"], judgement, timeline), judgement


def test_an_admin_access_claim_beside_another_on_its_device_is_no_double_preparation():
    """KEP-5018: an admin-access allocation (a monitoring DaemonSet's) shares the device by
    design, and D2 already left it out; D5 counted it as a second claim: VIOLATED."""
    timeline = [*TIMELINE, _claim(1, "monitor", "gpu-0", admin=True), _claim(2, "a", "gpu-0")]
    both = checkpoint(("monitor", ["gpu-0"]), ("a", ["gpu-0"]))
    verdict, judgement = _judge_on(timeline, checkpoint(("monitor", ["gpu-0"])), both)
    assert verdict.status == PASS, verdict.explain()
    keep("d5-an-admin-access-claim-beside-another", timeline, judgement, ["D5"],
         {"D5": "pass"}, "D5: VIOLATED: device worker-1/gpu-0 of gpu.example.com on "
         "node/worker-1 was prepared for 2 claims at once: ns/a, ns/monitor",
         "issue 65: KEP-5018's admin access, read against D5")
    # without admin access, the same two are a violation
    plain = [*TIMELINE, _claim(1, "monitor", "gpu-0"), _claim(2, "a", "gpu-0")]
    assert _judge_on(plain, both)[0].status == VIOLATED


def test_two_shares_of_one_device_are_two_holdings_and_one_share_twice_is_not():
    """KEP-5075: a device that allows multiple allocations is held share by share (each
    result, and the kubelet's entry, with its own shareID); D5 keyed the device alone."""
    timeline = [*TIMELINE, _claim(1, "a", "gpu-0", share="s1"), _claim(2, "b", "gpu-0",
                                                                        share="s2")]
    verdict, judgement = _judge_on(timeline, _shared(("a", "gpu-0", "s1")),
                                   _shared(("a", "gpu-0", "s1"), ("b", "gpu-0", "s2")))
    assert verdict.status == PASS, verdict.explain()
    keep("d5-two-shares-of-one-device", timeline, judgement, ["D5"], {"D5": "pass"},
         "D5: VIOLATED: device worker-1/gpu-0 of gpu.example.com on node/worker-1 was "
         "prepared for 2 claims at once: ns/a, ns/b",
         "issue 65: KEP-5075's consumable capacity, read against D5")
    same = _judge_on(timeline, _shared(("a", "gpu-0", "s1"), ("b", "gpu-0", "s1")))[0]
    assert same.status == VIOLATED and "gpu-0#share-s1" in same.summary, same.explain()
