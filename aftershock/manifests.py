"""Applying manifests and waiting for what they start, as kubectl does: ``apply_manifest``
(a CRD is replaced by a newer version of itself and waited on until Established) and
``wait_rolled_out`` (kubectl rollout status, then the old pods gone). Every write goes through
the door (``aftershock.writes``)."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from kubernetes import client, watch
from kubernetes.dynamic import DynamicClient

from aftershock import door, kube, writes


def apply_manifest(api: client.ApiClient, doc: dict[str, Any], namespace: str) -> None:
    if doc.get("kind") == "CustomResourceDefinition":
        extensions = client.ApiextensionsV1Api(api)
        doc = _hashed(doc)
        try:
            door.call(extensions.create_custom_resource_definition, doc)
        except client.exceptions.ApiException as exc:
            if exc.status != 409:
                raise
            _replace_crd(extensions, doc)
        _wait_established(extensions, doc["metadata"]["name"])
        return
    resource = DynamicClient(api).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    try:
        writes.create(resource, doc, namespace if resource.namespaced else None)
    except client.exceptions.ApiException as exc:
        if exc.status != 409:  # cluster-scoped parts stay installed from an earlier scenario
            raise


def put(api: client.ApiClient, doc: dict[str, Any], namespace: str) -> None:
    """Create ``doc``, in place of any object of its name (a webhook configuration an earlier
    start left pointing at another port)."""
    resource, scope = _resource(api, doc, namespace)
    try:
        writes.create(resource, doc, scope)
    except client.exceptions.ApiException as exc:
        if exc.status != 409:
            raise
        remove(api, doc, namespace)
        writes.create(resource, doc, scope)


def remove(api: client.ApiClient, doc: dict[str, Any], namespace: str) -> None:
    """Delete the object ``doc`` names; one already gone is no error."""
    resource, scope = _resource(api, doc, namespace)
    with kube.suppress_not_found():
        resource.delete(name=doc["metadata"]["name"], namespace=scope)


def _resource(api: client.ApiClient, doc: dict[str, Any], namespace: str):
    resource = DynamicClient(api).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    return resource, namespace if resource.namespaced else None


SPEC_HASH = "aftershock.io/spec-hash"


def _hashed(doc: dict[str, Any]) -> dict[str, Any]:
    """The CRD, annotated with a hash of its spec (to tell a same one from another version)."""
    digest = hashlib.sha256(json.dumps(doc.get("spec"), sort_keys=True).encode()).hexdigest()
    meta = doc.get("metadata") or {}
    return {**doc, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}),
                                                         SPEC_HASH: digest[:16]}}}


def _replace_crd(extensions: client.ApiextensionsV1Api, doc: dict[str, Any]) -> None:
    """A CRD outlives a scenario: another version of the implementation (another profile in
    the same run) brings its own, which replaces the one installed."""
    name = doc["metadata"]["name"]
    current = extensions.read_custom_resource_definition(name)
    wanted = doc["metadata"]["annotations"][SPEC_HASH]
    if (current.metadata.annotations or {}).get(SPEC_HASH) == wanted:
        return
    doc["metadata"]["resourceVersion"] = current.metadata.resource_version
    door.call(extensions.replace_custom_resource_definition, name, doc)


def _wait_established(extensions: client.ApiextensionsV1Api, name: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        crd = extensions.read_custom_resource_definition(name)
        if any(c.type == "Established" and c.status == "True"
               for c in (crd.status.conditions or [])):
            return
        time.sleep(0.05)  # establishment is a one-off set-up step
    raise RuntimeError(f"customresourcedefinition/{name} not Established within 30s")


def rolled_out(deployment: dict[str, Any]) -> bool:
    """Every replica updated and available, the old ones gone (kubectl rollout status)."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    wanted = spec.get("replicas", 1)
    generation = (deployment.get("metadata") or {}).get("generation", 0)
    return (status.get("observedGeneration", 0) >= generation
            and status.get("updatedReplicas", 0) == wanted
            and status.get("replicas", 0) == wanted
            and status.get("availableReplicas", 0) == wanted)


def settled(pods: list[dict[str, Any]], replicas: int) -> bool:
    """Exactly ``replicas`` pods and none terminating: a terminating pod still runs its
    process (as PID 1 it may ignore SIGTERM until the grace period ends), and an old
    implementation running beside the new one would act unseen by the fault being applied."""
    return len(pods) == replicas and not any(
        (pod.get("metadata") or {}).get("deletionTimestamp") for pod in pods)


def wait_rolled_out(api: client.ApiClient, namespace: str, name: str, timeout: float) -> None:
    """Until the Deployment is rolled out (kubectl rollout status) and its old pods are gone."""
    deadline = time.monotonic() + timeout
    apps = client.AppsV1Api(api)
    stream = watch.Watch()
    for event in stream.stream(apps.list_namespaced_deployment, namespace,
                               field_selector=f"metadata.name={name}",
                               timeout_seconds=max(1, int(timeout))):
        deployment = api.sanitize_for_serialization(event["object"])
        if rolled_out(deployment):
            stream.stop()
            _wait_pods_settled(api, namespace, deployment, deadline)
            return
    raise TimeoutError(f"deployment/{namespace}/{name} not rolled out within {timeout:.0f}s")


def _wait_pods_settled(api: client.ApiClient, namespace: str, deployment: dict[str, Any],
                       deadline: float) -> None:
    corev1 = client.CoreV1Api(api)
    selector = ",".join(f"{key}={value}" for key, value in
                        deployment["spec"]["selector"].get("matchLabels", {}).items())
    replicas = deployment["spec"].get("replicas", 1)
    listed = api.sanitize_for_serialization(
        corev1.list_namespaced_pod(namespace, label_selector=selector))
    pods = {pod["metadata"]["name"]: pod for pod in listed.get("items") or []}
    if settled(list(pods.values()), replicas):
        return
    stream = watch.Watch()
    for event in stream.stream(corev1.list_namespaced_pod, namespace, label_selector=selector,
                               resource_version=listed["metadata"]["resourceVersion"],
                               timeout_seconds=max(1, int(deadline - time.monotonic()))):
        pod = api.sanitize_for_serialization(event["object"])
        if event["type"] == "DELETED":
            pods.pop(pod["metadata"]["name"], None)
        else:
            pods[pod["metadata"]["name"]] = pod
        if settled(list(pods.values()), replicas):
            stream.stop()
            return
    name = deployment["metadata"]["name"]
    left = ", ".join(f"pod/{namespace}/{pod}" for pod in sorted(pods))
    raise TimeoutError(f"deployment/{namespace}/{name} rolled out, but its old pods were not "
                       f"gone in time ({left})")
