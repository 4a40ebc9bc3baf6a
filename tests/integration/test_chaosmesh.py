"""Chaos Mesh experiments are plain custom resources: every manifest aftershock builds is
accepted by the real v2.8.3 CRD schemas (installed into the embedded cluster), bad ones are
refused, and apply / pause / delete-until-404 work against the real apiserver. No Chaos Mesh
controller runs here, so the test writes the AllInjected condition itself to exercise the wait."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from aftershock.faults import chaosmesh
from aftershock.kube import api as kube
from aftershock.kube import door
from aftershock.kube.door import HarnessWriteFailed

pytestmark = pytest.mark.cluster
VENDOR = Path(__file__).resolve().parents[2] / "vendor" / "chaos-mesh"  # with its LICENSE
KINDS = ("podchaos", "networkchaos", "stresschaos")
APP = {"app.kubernetes.io/name": "web"}


@pytest.fixture(scope="module")
def chaos_crds(aftershock_cluster):
    api = kube.api_client(aftershock_cluster.info.kubeconfig)
    extensions = client.ApiextensionsV1Api(api)
    created = []
    for kind in KINDS:
        crd = yaml.safe_load((VENDOR / f"chaos-mesh.org_{kind}.yaml").read_text())
        try:
            extensions.create_custom_resource_definition(crd)
            created.append(crd["metadata"]["name"])
        except ApiException as exc:
            if exc.status != 409:
                raise
    deadline = time.monotonic() + 30
    for name in created:
        while time.monotonic() < deadline:
            crd = extensions.read_custom_resource_definition(name)
            if any(c.type == "Established" and c.status == "True"
                   for c in crd.status.conditions or []):
                break
            time.sleep(0.1)  # CRD establishment: a one-off set-up wait
    yield api
    for name in created:
        extensions.delete_custom_resource_definition(name)
    api.close()


def _manifests(namespace: str) -> list[dict]:
    return [
        chaosmesh.pod_kill("kill", namespace, APP),
        chaosmesh.pod_failure("fail", namespace, APP, duration="30s"),
        chaosmesh.network_delay("slow", namespace, APP, latency="200ms", jitter="20ms",
                                duration="1m"),
        chaosmesh.network_loss("lossy", namespace, APP, percent=25),
        chaosmesh.network_partition("split", namespace, APP, {"app.kubernetes.io/name": "db"}),
        chaosmesh.stress("hot", namespace, APP, cpu_workers=2, memory="64MB"),
    ]


def _create(api, manifest: dict, dry_run: bool = True) -> None:
    """Through the harness's one door (fieldValidation=Strict), as the fault itself creates."""
    door.call(client.CustomObjectsApi(api).create_namespaced_custom_object,
              chaosmesh.GROUP, chaosmesh.VERSION, manifest["metadata"]["namespace"],
              chaosmesh.PLURALS[manifest["kind"]], manifest, dry_run="All" if dry_run else None)


def test_every_experiment_is_accepted_by_the_real_crd_schema(chaos_crds, aftershock_scenario):
    for manifest in _manifests(aftershock_scenario.namespace):
        _create(chaos_crds, manifest)


@pytest.mark.parametrize("breakage", ["no latency", "bad mode", "bad action",
                                      "misspelled field"])
def test_a_malformed_experiment_is_refused_by_the_schema(chaos_crds, aftershock_scenario,
                                                         breakage):
    """Each is refused, a misspelled field too: without Strict the API prunes it silently and
    the experiment runs without what it was meant to have."""
    manifest = chaosmesh.network_delay("slow", aftershock_scenario.namespace, APP, "1s")
    if breakage == "no latency":
        del manifest["spec"]["delay"]["latency"]
    elif breakage == "bad mode":
        manifest["spec"]["mode"] = "sometimes"
    elif breakage == "bad action":
        manifest["spec"]["action"] = "explode"
    else:
        manifest["spec"]["delay"]["jiter"] = manifest["spec"]["delay"].pop("jitter", "1ms")
    with pytest.raises(HarnessWriteFailed, match=r"HTTP 4(00|22)"):
        _create(chaos_crds, manifest)


def test_apply_wait_injected_pause_and_delete_until_404(chaos_crds, aftershock_scenario):
    namespace = aftershock_scenario.namespace
    experiment = chaosmesh.Experiment(chaos_crds,
                                      chaosmesh.pod_kill("kill", namespace, APP))
    experiment.apply()
    objects = client.CustomObjectsApi(chaos_crds)
    args = (chaosmesh.GROUP, chaosmesh.VERSION, namespace, "podchaos", "kill")
    objects.patch_namespaced_custom_object(*args, {"status": {"experiment": {}, "conditions": [
        {"type": "AllInjected", "status": "True"}]}})  # playing the absent controller
    experiment.wait_injected(timeout=10)
    experiment.pause()
    annotations = objects.get_namespaced_custom_object(*args)["metadata"]["annotations"]
    assert annotations[chaosmesh.PAUSE_ANNOTATION] == "true"
    experiment.revert()
    with pytest.raises(ApiException) as gone:
        objects.get_namespaced_custom_object(*args)
    assert gone.value.status == 404
