"""Readiness of an implementation started out of the cluster, other than a log line: a URL
that answers 2xx, a Lease in the scenario's namespace that someone holds, an object whose
condition turns True (read from the real API server); the CRD an implementation installs,
replaced when another version brings a changed one; and a cluster whose garbage collector knows
the kinds it installed."""

from __future__ import annotations

import threading
import time as clock
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes import client

from aftershock.kube import api as kube
from aftershock.kube.manifests import PROBE_GROUP, apply_manifest, wait_collector_knows
from aftershock.profile.load import Start
from aftershock.sut.readiness import waiting_for

pytestmark = pytest.mark.cluster


def _waiting(scenario, tmp_path, start: Start) -> list[str]:
    return waiting_for(start, tmp_path / "absent.log", 0, scenario.api, scenario.namespace,
                       {"namespace": scenario.namespace})


def test_a_lease_is_ready_once_someone_holds_it(aftershock_scenario, tmp_path):
    scenario = aftershock_scenario
    start = Start(command=("x",), ready_lease="op-{namespace}")
    name = f"op-{scenario.namespace}"
    assert _waiting(scenario, tmp_path, start) == [f"lease/{scenario.namespace}/{name} held"]
    leases = client.CoordinationV1Api(scenario.api)
    leases.create_namespaced_lease(scenario.namespace, {"metadata": {"name": name},
                                                        "spec": {}})
    assert _waiting(scenario, tmp_path, start) == [f"lease/{scenario.namespace}/{name} held"]
    leases.patch_namespaced_lease(name, scenario.namespace,
                                  {"spec": {"holderIdentity": "operator-0"}})
    assert _waiting(scenario, tmp_path, start) == []


def test_a_url_is_ready_once_it_answers_2xx(aftershock_scenario, tmp_path):
    healthy = {"now": False}

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if healthy["now"] else 503)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/healthz"
        start = Start(command=("x",), ready_http=url, ready_log="Started workers")
        both = ["the log line 'Started workers'", f"a 2xx from {url}"]
        assert _waiting(aftershock_scenario, tmp_path, start) == both
        healthy["now"] = True
        assert _waiting(aftershock_scenario, tmp_path, start) == both[:1]
        (tmp_path / "absent.log").write_text("I1123 Started workers\n")
        assert _waiting(aftershock_scenario, tmp_path, start) == []
    finally:
        server.shutdown()


def widget_crd(description: str) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.readiness.aftershock.io"},
            "spec": {"group": "readiness.aftershock.io", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object", "description": description,
                                       "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_a_condition_is_ready_once_it_turns_true(aftershock_scenario, tmp_path):
    scenario = aftershock_scenario
    apply_manifest(scenario.api, widget_crd("a widget"), scenario.namespace)
    resource = {"group": "readiness.aftershock.io", "version": "v1", "plural": "widgets",
                "kind": "Widget"}
    start = Start(command=("x",), ready_condition={"resource": resource, "name": "w-{namespace}",
                                                   "type": "Available"})
    name = f"w-{scenario.namespace}"
    missing = [f"condition Available=True on widgets/{name}"]
    assert _waiting(scenario, tmp_path, start) == missing
    objects = client.CustomObjectsApi(scenario.api)
    args = ("readiness.aftershock.io", "v1", scenario.namespace, "widgets")
    objects.create_namespaced_custom_object(*args, {
        "apiVersion": "readiness.aftershock.io/v1", "kind": "Widget",
        "metadata": {"name": name}})
    for status, ready in (("False", missing), ("True", [])):
        objects.patch_namespaced_custom_object_status(*args, name, {"status": {"conditions": [
            {"type": "Available", "status": status}]}})
        assert _waiting(scenario, tmp_path, start) == ready


def test_a_changed_crd_replaces_the_installed_one_and_the_same_one_leaves_it(
        aftershock_scenario):
    """Two versions of one operator in one run: the second brings its own CRD."""
    scenario = aftershock_scenario
    crds = client.ApiextensionsV1Api(scenario.api)
    name = "widgets.readiness.aftershock.io"

    def installed() -> tuple[str, str]:
        crd = crds.read_custom_resource_definition(name)
        schema = crd.spec.versions[0].schema.open_apiv3_schema
        return schema.description, crd.metadata.resource_version

    apply_manifest(scenario.api, widget_crd("a widget"), scenario.namespace)
    description, version = installed()
    apply_manifest(scenario.api, widget_crd(description), scenario.namespace)
    assert installed() == (description, version)
    apply_manifest(scenario.api, widget_crd(f"{description}, changed"), scenario.namespace)
    assert installed()[0] == f"{description}, changed"


def test_an_owner_of_a_kind_just_made_takes_its_dependents_once_the_collector_knows_it(
        aftershock_scenario):
    """kube-controller-manager's garbage collector learns new kinds every 30 s; until then an
    owner of a new kind goes and leaves its dependents behind (Grove's gang termination deleted
    its PodCliques and their pods stayed: G8 saw six live pods for three). An implementation
    starts once the collector knows every kind it installed, and the probe kind is going."""
    scenario = aftershock_scenario
    crds = client.ApiextensionsV1Api(scenario.api)
    plural = f"gadgets{clock.time_ns() % 10**9}"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"{plural}.readiness.aftershock.io"},
           "spec": {"group": "readiness.aftershock.io", "scope": "Namespaced",
                    "names": {"plural": plural, "kind": plural.capitalize()},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}]}}
    try:
        assert apply_manifest(scenario.api, crd, scenario.namespace) is True  # a new kind
        assert apply_manifest(scenario.api, crd, scenario.namespace) is False  # known now
        wait_collector_knows(scenario.api, scenario.namespace)
        assert all(c.metadata.deletion_timestamp  # going (its instances first) or gone
                   for c in crds.list_custom_resource_definition().items
                   if c.spec.group == PROBE_GROUP)
        objects = client.CustomObjectsApi(scenario.api)
        owner = objects.create_namespaced_custom_object(
            "readiness.aftershock.io", "v1", scenario.namespace, plural, {
                "apiVersion": "readiness.aftershock.io/v1", "kind": plural.capitalize(),
                "metadata": {"name": "owner"}})
        core = client.CoreV1Api(scenario.api)
        core.create_namespaced_config_map(scenario.namespace, {"metadata": {
            "name": "dependent", "ownerReferences": [{
                "apiVersion": "readiness.aftershock.io/v1", "kind": plural.capitalize(),
                "name": "owner", "uid": owner["metadata"]["uid"]}]}})
        objects.delete_namespaced_custom_object("readiness.aftershock.io", "v1",
                                                scenario.namespace, plural, "owner")
        assert kube.wait_named(core.list_namespaced_config_map, scenario.namespace,
                               "dependent", gone=True, timeout=10), \
            "the dependent outlived its owner by 10 s: the collector did not know"
    finally:
        crds.delete_custom_resource_definition(crd["metadata"]["name"])
