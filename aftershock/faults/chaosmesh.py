"""Chaos Mesh experiments (kind clusters): plain custom resources through the official client
with an explicit ApiClient — not the PyPI chaos-mesh client, which sends the wrong kind and
reloads the global configuration. Apply, wait for AllInjected, pause by annotation, delete
and wait for 404."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from aftershock.kube import door

GROUP, VERSION = "chaos-mesh.org", "v1alpha1"
PLURALS = {"PodChaos": "podchaos", "NetworkChaos": "networkchaos", "StressChaos": "stresschaos"}
PAUSE_ANNOTATION = "experiment.chaos-mesh.org/pause"


def _selector(namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"namespaces": [namespace], "labelSelectors": dict(labels)}


def _experiment(kind: str, name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind,
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pod_kill(name: str, namespace: str, labels: dict[str, str], mode: str = "one",
             grace_period: int = 0) -> dict[str, Any]:
    return _experiment("PodChaos", name, namespace, {
        "action": "pod-kill", "mode": mode, "gracePeriod": grace_period,
        "selector": _selector(namespace, labels)})


def pod_failure(name: str, namespace: str, labels: dict[str, str], duration: str,
                mode: str = "one") -> dict[str, Any]:
    return _experiment("PodChaos", name, namespace, {
        "action": "pod-failure", "mode": mode, "duration": duration,
        "selector": _selector(namespace, labels)})


def network_delay(name: str, namespace: str, labels: dict[str, str], latency: str,
                  jitter: str = "0ms", duration: str | None = None,
                  mode: str = "all") -> dict[str, Any]:
    spec: dict[str, Any] = {"action": "delay", "mode": mode,
                            "selector": _selector(namespace, labels),
                            "delay": {"latency": latency, "jitter": jitter}}
    if duration:
        spec["duration"] = duration
    return _experiment("NetworkChaos", name, namespace, spec)


def network_loss(name: str, namespace: str, labels: dict[str, str], percent: int,
                 mode: str = "all") -> dict[str, Any]:
    return _experiment("NetworkChaos", name, namespace, {
        "action": "loss", "mode": mode, "selector": _selector(namespace, labels),
        "loss": {"loss": str(percent)}})


def network_partition(name: str, namespace: str, labels: dict[str, str],
                      other: dict[str, str], direction: str = "both") -> dict[str, Any]:
    return _experiment("NetworkChaos", name, namespace, {
        "action": "partition", "mode": "all", "direction": direction,
        "selector": _selector(namespace, labels),
        "target": {"mode": "all", "selector": _selector(namespace, other)}})


def network_cut(name: str, namespace: str, labels: dict[str, str],
                duration: str | None = None) -> dict[str, Any]:
    """A partition with no target: every packet the selected pods send is dropped (their
    answers too), by iptables in each pod's network namespace."""
    spec: dict[str, Any] = {"action": "partition", "mode": "all", "direction": "to",
                            "selector": _selector(namespace, labels)}
    if duration:
        spec["duration"] = duration
    return _experiment("NetworkChaos", name, namespace, spec)


def stress(name: str, namespace: str, labels: dict[str, str], cpu_workers: int = 1,
           cpu_load: int = 100, memory: str | None = None, mode: str = "all") -> dict[str, Any]:
    stressors: dict[str, Any] = {"cpu": {"workers": cpu_workers, "load": cpu_load}}
    if memory:
        stressors["memory"] = {"workers": 1, "size": memory}
    return _experiment("StressChaos", name, namespace, {
        "mode": mode, "selector": _selector(namespace, labels), "stressors": stressors})


@dataclass
class Experiment:
    """One applied experiment; the fault protocol (apply / revert) plus Chaos Mesh's states."""

    api: client.ApiClient
    manifest: dict[str, Any]
    made: bool = False  # its revert runs even when its apply was refused: nothing to delete

    @property
    def kind(self) -> str:
        return self.manifest["kind"]

    @property
    def name(self) -> str:
        return self.manifest["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.manifest["metadata"]["namespace"]

    @property
    def description(self) -> str:
        return f"{self.kind.lower()}/{self.namespace}/{self.name}"

    @property
    def _objects(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    def _args(self) -> tuple[str, str, str, str]:
        return GROUP, VERSION, self.namespace, PLURALS[self.kind]

    def apply(self) -> None:
        door.call(self._objects.create_namespaced_custom_object, *self._args(), self.manifest)
        self.made = True

    def wait_injected(self, timeout: float = 60) -> None:
        """Until the AllInjected condition is True (watching the experiment)."""
        deadline = time.monotonic() + timeout
        stream = watch.Watch()
        for event in stream.stream(self._objects.list_namespaced_custom_object, *self._args(),
                                   field_selector=f"metadata.name={self.name}",
                                   timeout_seconds=max(1, int(timeout))):
            if _condition(event["object"], "AllInjected") == "True":
                stream.stop()
                return
            if time.monotonic() > deadline:
                break
        raise TimeoutError(f"{self.description} was not AllInjected within {timeout:.0f}s")

    def pause(self, paused: bool = True) -> None:
        door.call(
            self._objects.patch_namespaced_custom_object, *self._args(), self.name,
            {"metadata": {"annotations": {PAUSE_ANNOTATION: "true" if paused else None}}})

    def revert(self, timeout: float = 60) -> None:
        """Delete what it made, then wait (watching from the last version seen) until the API
        answers 404."""
        if not self.made:
            return
        door.delete(self._objects.delete_namespaced_custom_object, *self._args(), self.name)
        self.made = False
        try:
            current = self._objects.get_namespaced_custom_object(*self._args(), self.name)
        except ApiException as exc:
            if exc.status == 404:  # gone already
                return
            raise
        stream = watch.Watch()
        for event in stream.stream(self._objects.list_namespaced_custom_object, *self._args(),
                                   field_selector=f"metadata.name={self.name}",
                                   resource_version=current["metadata"]["resourceVersion"],
                                   timeout_seconds=int(timeout)):
            if event["type"] == "DELETED":
                stream.stop()
                return
        raise TimeoutError(f"{self.description} still exists {timeout:.0f}s after deletion")


def _condition(obj: dict[str, Any], kind: str) -> str | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition.get("status")
    return None
