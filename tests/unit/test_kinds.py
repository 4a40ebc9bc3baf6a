"""Kinds named as kubectl names them, resolved against what discovery says is served."""

from __future__ import annotations

import pytest

from aftershock.kube.discovery import Catalog, UnknownKind
from aftershock.kube.paths import Key

DISCOVERY = {
    "/api/v1": {"resources": [
        {"name": "pods", "singularName": "pod", "kind": "Pod", "namespaced": True,
         "shortNames": ["po"], "verbs": ["create", "get", "list", "watch", "delete"]},
        {"name": "pods/status", "kind": "Pod", "namespaced": True},
        {"name": "events", "singularName": "event", "kind": "Event", "namespaced": True,
         "shortNames": ["ev"]},
        {"name": "nodes", "singularName": "node", "kind": "Node", "namespaced": False}]},
    "/apis": {"groups": [
        {"name": "events.k8s.io", "preferredVersion": {"version": "v1"}},
        {"name": "ray.io", "preferredVersion": {"version": "v1"}},
        {"name": "resource.k8s.io", "preferredVersion": {"version": "v1"}},
        {"name": "scheduling.k8s.io", "preferredVersion": {"version": "v1"},
         "versions": [{"version": "v1"}, {"version": "v1beta1"}]},
        {"name": "other.io", "preferredVersion": {"version": "v1alpha1"}}]},
    "/apis/events.k8s.io/v1": {"resources": [
        {"name": "events", "singularName": "event", "kind": "Event", "namespaced": True}]},
    "/apis/ray.io/v1": {"resources": [
        {"name": "rayclusters", "singularName": "raycluster", "kind": "RayCluster",
         "namespaced": True}]},
    "/apis/resource.k8s.io/v1": {"resources": [
        {"name": "resourceclaims", "singularName": "resourceclaim", "kind": "ResourceClaim",
         "namespaced": True},
        {"name": "deviceclasses", "singularName": "deviceclass", "kind": "DeviceClass",
         "namespaced": False}]},
    "/apis/scheduling.k8s.io/v1": {"resources": [
        {"name": "priorityclasses", "singularName": "priorityclass", "kind": "PriorityClass",
         "namespaced": False, "shortNames": ["pc"]}]},
    "/apis/scheduling.k8s.io/v1beta1": {"resources": [
        {"name": "priorityclasses", "singularName": "priorityclass", "kind": "PriorityClass",
         "namespaced": False},
        {"name": "workloads", "singularName": "workload", "kind": "Workload",
         "namespaced": True}]},
    "/apis/other.io/v1alpha1": {"resources": [
        {"name": "rayclusters", "singularName": "raycluster", "kind": "RayCluster",
         "namespaced": True}]},
}


class Api:
    def get(self, path: str) -> dict:
        return DISCOVERY[path]


CATALOG = Catalog.from_api(Api())


@pytest.mark.parametrize(("word", "plural", "group"), [
    ("pod", "pods", ""), ("pods", "pods", ""), ("po", "pods", ""), ("Pod", "pods", ""),
    ("events", "events", ""),  # the core group wins, as with kubectl
    ("events.events.k8s.io", "events", "events.k8s.io"),
    ("resourceclaim", "resourceclaims", "resource.k8s.io"),
    ("deviceclass", "deviceclasses", "resource.k8s.io"),
    ("raycluster.ray.io", "rayclusters", "ray.io"),
])
def test_a_kind_is_named_as_kubectl_names_it(word, plural, group):
    kind = CATALOG.resolve(word)
    assert (kind.plural, kind.group) == (plural, group)


def test_subresources_are_no_kinds_and_scope_and_version_come_from_discovery():
    assert "pods/status" not in {k.plural for k in CATALOG.kinds}
    claim = CATALOG.resolve("resourceclaim")
    assert claim.namespaced and claim.api_version == "resource.k8s.io/v1"
    assert not CATALOG.resolve("deviceclass").namespaced


def test_an_unknown_or_ambiguous_kind_says_what_is_served():
    with pytest.raises(UnknownKind, match=r"no kind 'resorceclaim' is served by this cluster; "
                                          r"closest served: resourceclaim"):
        CATALOG.resolve("resorceclaim")
    with pytest.raises(UnknownKind, match=r"in 2 API groups \(other.io, ray.io\): say which, "
                                          r"as in raycluster.other.io"):
        CATALOG.resolve("raycluster")


def test_a_manifest_s_kind_is_found_by_its_api_version():
    assert CATALOG.of_manifest("resource.k8s.io/v1", "ResourceClaim").plural == "resourceclaims"
    assert CATALOG.of_manifest("v1", "Pod").plural == "pods"
    assert CATALOG.of_manifest("resource.k8s.io/v1beta2", "ResourceClaim").version == "v1"
    with pytest.raises(UnknownKind, match=r"ResourceClaim is served as resource\.k8s\.io/v1, "
                                          r"not in the group of ray\.io/v1"):
        CATALOG.of_manifest("ray.io/v1", "ResourceClaim")
    with pytest.raises(UnknownKind, match="closest served: raycluster"):
        CATALOG.of_manifest("ray.io/v1", "RayClustr")


OPENAPI = {"components": {"schemas": {
    "io.ray.v1.RayCluster": {
        "x-kubernetes-group-version-kind": [{"group": "ray.io", "version": "v1",
                                             "kind": "RayCluster"}],
        "properties": {"metadata": {"allOf": [{"$ref": "#/components/schemas/ObjectMeta"}],
                                    "default": {}},
                       "status": {"type": "object", "properties": {
                           "readyWorkerReplicas": {"type": "integer"},
                           "conditions": {"type": "array", "items": {
                               "$ref": "#/components/schemas/Condition"}}}}}},
    "ObjectMeta": {"properties": {"labels": {"type": "object",
                                             "additionalProperties": {"type": "string"}}}},
    "Condition": {"properties": {"type": {"type": "string"}, "status": {"type": "string"}}},
}}}


class SchemaApi(Api):
    def get(self, path: str) -> dict:
        if path == "/openapi/v3/apis/ray.io/v1":
            return OPENAPI
        if path.startswith("/openapi/"):
            raise LookupError(path)  # nothing published for this group
        return super().get(path)


def test_a_field_is_checked_against_the_schema_the_cluster_publishes_references_followed():
    catalog = Catalog.from_api(SchemaApi())
    ray = catalog.resolve("raycluster.ray.io")
    for path in ("status.readyWorkerReplicas", "metadata.labels.app",
                 "status.conditions[type=Ready].status"):
        assert catalog.field_problem(ray, path) is None, path
    assert "no field 'readyWorkerReplica' under 'status' (fields there: conditions, " \
           "readyWorkerReplicas)" in catalog.field_problem(ray, "status.readyWorkerReplica")
    assert "no field 'statsu' under 'status.conditions[type=Ready]'" in \
        catalog.field_problem(ray, "status.conditions[type=Ready].statsu")
    # a label key with dots, given as one step (a partial manifest's), and as a dotted path
    labelled = [Key("metadata"), Key("labels"), Key("app.kubernetes.io/name")]
    assert catalog.field_problem(ray, labelled) is None
    assert "no field 'kubernetes' under 'metadata.labels.app'" in \
        catalog.field_problem(ray, "metadata.labels.app.kubernetes.io/name")
    # A kind whose group publishes no schema: nothing to check against, no refusal
    assert catalog.field_problem(catalog.resolve("pod"), "status.anything") is None


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "spec": {"group": "samplecontroller.k8s.io", "scope": "Namespaced",
                "names": {"plural": "foos", "singular": "foo", "kind": "Foo"},
                "versions": [{"name": "v1alpha1", "served": True, "storage": True, "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}}


def test_a_kind_the_implementation_will_install_is_known_before_it_is_served():
    """A feature names foo/web before the implementation's step installs its CRD."""
    catalog = Catalog.from_api(Api())
    catalog.add_crds([CRD, {"kind": "ConfigMap"}])
    foo = catalog.resolve("foo")
    assert (foo.group, foo.plural, foo.version, foo.namespaced) == (
        "samplecontroller.k8s.io", "foos", "v1alpha1", True)
    assert ("samplecontroller.k8s.io", "foos") in catalog.pending
    assert catalog.field_problem(foo, "spec.replicas") is None
    assert "no field 'replica' under 'spec'" in catalog.field_problem(foo, "spec.replica")
    catalog.add_crds([{**CRD, "spec": {**CRD["spec"], "group": "ray.io",
                                        "names": {"plural": "rayclusters", "kind": "RayCluster"}}}])
    assert ("ray.io", "rayclusters") not in catalog.pending  # served already: discovery's


def test_a_kind_only_a_non_preferred_version_serves_is_found_there():
    """Kubernetes 1.37 serves Workload only at scheduling.k8s.io/v1beta1, beside v1's
    PriorityClass (the preferred version): a step names it, kubectl api-resources lists it.
    PriorityClass stays at the preferred version."""
    workload = CATALOG.resolve("workload")
    assert workload.api_version == "scheduling.k8s.io/v1beta1" and workload.namespaced
    assert CATALOG.of_manifest("scheduling.k8s.io/v1beta1", "Workload") == workload
    assert CATALOG.resolve("pc").api_version == "scheduling.k8s.io/v1"
    assert [k.api_version for k in CATALOG.kinds if k.kind == "PriorityClass"] == [
        "scheduling.k8s.io/v1"]


def test_a_watch_fault_names_any_kind_the_cluster_serves():
    """Explore anchors a stall on a kind no step of the workload names (cert-manager's
    CertificateRequests): the step takes any word kubectl takes for a served kind."""
    from types import SimpleNamespace

    from aftershock.bdd.steps import anchored, objects
    from aftershock.errors import StepFailed

    scenario = SimpleNamespace(facts={objects.CATALOG: CATALOG, "profile": None})
    assert anchored.resource_of(scenario, "pod") == "pods"
    assert anchored.resource_of(scenario, "resourceclaim") == "resourceclaims"
    assert anchored.resource_of(scenario, "deviceclass") == "deviceclasses"
    with pytest.raises(StepFailed, match="in 2 API groups"):  # say which, as kubectl asks
        anchored.resource_of(scenario, "raycluster")
    with pytest.raises(StepFailed, match=r"unknown watch 'resorceclaim'.*resourceclaim"):
        anchored.resource_of(scenario, "resorceclaim")
