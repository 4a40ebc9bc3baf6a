"""Drain a node: cordon it, evict its pods through the Eviction API, wait until they are gone.

Minimal form: DaemonSet and mirror pods are skipped and every other pod is evicted; the
faults issue adds kubectl's complete rules (emptyDir/unmanaged refusal, 429 retries, timeout).
"""

from __future__ import annotations

import time

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from aftershock.faults.nodes import cordon

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def _skipped(pod: client.V1Pod) -> bool:
    owners = pod.metadata.owner_references or []
    if any(owner.kind == "DaemonSet" for owner in owners):
        return True
    return MIRROR_ANNOTATION in (pod.metadata.annotations or {})


def pods_to_evict(api: client.ApiClient, node: str) -> list[client.V1Pod]:
    pods = client.CoreV1Api(api).list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
    return [pod for pod in pods.items if not _skipped(pod) and not pod.metadata.deletion_timestamp]


def evict(api: client.ApiClient, pod: client.V1Pod) -> None:
    """Ask for an eviction. In a terminating namespace the API refuses (403 NamespaceTerminating)
    but the pod is going anyway: as kubectl does, wait for it instead."""
    body = client.V1Eviction(metadata=client.V1ObjectMeta(
        name=pod.metadata.name, namespace=pod.metadata.namespace))
    try:
        client.CoreV1Api(api).create_namespaced_pod_eviction(
            pod.metadata.name, pod.metadata.namespace, body)
    except ApiException as exc:
        if exc.status == 404:
            return
        if not (exc.status == 403 and "NamespaceTerminating" in (exc.body or "")):
            raise


def drain_node(api: client.ApiClient, node: str, timeout: float = 60) -> list[str]:
    """Cordon, evict, and wait until each evicted pod is gone (404 or a new UID)."""
    cordon(api, node)
    victims = pods_to_evict(api, node)
    for pod in victims:
        evict(api, pod)
    waiting = {(pod.metadata.namespace, pod.metadata.name): pod.metadata.uid for pod in victims}
    _wait_gone(api, node, waiting, timeout)
    return [f"pod/{ns}/{name}" for ns, name in waiting]


def _wait_gone(api: client.ApiClient, node: str, waiting: dict, timeout: float) -> None:
    corev1 = client.CoreV1Api(api)
    deadline = time.monotonic() + timeout
    listing = corev1.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
    present = {(p.metadata.namespace, p.metadata.name): p.metadata.uid for p in listing.items}
    left = {key for key, uid in waiting.items() if present.get(key) == uid}
    stream = watch.Watch()
    version = listing.metadata.resource_version
    while left and time.monotonic() < deadline:
        for event in stream.stream(corev1.list_pod_for_all_namespaces,
                                   field_selector=f"spec.nodeName={node}",
                                   resource_version=version,
                                   timeout_seconds=max(1, int(deadline - time.monotonic()))):
            pod = event["object"]
            version = pod.metadata.resource_version
            key = (pod.metadata.namespace, pod.metadata.name)
            if event["type"] == "DELETED" or waiting.get(key) != pod.metadata.uid:
                left.discard(key)
            if not left:
                stream.stop()
                break
    if left:
        names = ", ".join(f"pod/{ns}/{name}" for ns, name in sorted(left))
        raise TimeoutError(f"drain of node/{node}: still present after {timeout:.0f}s: {names}")
