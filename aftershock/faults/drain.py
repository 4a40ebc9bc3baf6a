"""Drain a node with kubectl's rules and defaults (``kubectl drain NODE``).

Cordon first (and never uncordon). Then every pod on the node goes through kubectl's filters, in
its order, before anything is evicted: a pod terminating for longer than
``skip_wait_for_delete_timeout`` is skipped (0, the default, skips none: terminating pods are
evicted and waited for too); a DaemonSet pod is refused unless ``ignore_daemonsets`` (then
skipped), and one whose DaemonSet is gone is evicted only with ``force``; mirror pods are
skipped; a pod with emptyDir data is refused unless ``delete_emptydir_data``; a pod with no
controller is refused unless ``force``; finished pods always go. One refusal fails the whole
node before any eviction. The rest are evicted in parallel through the policy/v1 Eviction API,
retrying 429 (a PodDisruptionBudget says no) every 5 s, and waited for until gone: 404, or back
with a new UID. kubectl waits without limit by default; here ``timeout`` (120 s) bounds it.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from aftershock.kube import door
from aftershock.kube.api import cordon

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
RETRY_429 = 5.0


@dataclass(frozen=True)
class DrainOptions:
    ignore_daemonsets: bool = False  # kubectl --ignore-daemonsets
    delete_emptydir_data: bool = False  # kubectl --delete-emptydir-data
    force: bool = False  # kubectl --force: also pods that declare no controller
    grace_period: int | None = None  # None: each pod's own terminationGracePeriodSeconds
    skip_wait_for_delete_timeout: int = 0  # kubectl --skip-wait-for-delete-timeout
    timeout: float = 120.0


@dataclass
class DrainPlan:
    evict: list[Any] = field(default_factory=list)
    skipped: list[tuple[Any, str]] = field(default_factory=list)
    refused: list[tuple[Any, str]] = field(default_factory=list)


class DrainRefused(Exception):
    """kubectl's 'cannot delete …' errors: nothing was evicted."""


class DrainTimeout(Exception):
    pass


def _ref(pod) -> str:
    return f"pod/{pod.metadata.namespace}/{pod.metadata.name}"


def _controller(pod):
    return next((o for o in pod.metadata.owner_references or [] if o.controller), None)


def _finished(pod) -> bool:
    return pod.status is not None and pod.status.phase in ("Succeeded", "Failed")


def plan(pods: list, options: DrainOptions, daemonsets: set[tuple[str, str]] | None = None,
         now: float | None = None) -> DrainPlan:
    """Every pod of the node through kubectl's filters, in its order; the first that does not
    let a pod go decides (pure: ``daemonsets`` are the (namespace, name) that exist)."""
    result = DrainPlan()
    for pod in pods:
        verdict = _judge(pod, options, daemonsets or set(), time.time() if now is None else now)
        if verdict is None:
            result.evict.append(pod)
        elif verdict[0] == "skip":
            result.skipped.append((pod, verdict[1]))
        else:
            result.refused.append((pod, verdict[1]))
    return result


def _judge(pod, options: DrainOptions, daemonsets: set[tuple[str, str]],
           now: float) -> tuple[str, str] | None:
    """None: evict it; else ("skip" | "refuse", why)."""
    owner = _controller(pod)
    deleted = pod.metadata.deletion_timestamp
    if options.skip_wait_for_delete_timeout > 0 and deleted and \
            now - deleted.timestamp() > options.skip_wait_for_delete_timeout:
        return "skip", "terminating for longer than skip-wait-for-delete-timeout"
    if owner is not None and owner.kind == "DaemonSet" and not _finished(pod):
        if (pod.metadata.namespace, owner.name) not in daemonsets:
            if not options.force:
                return "refuse", f"is managed by daemonset {owner.name}, which is gone " \
                    "(allow with force)"
        elif not options.ignore_daemonsets:
            return "refuse", "is managed by a DaemonSet (allow with ignore-daemonsets)"
        else:
            return "skip", "managed by a DaemonSet"
    if MIRROR_ANNOTATION in (pod.metadata.annotations or {}):
        return "skip", "a mirror pod"
    if _finished(pod):
        return None
    if any(v.empty_dir is not None for v in pod.spec.volumes or []) and \
            not options.delete_emptydir_data:
        return "refuse", "has emptyDir data (allow with delete-emptydir-data)"
    if owner is None and not options.force:
        return "refuse", "declares no controller (allow with force)"
    return None


def _daemonsets(api: client.ApiClient, pods: list) -> set[tuple[str, str]]:
    """The DaemonSets the node's pods name that exist."""
    apps = client.AppsV1Api(api)
    found = set()
    for namespace, name in {(p.metadata.namespace, o.name) for p in pods
                            if (o := _controller(p)) is not None and o.kind == "DaemonSet"}:
        try:
            apps.read_namespaced_daemon_set(name, namespace)
            found.add((namespace, name))
        except ApiException as exc:
            if exc.status != 404:
                raise
    return found


def pods_on(api: client.ApiClient, node: str) -> list:
    corev1 = client.CoreV1Api(api)
    return corev1.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}").items


@dataclass
class DrainReport:
    node: str
    evicted: list[str]
    skipped: list[str]
    retries_429: int = 0
    seconds: float = 0.0


def drain_node(api: client.ApiClient, node: str, options: DrainOptions | None = None,
               log=None) -> DrainReport:
    options = options or DrainOptions()
    say = log or (lambda _message: None)
    began = time.monotonic()
    cordon(api, node)
    say(f"node/{node} cordoned")
    pods = pods_on(api, node)
    judged = plan(pods, options, _daemonsets(api, pods))
    if judged.refused:
        reasons = "; ".join(f"{_ref(pod)} {why}" for pod, why in judged.refused)
        raise DrainRefused(f"cannot drain node/{node}: {reasons}")
    for pod, why in judged.skipped:
        say(f"skipping {_ref(pod)}: {why}")
    deadline = began + options.timeout
    stop = threading.Event()
    retries = [0]
    with ThreadPoolExecutor(max(1, min(16, len(judged.evict)))) as pool:
        futures = [pool.submit(_evict, api, pod, options, deadline, stop, retries, say)
                   for pod in judged.evict]
        try:
            for future in futures:
                future.result()
        finally:
            stop.set()
    _wait_gone(api, node, {(p.metadata.namespace, p.metadata.name): p.metadata.uid
                           for p in judged.evict}, deadline)
    return DrainReport(node, [_ref(p) for p in judged.evict],
                       [_ref(p) for p, _ in judged.skipped], retries[0],
                       time.monotonic() - began)


def _evict(api: client.ApiClient, pod, options: DrainOptions, deadline: float,
           stop: threading.Event, retries: list[int], say) -> None:
    body = client.V1Eviction(metadata=client.V1ObjectMeta(
        name=pod.metadata.name, namespace=pod.metadata.namespace))
    if options.grace_period is not None:
        body.delete_options = client.V1DeleteOptions(grace_period_seconds=options.grace_period)
    corev1 = client.CoreV1Api(api)
    while True:
        try:
            door.call(corev1.create_namespaced_pod_eviction, pod.metadata.name,
                      pod.metadata.namespace, body)
            say(f"evicting {_ref(pod)}")
            return
        except ApiException as exc:
            if exc.status == 404:
                return
            if exc.status == 403 and "NamespaceTerminating" in (exc.body or ""):
                return  # its namespace is deleting it anyway: wait for it like kubectl does
            if exc.status != 429:
                raise
        retries[0] += 1
        if time.monotonic() + RETRY_429 > deadline:
            raise DrainTimeout(f"evicting {_ref(pod)}: a disruption budget still refuses after "
                               f"{retries[0]} tries")
        say(f"error when evicting {_ref(pod)} (will retry after {RETRY_429:.0f}s): "
            "429 Too Many Requests")
        if stop.wait(RETRY_429):
            return


def _wait_gone(api: client.ApiClient, node: str, waiting: dict, deadline: float) -> None:
    """Watch the node's pods until each evicted one is gone: 404, or back with a new UID."""
    corev1 = client.CoreV1Api(api)
    listing = corev1.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
    present = {(p.metadata.namespace, p.metadata.name): p.metadata.uid for p in listing.items}
    left = {key for key, uid in waiting.items() if present.get(key) == uid}
    version = listing.metadata.resource_version
    while left and time.monotonic() < deadline:
        stream = watch.Watch()
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
        raise DrainTimeout(f"drain of node/{node}: still present at the timeout: {names}")
