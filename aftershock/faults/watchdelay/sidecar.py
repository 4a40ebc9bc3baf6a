"""Fault: the watches of an in-cluster implementation delayed by a WatchDelay sidecar in its pod.

Applying rolls its Deployment out with the proxy as a native sidecar (an init container that
keeps running, started before the implementation) and the implementation's container pointed
at it through KUBECONFIG; reverting rolls the original pod template back. As with the
out-of-cluster delay, the implementation restarts both times. The implementation must honour
KUBECONFIG (client-go's controller-runtime and the Python client do).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from aftershock import __version__
from aftershock.containers.images import python_base
from aftershock.errors import StepFailed
from aftershock.faults.anchors import Anchored, to_plain
from aftershock.faults.watchdelay.main import rules_to_json
from aftershock.faults.watchdelay.proxy import Rule
from aftershock.kube import door
from aftershock.kube.manifests import apply_manifest, wait_rolled_out
from aftershock.providers import kind_argv as cmd

IMAGE = f"aftershock/watchdelay:{__version__}"
CONTAINER = "aftershock-watchdelay"
PORT = 8001
CONFIGMAP = "aftershock-watchdelay"
VOLUME = "aftershock-watchdelay"
MOUNT = "/etc/aftershock/watchdelay"
DOCKERFILE = Path(__file__).resolve().parents[1] / "data" / "watchdelay.Dockerfile"
CONTEXT = Path(__file__).resolve().parents[2]  # the aftershock package: all the image needs


def build_command(engine: str) -> list[str]:
    return cmd.build_image(engine, IMAGE, DOCKERFILE, CONTEXT)


def proxy_kubeconfig(port: int = PORT) -> str:
    """Plain HTTP to the sidecar on the pod's loopback; it adds the pod's token upstream."""
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "proxy", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "proxy", "user": {}}],
        "contexts": [{"name": "proxy", "context": {"cluster": "proxy", "user": "proxy"}}],
        "current-context": "proxy"})


def configmap(port: int = PORT) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP},
            "data": {"kubeconfig": proxy_kubeconfig(port)}}


def sidecar(rules: list[Rule], port: int = PORT, image: str = IMAGE,
            anchors: list[Anchored] = ()) -> dict[str, Any]:
    anchored = ["--anchors", json.dumps([to_plain(f) for f in anchors])] if anchors else []
    return {
        "name": CONTAINER, "image": image, "imagePullPolicy": "IfNotPresent",
        "restartPolicy": "Always",  # a native sidecar: up before the implementation starts
        "args": ["--port", str(port), "--rules", rules_to_json(rules), *anchored],
        # it listens on the pod's loopback only (it lends the pod's token to whoever connects),
        # which a tcpSocket probe, sent to the pod's IP, cannot reach: ask from inside the pod
        "startupProbe": {"exec": {"command": [
            "python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 1)"]},
            "periodSeconds": 1, "failureThreshold": 30},
    }


def _target(pod: dict[str, Any], container: str | None) -> dict[str, Any]:
    containers = pod["containers"]
    if container is None:
        return containers[0]
    for candidate in containers:
        if candidate["name"] == container:
            return candidate
    raise ValueError(f"the pod template has no container '{container}'")


def with_sidecar(template: dict[str, Any], rules: list[Rule], container: str | None = None,
                 port: int = PORT, image: str = IMAGE,
                 anchors: list[Anchored] = ()) -> dict[str, Any]:
    """A copy of a pod template with the proxy sidecar, and the implementation's container
    (the named one, else the first) reading the proxy's kubeconfig."""
    changed = copy.deepcopy(template)
    pod = changed["spec"]
    target = _target(pod, container)
    target["env"] = [*(env for env in target.get("env") or [] if env["name"] != "KUBECONFIG"),
                     {"name": "KUBECONFIG", "value": f"{MOUNT}/kubeconfig"}]
    target["volumeMounts"] = [*(target.get("volumeMounts") or []),
                              {"name": VOLUME, "mountPath": MOUNT, "readOnly": True}]
    pod["volumes"] = [*(pod.get("volumes") or []),
                      {"name": VOLUME, "configMap": {"name": CONFIGMAP}}]
    pod["initContainers"] = [*(pod.get("initContainers") or []),
                             sidecar(rules, port, image, anchors)]
    return changed


@dataclass
class SidecarWatchDelay:
    implementation: Any  # an InClusterImplementation
    rules: list[Rule]
    original: dict[str, Any] | None = None

    @property
    def description(self) -> str:
        what = ", ".join(f"{r.resource or 'all'} +{r.delay:g}s" for r in self.rules)
        return f"watches of {self.implementation.profile.name} delayed ({what}) by a sidecar"

    def apply(self) -> None:
        implementation = self.implementation
        if implementation.spec.deployment is None:
            raise StepFailed(f"a watch delay on {implementation.profile.name} in the cluster "
                             "adds a sidecar to its Deployment; it runs as a DaemonSet")
        prepare(implementation)
        self.original = roll_out(implementation, lambda template: with_sidecar(
            template, self.rules, implementation.spec.container))

    def revert(self) -> None:
        implementation = self.implementation
        if self.original is None:
            return
        implementation.save_logs(container=CONTAINER, headers=False,
                                 into=implementation.workdir / "proxy"
                                 / "implementation-proxy.jsonl")
        roll_back(implementation, self.original)
        self.original = None
        unprepare(implementation)


def prepare(implementation: Any) -> None:
    """The sidecar's image built and loaded into the nodes, and its kubeconfig in the
    namespace."""
    engine = getattr(implementation.cluster, "engine", "docker")
    python_base.ensure_for(engine, DOCKERFILE)
    cmd.run(build_command(engine), timeout=1800)
    implementation.cluster.load_image(IMAGE)
    apply_manifest(implementation.api, configmap(), implementation.namespace)


def unprepare(implementation: Any) -> None:
    door.delete(client.CoreV1Api(implementation.api).delete_namespaced_config_map, CONFIGMAP,
                implementation.namespace)


RECREATE = {"type": "Recreate"}


def roll_out(implementation: Any, change, wait: bool = True) -> dict[str, Any]:
    """Replace the implementation's Deployment's pod template, rolled out by Recreate (the old
    pods go before the new start: a rolling update would run two of the implementation at
    once, both acting); wait (unless told not to) until the new pods run. Returns the
    template and strategy it had (``roll_back`` takes them)."""
    deployment = _deployment(implementation)
    spec = deployment["spec"]
    before = {"template": spec["template"], "strategy": spec.get("strategy")}
    spec["template"], spec["strategy"] = change(spec["template"]), RECREATE
    _replace(implementation, deployment, wait)
    return before


def roll_back(implementation: Any, before: dict[str, Any]) -> None:
    """The template as it was, rolled out by Recreate too; then the strategy it had (a change
    of strategy alone rolls nothing out)."""
    roll_out(implementation, lambda _template: before["template"])
    if before["strategy"] not in (None, RECREATE):
        deployment = _deployment(implementation)
        deployment["spec"]["strategy"] = before["strategy"]
        _replace(implementation, deployment, wait=False)


def _deployment(implementation: Any) -> dict[str, Any]:
    apps = client.AppsV1Api(implementation.api)
    return implementation.api.sanitize_for_serialization(apps.read_namespaced_deployment(
        implementation.spec.deployment, implementation.namespace))


def _replace(implementation: Any, deployment: dict[str, Any], wait: bool) -> None:
    apps = client.AppsV1Api(implementation.api)
    name, namespace = implementation.spec.deployment, implementation.namespace
    door.call(apps.replace_namespaced_deployment, name, namespace, deployment)
    if wait:
        wait_rolled_out(implementation.api, namespace, name, implementation.spec.ready_timeout)
