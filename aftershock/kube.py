"""Talking to a cluster with the official client: one explicit ApiClient per kubeconfig (never
the global default configuration), and waiting for a state by watching, never by polling."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client, config, watch


def api_client(kubeconfig: Path | str, context: str | None = None) -> client.ApiClient:
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), context=context,
                            client_configuration=configuration, persist_config=False)
    configuration.retries = 3
    return client.ApiClient(configuration)


def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


def apps(api: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api)


def pod_ref(pod: Any) -> str:
    return f"pod/{pod.metadata.namespace}/{pod.metadata.name}"


def wait_for_pods(api: client.ApiClient, namespace: str, label_selector: str,
                  predicate: Callable[[dict[str, Any]], bool], timeout: float,
                  ) -> tuple[bool, dict[str, Any]]:
    """Watch the pods matching ``label_selector`` until ``predicate(pods by name)`` holds.

    Returns (held, last state). Evaluated after the initial list and after every event.
    """
    corev1 = core(api)
    listing = corev1.list_namespaced_pod(namespace, label_selector=label_selector)
    pods = {pod.metadata.name: pod for pod in listing.items}
    if predicate(pods):
        return True, pods
    version = listing.metadata.resource_version
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        stream = watch.Watch()
        for event in stream.stream(corev1.list_namespaced_pod, namespace,
                                   label_selector=label_selector, resource_version=version,
                                   timeout_seconds=max(1, int(remaining) + 1),
                                   _request_timeout=remaining + 5):
            pod = event["object"]
            version = pod.metadata.resource_version
            if event["type"] == "DELETED":
                pods.pop(pod.metadata.name, None)
            else:
                pods[pod.metadata.name] = pod
            if predicate(pods):
                stream.stop()
                return True, pods
            if time.monotonic() > deadline:
                stream.stop()
                break
    return False, pods


def wait_for_service_account(api: client.ApiClient, namespace: str, name: str = "default",
                             timeout: float = 30) -> None:
    """Pods cannot be created in a namespace until its ServiceAccount exists."""
    corev1 = core(api)
    only = f"metadata.name={name}"
    listing = corev1.list_namespaced_service_account(namespace, field_selector=only)
    if listing.items:
        return
    stream = watch.Watch()
    for _event in stream.stream(corev1.list_namespaced_service_account, namespace,
                                field_selector=only,
                                resource_version=listing.metadata.resource_version,
                                timeout_seconds=int(timeout)):
        stream.stop()
        return
    raise TimeoutError(f"serviceaccount/{namespace}/{name} did not appear within {timeout:.0f}s")


def delete_namespace_and_wait(api: client.ApiClient, namespace: str, timeout: float = 60) -> None:
    """Delete a namespace and wait (by watching) until it is gone, so its pods no longer hold
    node capacity when the next scenario starts."""
    from kubernetes.client.exceptions import ApiException

    corev1 = core(api)
    only = f"metadata.name={namespace}"
    try:
        corev1.delete_namespace(namespace)
    except ApiException as exc:
        if exc.status == 404:
            return
        raise
    listing = corev1.list_namespace(field_selector=only)
    if not listing.items:
        return
    stream = watch.Watch()
    for event in stream.stream(corev1.list_namespace, field_selector=only,
                               resource_version=listing.metadata.resource_version,
                               timeout_seconds=int(timeout)):
        if event["type"] == "DELETED":
            stream.stop()
            return
    raise TimeoutError(f"namespace/{namespace} was not gone within {timeout:.0f}s")


def batch(api: client.ApiClient) -> client.BatchV1Api:
    return client.BatchV1Api(api)
