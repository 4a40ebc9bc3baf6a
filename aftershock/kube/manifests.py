"""Applying manifests and waiting for what they start, as kubectl does: ``apply_manifest``
(a CRD is replaced by a newer version of itself and waited on until Established),
``wait_collector_knows`` (until the garbage collector knows the new kinds) and
``wait_rolled_out`` (kubectl rollout status, then the old pods gone). Every write goes through
the door (``aftershock.kube.writes``)."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from typing import Any

from kubernetes import client, watch
from kubernetes.dynamic import DynamicClient

from aftershock.kube import api as kube
from aftershock.kube import door, writes

PROFILE_LABEL = "aftershock.io/profile"  # on a CRD: the profile whose manifests installed it


def apply_manifest(api: client.ApiClient, doc: dict[str, Any], namespace: str,
                   profile: str | None = None) -> bool:
    """Create ``doc`` (a CRD: or replace it with this version of itself, labelled with the
    ``profile`` that installs it). True when it made a new kind, which the garbage collector
    may not know yet (see ``wait_collector_knows``)."""
    if doc.get("kind") == "CustomResourceDefinition":
        extensions = client.ApiextensionsV1Api(api)
        doc = _hashed(_labelled(doc, profile))
        created = True
        try:
            door.call(extensions.create_custom_resource_definition, doc)
        except client.exceptions.ApiException as exc:
            if exc.status != 409:
                raise
            created = False
            _replace_crd(extensions, doc)
        _wait_established(extensions, doc["metadata"]["name"])
        return created
    resource = DynamicClient(api).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    try:
        writes.create(resource, doc, namespace if resource.namespaced else None)
    except client.exceptions.ApiException as exc:
        if exc.status != 409:  # cluster-scoped parts stay installed from an earlier scenario
            raise
    return False


def put(api: client.ApiClient, doc: dict[str, Any], namespace: str) -> None:
    """Create ``doc``, in place of any object of its name (a webhook configuration an earlier
    start left pointing at another port)."""
    resource, scope = _resource(api, doc, namespace)
    try:
        writes.create(resource, doc, scope)
    except client.exceptions.ApiException as exc:
        if exc.status != 409:
            raise
        remove_if_present(api, doc, namespace)
        writes.create(resource, doc, scope)


def remove_if_present(api: client.ApiClient, doc: dict[str, Any], namespace: str) -> None:
    """Delete the object ``doc`` names; one already gone is no error (what an implementation
    was given when it started, a webhook configuration say, it may remove itself as it
    stops)."""
    resource, scope = _resource(api, doc, namespace)
    writes.delete(resource, doc["metadata"]["name"], scope, missing_ok=True)


def _resource(api: client.ApiClient, doc: dict[str, Any], namespace: str):
    resource = DynamicClient(api).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    return resource, namespace if resource.namespaced else None


SPEC_HASH = "aftershock.io/spec-hash"


def _labelled(doc: dict[str, Any], profile: str | None) -> dict[str, Any]:
    if profile is None:
        return doc
    meta = doc.get("metadata") or {}
    return {**doc, "metadata": {**meta, "labels": {**(meta.get("labels") or {}),
                                                   PROFILE_LABEL: profile}}}


def crd_names(docs: list[Any]) -> set[str]:
    return {(d.get("metadata") or {}).get("name", "") for d in docs
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"}


def retire_other_profiles(api: client.ApiClient, profile: str, keep: set[str],
                          timeout: float = 120) -> list[str]:
    """Each profile of a run starts from a cluster with no CRDs an earlier profile installed:
    delete every CRD labelled with another profile (but those named in ``keep``, which this
    profile's own replace), and wait until they are gone. Another implementation's CRD can
    hold a short name this one's needs, and its CRD would never be Established."""
    extensions = client.ApiextensionsV1Api(api)
    found = [crd.metadata.name for crd in extensions.list_custom_resource_definition(
        label_selector=f"{PROFILE_LABEL},{PROFILE_LABEL}!={profile}").items
        if crd.metadata.name not in keep]
    for name in found:  # missing_ok: another run's profile may be retiring it too
        door.delete(extensions.delete_custom_resource_definition, name, missing_ok=True)
    deadline = time.monotonic() + timeout
    lister = _cluster_scoped(extensions.list_custom_resource_definition)
    for name in found:
        left = max(1.0, deadline - time.monotonic())
        if not kube.wait_named(lister, "", name, gone=True, timeout=left):
            raise SetupFailed(f"customresourcedefinition/{name}, installed by an earlier "
                              f"profile, was not gone {timeout:.0f}s after it was deleted "
                              f"(profile {profile} starts from a cluster without it)")
    return found


def _cluster_scoped(lister: Any) -> Any:
    """A cluster-scoped list call in the form ``kube.wait_named`` calls (namespace first)."""
    @functools.wraps(lister)
    def listed(_namespace: str, **kwargs: Any) -> Any:
        return lister(**kwargs)
    return listed


class SetupFailed(RuntimeError):
    """A profile's set-up could not be completed (the cause named): an error, never a
    verdict on the implementation."""


def _hashed(doc: dict[str, Any]) -> dict[str, Any]:
    """The CRD, annotated with a hash of its spec (to tell a same one from another version)."""
    digest = hashlib.sha256(json.dumps(doc.get("spec"), sort_keys=True).encode()).hexdigest()
    meta = doc.get("metadata") or {}
    return {**doc, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}),
                                                         SPEC_HASH: digest[:16]}}}


def _replace_crd(extensions: client.ApiextensionsV1Api, doc: dict[str, Any]) -> None:
    """A CRD outlives a scenario: another version of the implementation (another profile in
    the same run) brings its own, which replaces the one installed (the same kind)."""
    name = doc["metadata"]["name"]
    current = extensions.read_custom_resource_definition(name)
    wanted = doc["metadata"]["annotations"][SPEC_HASH]
    if (current.metadata.annotations or {}).get(SPEC_HASH) == wanted:
        return
    doc["metadata"]["resourceVersion"] = current.metadata.resource_version
    door.call(extensions.replace_custom_resource_definition, name, doc)


PROBE_GROUP = "gc.aftershock.io"


def wait_collector_knows(api: client.ApiClient, namespace: str, timeout: float = 90) -> None:
    """Until kube-controller-manager's garbage collector knows every kind installed so far.

    It learns new kinds from discovery every 30 s, and until then deleting an owner of a new
    kind leaves its dependents behind (Grove's gang termination deletes PodCliques and counts
    on the collector for their pods). Every kind served now is known once it knows a kind made
    after them: a probe kind of our own, an object of it, and a ConfigMap that object owns,
    deleted with its owner once the collector is in step. The probe kind is removed after."""
    extensions = client.ApiextensionsV1Api(api)
    plural = f"p{time.time_ns():x}"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"{plural}.{PROBE_GROUP}"},
           "spec": {"group": PROBE_GROUP, "scope": "Namespaced",
                    "names": {"plural": plural, "kind": plural.capitalize()},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}]}}
    door.call(extensions.create_custom_resource_definition, crd)
    try:
        _wait_established(extensions, crd["metadata"]["name"])
        _owner_goes_with_dependent(api, namespace, plural, timeout)
    finally:
        door.delete(extensions.delete_custom_resource_definition, crd["metadata"]["name"])


def _owner_goes_with_dependent(api: client.ApiClient, namespace: str, plural: str,
                               timeout: float) -> None:
    kind = plural.capitalize()
    owner = _resource(api, {"apiVersion": f"{PROBE_GROUP}/v1", "kind": kind}, namespace)[0]
    made = writes.create(owner, {"apiVersion": f"{PROBE_GROUP}/v1", "kind": kind,
                                 "metadata": {"name": "owner"}}, namespace)
    corev1 = kube.core(api)
    name = f"{plural}-dependent"
    door.call(corev1.create_namespaced_config_map, namespace, {"metadata": {
        "name": name, "ownerReferences": [{"apiVersion": f"{PROBE_GROUP}/v1", "kind": kind,
                                           "name": "owner", "uid": made["metadata"]["uid"]}]}})
    writes.delete(owner, "owner", namespace)
    if kube.wait_named(corev1.list_namespaced_config_map, namespace, name, gone=True,
                       timeout=timeout):
        return
    # the collector may have caught up since the wait ran out
    door.delete(corev1.delete_namespaced_config_map, name, namespace, missing_ok=True)
    raise RuntimeError(f"the garbage collector did not learn a new kind within {timeout:.0f}s "
                       "(an owner's dependents would be left behind)")


def _wait_established(extensions: client.ApiextensionsV1Api, name: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        crd = extensions.read_custom_resource_definition(name)
        if any(c.type == "Established" and c.status == "True"
               for c in (crd.status.conditions or [])):
            return
        time.sleep(0.05)  # establishment is a one-off set-up step
    raise SetupFailed(f"customresourcedefinition/{name} not Established within 30s: "
                      f"{not_established(crd, extensions.list_custom_resource_definition().items)}")


IN_USE = re.compile(r'"([^"]+)" is already in use')


def not_established(crd: Any, others: list[Any]) -> str:
    """What blocked a CRD, from its conditions: the names not accepted and which CRD holds
    them (a short name another implementation's CRD still has), or its conditions as they
    are."""
    conditions = [c for c in (crd.status.conditions or []) if c.status != "True"]
    for condition in conditions:
        if condition.type != "NamesAccepted":
            continue
        held = []
        for name in IN_USE.findall(condition.message or ""):
            holders = [o.metadata.name for o in others if o.metadata.name != crd.metadata.name
                       and name in _accepted(o)]
            held.append(f'"{name}" held by ' + (", ".join(
                f"customresourcedefinition/{h}" for h in holders) or "another kind"))
        return (f"its names were not accepted ({condition.reason}: {condition.message})"
                + (f": {'; '.join(held)}" if held else ""))
    shown = "; ".join(f"{c.type} {c.status} ({c.reason}: {c.message})" for c in conditions)
    return shown or "no condition said why"


def _accepted(crd: Any) -> set[str]:
    names = getattr(crd.status, "accepted_names", None) or crd.spec.names
    return {n for n in (names.plural, names.singular, names.kind,
                        *(names.short_names or ())) if n}


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


def daemonset_rolled_out(daemonset: dict[str, Any]) -> bool:
    """A pod of the current template available on every node it is meant for (kubectl
    rollout status), none on a node it is not."""
    status = daemonset.get("status") or {}
    generation = (daemonset.get("metadata") or {}).get("generation", 0)
    wanted = status.get("desiredNumberScheduled", 0)
    return (status.get("observedGeneration", 0) >= generation
            and status.get("updatedNumberScheduled", 0) == wanted
            and status.get("numberAvailable", 0) == wanted
            and status.get("currentNumberScheduled", 0) == wanted
            and not status.get("numberMisscheduled", 0))


ROLLOUTS = {"Deployment": ("list_namespaced_deployment", rolled_out,
                           lambda d: d["spec"].get("replicas", 1)),
            "DaemonSet": ("list_namespaced_daemon_set", daemonset_rolled_out,
                          lambda d: d["status"].get("desiredNumberScheduled", 0))}


def wait_rolled_out(api: client.ApiClient, namespace: str, name: str, timeout: float,
                    kind: str = "Deployment") -> None:
    """Until the Deployment (or DaemonSet) is rolled out (kubectl rollout status) and its old
    pods are gone."""
    deadline = time.monotonic() + timeout
    lister, done, wanted = ROLLOUTS[kind]
    stream = watch.Watch()
    for event in stream.stream(getattr(client.AppsV1Api(api), lister), namespace,
                               field_selector=f"metadata.name={name}",
                               timeout_seconds=max(1, int(timeout))):
        workload = api.sanitize_for_serialization(event["object"])
        if done(workload):
            stream.stop()
            _wait_pods_settled(api, namespace, f"{kind.lower()}/{namespace}/{name}", workload,
                               wanted(workload), deadline)
            return
    raise TimeoutError(f"{kind.lower()}/{namespace}/{name} not rolled out within "
                       f"{timeout:.0f}s")


def _wait_pods_settled(api: client.ApiClient, namespace: str, shown: str,
                       workload: dict[str, Any], replicas: int, deadline: float) -> None:
    corev1 = client.CoreV1Api(api)
    selector = ",".join(f"{key}={value}" for key, value in
                        workload["spec"]["selector"].get("matchLabels", {}).items())
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
    left = ", ".join(f"pod/{namespace}/{pod}" for pod in sorted(pods))
    raise TimeoutError(f"{shown} rolled out, but its old pods were not gone in time ({left})")


def wait_scaled_down(api: client.ApiClient, namespace: str, name: str, pods: list[str],
                     timeout: float) -> None:
    """Until the ReplicaSets that own ``pods`` of Deployment ``name`` are scaled to 0 (a
    Recreate rollout's first move): then deleting the pods makes no replacement."""
    corev1, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    owners = set()
    for pod in pods:
        with kube.suppress_not_found():
            for ref in corev1.read_namespaced_pod(pod, namespace).metadata.owner_references or []:
                if ref.kind == "ReplicaSet":
                    owners.add(ref.name)
    if not owners:
        return
    listed = apps.list_namespaced_replica_set(namespace)
    left = {rs.metadata.name for rs in listed.items
            if rs.metadata.name in owners and (rs.spec.replicas or 0) > 0}
    if not left:
        return
    stream = watch.Watch()
    for event in stream.stream(apps.list_namespaced_replica_set, namespace,
                               resource_version=listed.metadata.resource_version,
                               timeout_seconds=max(1, int(timeout))):
        rs = event["object"]
        if event["type"] == "DELETED" or (rs.spec.replicas or 0) == 0:
            left.discard(rs.metadata.name)
        if not left:
            stream.stop()
            return
    raise TimeoutError(f"deployment/{namespace}/{name}: its old ReplicaSets "
                       f"({', '.join(sorted(left))}) not scaled down within {timeout:.0f}s")
