"""D13 over recorded pods and claims and what each container said it sees: a device leaked into
a container that did not ask, and a device's environment missing from one that did, are
violations; a view cut short, or a claim whose allocation was not recorded, is UNKNOWN."""

from __future__ import annotations

import pytest

from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.concepts.dra import container_claims, seen_identities, seen_lines
from aftershock.properties.dra_container import sees_own_devices
from aftershock.timeline.entry import WATCH, Entry

NS, DRIVER = "ns", "gpu.aftershock.io"
DEVICE = [{"env": "AFTERSHOCK_DEVICE_.+", "device": "{value}"}]
EXAMPLE = [{"env": "GPU_DEVICE_[0-9]+", "device": "{value}"},
           {"env": "GPU_DEVICE_.+_RESOURCE_CLAIM", "claim_uid": "{value}"}]
TEST_DRIVER = [{"env": "claim_(.+)_device", "claim": "{1}"}]


def _entry(seq: int, resource: str, name: str, obj: dict) -> Entry:
    obj.setdefault("metadata", {}).update(name=name, namespace=NS, uid=f"uid-{name}")
    return Entry(seq=seq, mono=float(seq), wall=1e9 + seq, kind=WATCH, resource=resource,
                 namespace=NS, name=name, uid=f"uid-{name}", rv=str(100 + seq), type="ADDED",
                 object=obj)


def _history(device: str = "dev-1", claim: str = "gpu-device-x") -> list[Entry]:
    pod = {"spec": {"nodeName": "node-1",
                    "resourceClaims": [{"name": "device",
                                        "resourceClaimTemplateName": "gpu-device"}],
                    "containers": [{"name": "user", "resources": {"claims": [{"name": "device"}]}},
                                   {"name": "bystander"}]},
           "status": {"phase": "Running", "resourceClaimStatuses": [
               {"name": "device", "resourceClaimName": claim}]}}
    plain = {"spec": {"nodeName": "node-2", "containers": [{"name": "main"}]},
             "status": {"phase": "Running"}}
    allocated = {"status": {"allocation": {"devices": {"results": [
        {"driver": DRIVER, "pool": "node-1", "device": device, "request": "device"}]}}}}
    return [_entry(0, "resourceclaims", claim, allocated), _entry(1, "pods", "gpu", pod),
            _entry(2, "pods", "plain", plain)]


def _view(pod: str, container: str, *env: str, complete: bool = True) -> dict:
    return {"pod": pod, "uid": f"uid-{pod}", "container": container, "node": "node-1",
            "lines": ["env PATH=/usr/bin", *(f"env {e}" for e in env), "dev null"],
            "complete": complete}


def _judge(views: list[dict], patterns=DEVICE, **history):
    return sees_own_devices(views, _history(**history), DRIVER, patterns, NS)


def test_each_container_that_sees_exactly_its_claims_devices_passes():
    verdict = _judge([_view("gpu", "user", "AFTERSHOCK_DEVICE_dev-1=dev-1"),
                      _view("gpu", "bystander"), _view("plain", "main")])
    assert verdict.status == PASS
    assert verdict.summary == ("3 containers each saw exactly the devices of the claims they use "
                               "(1 with devices of gpu.aftershock.io, 2 with none)")


@pytest.mark.parametrize(("views", "said"), [
    # a device leaked into the container beside the one that asked (the same pod)
    ([_view("gpu", "user", "AFTERSHOCK_DEVICE_dev-1=dev-1"),
      _view("gpu", "bystander", "AFTERSHOCK_DEVICE_dev-1=dev-1")],
     "container bystander of pod/ns/gpu on node/node-1 sees device dev-1 of gpu.aftershock.io, "
     "which no claim it uses holds (it uses no claim)"),
    # a device leaked into a pod that asked for none
    ([_view("plain", "main", "AFTERSHOCK_DEVICE_dev-2=dev-2")],
     "container main of pod/ns/plain on node/node-1 sees device dev-2 of gpu.aftershock.io, "
     "which no claim it uses holds (it uses no claim)"),
    # another claim's device, beside its own
    ([_view("gpu", "user", "AFTERSHOCK_DEVICE_dev-1=dev-1", "AFTERSHOCK_DEVICE_dev-3=dev-3")],
     "container user of pod/ns/gpu on node/node-1 sees device dev-3 of gpu.aftershock.io, "
     "which no claim it uses holds (it uses claim claim/ns/gpu-device-x)"),
    # the driver's environment forgotten
    ([_view("gpu", "user")],
     "container user of pod/ns/gpu on node/node-1 does not see device dev-1, which claim "
     "claim/ns/gpu-device-x holds of gpu.aftershock.io: its environment from the driver is not "
     "there"),
])
def test_a_device_leaked_or_missing_is_a_violation(views, said):
    verdict = _judge(views)
    assert (verdict.status, verdict.summary) == (VIOLATED, said)
    pod = views[0]["pod"]
    claims = {"gpu-device-x"} if "uses claim" in said or "which claim" in said else set()
    assert {e.name for e in verdict.witness} == {pod, *claims}  # the pod, the claims it uses
    assert verdict.found or "does not see" in said  # the log lines that showed a device


def test_what_cannot_be_known_is_unknown():
    cut = _judge([_view("gpu", "user", "AFTERSHOCK_DEVICE_dev-1=dev-1", complete=False)])
    assert cut.status == UNKNOWN and "did not say all it sees" in cut.summary
    unrecorded = sees_own_devices([_view("gpu", "user")], _history()[1:], DRIVER, DEVICE, NS)
    assert unrecorded.status == UNKNOWN
    assert "claim/ns/gpu-device-x's allocation was not recorded" in unrecorded.summary
    assert _judge([]).status == UNKNOWN


def test_a_container_shown_wrong_is_a_violation_whatever_the_others():
    wrong = _view("plain", "main", "AFTERSHOCK_DEVICE_dev-2=dev-2")
    stopped = {**_view("gpu", "user"), "complete": False, "lines": [],
               "error": "it was not running (CreateContainerError)"}
    assert _judge([stopped, wrong]).status == VIOLATED
    unknown = _judge([_view("plain", "main"), stopped])
    assert unknown.status == UNKNOWN
    assert unknown.summary == ("container user of pod/ns/gpu did not say all it sees: it was "
                               "not running (CreateContainerError)")


def test_a_driver_that_names_the_claim_and_not_the_device():
    """The example driver names the device and its claim's uid; Kubernetes' e2e test driver
    only the claim, by name (claim_<claim>_<request>=true)."""
    both = _judge([_view("gpu", "user", "GPU_DEVICE_1=dev-1",
                         "GPU_DEVICE_1_RESOURCE_CLAIM=uid-gpu-device-x")], EXAMPLE)
    assert both.status == PASS
    other = _judge([_view("gpu", "user", "GPU_DEVICE_1=dev-1",
                          "GPU_DEVICE_1_RESOURCE_CLAIM=uid-another")], EXAMPLE)
    assert other.status == VIOLATED and "claim uid uid-another" in other.summary
    named = _judge([_view("gpu", "user", "claim_gpu_device_x_device=true"),
                    _view("gpu", "bystander")], TEST_DRIVER)
    assert named.status == PASS
    leaked = _judge([_view("gpu", "bystander", "claim_gpu_device_x_device=true")], TEST_DRIVER)
    assert leaked.status == VIOLATED and "claim gpu_device_x" in leaked.summary


def test_what_a_container_log_says_it_sees():
    lines, complete = seen_lines("aftershock-sees env A=1\naftershock-sees dev nvidia0\n"
                                 "aftershock-sees end\nlistening on port 8080\n")
    assert (lines, complete) == (["env A=1", "dev nvidia0"], True)
    assert seen_lines("aftershock-sees env A=1\n")[1] is False
    assert seen_identities(lines, [{"dev": "nvidia([0-9]+)", "device": "gpu-{1}"}]) == {
        ("device", "gpu-0")}
    pod = _history()[1].object
    assert container_claims(pod, "user") == ["gpu-device-x"]
    assert container_claims(pod, "bystander") == []
