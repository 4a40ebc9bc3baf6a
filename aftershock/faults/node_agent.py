"""Faults on what runs on a node, below the API: the node reboots (its disk kept, its tmpfs
gone), its kubelet restarts or stops for a while, or a driver's node agent (its DaemonSet's
pod there) is stopped and started again. Each needs real kubelets (capability node_agent:
kind's)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client, watch

from aftershock.kube import door
from aftershock.kube.api import set_taint, suppress_not_found

AGENT_TAINT = {"key": "aftershock.io/node-agent", "value": "stopped", "effect": "NoExecute"}
AGENT_TIMEOUT = 120  # seconds for the agent's pod to leave, or to be Ready again


class FaultRefused(Exception):
    """The fault cannot be applied as it says (nothing was changed)."""


@dataclass
class NodeReboot:
    """The node restarts: everything on it shuts down, then it boots with its disk as it was,
    its tmpfs (/run, where many drivers keep their CDI specs) empty, and its kubelet starting
    again from its checkpoints. Done at once; ``after`` runs once the node is back (a read loop
    on it starts again)."""

    cluster: Any
    node: str
    after: Callable[[], None] | None = None

    @property
    def description(self) -> str:
        return f"node/{self.node} rebooted"

    def apply(self) -> None:
        self.cluster.reboot_node(self.node)
        if self.after is not None:
            self.after()

    def revert(self) -> None:
        if not self.cluster.node_running(self.node):  # a reboot that did not finish
            self.cluster.start_kubelet(self.node)


@dataclass
class KubeletRestart:
    """The node's kubelet restarts (systemd restarts its unit); containers keep running, and it
    starts again from its checkpoints, as after a kubelet upgrade."""

    cluster: Any
    node: str

    @property
    def description(self) -> str:
        return f"the kubelet of node/{self.node} restarted"

    def apply(self) -> None:
        self.cluster.restart_kubelet(self.node)

    def revert(self) -> None:  # done once applied: a restarted kubelet is simply running
        return None


@dataclass
class KubeletStopped:
    """The node's kubelet stops (systemd stops its unit) and stays stopped until reverted; the
    node's containers run on, and nothing on it answers the API server: what is deleted
    meanwhile the kubelet learns only when it starts again, from its checkpoints."""

    cluster: Any
    node: str

    @property
    def description(self) -> str:
        return f"the kubelet of node/{self.node} stopped"

    def apply(self) -> None:
        self.cluster.stop_kubelet_unit(self.node)

    def revert(self) -> None:
        if not self.cluster.kubelet_active(self.node):
            self.cluster.start_kubelet_unit(self.node)


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, str]) -> bool:
    """Whether a pod with ``tolerations`` (the API's dicts) tolerates ``taint``."""
    for toleration in tolerations:
        effect = toleration.get("effect")
        if effect and effect != taint["effect"]:
            continue
        key, operator = toleration.get("key"), toleration.get("operator") or "Equal"
        if not key and operator == "Exists":
            return True
        if key == taint["key"] and (operator == "Exists"
                                    or toleration.get("value") == taint["value"]):
            return True
    return False


@dataclass
class AgentStopped:
    """A DaemonSet's pod leaves one node and is kept off it: the node gets a NoExecute taint
    the DaemonSet does not tolerate (``AGENT_TAINT``), so the kubelet stops it and the
    DaemonSet controller makes none there; the rest of the DaemonSet runs on. A workload pod
    that should stay on the node tolerates the taint. Reverting removes the taint and waits
    until the DaemonSet's pod there is Ready again."""

    api: Any
    node: str
    namespace: str
    daemonset: str

    @property
    def description(self) -> str:
        return f"daemonset/{self.namespace}/{self.daemonset} stopped on node/{self.node}"

    def apply(self) -> None:
        spec = client.AppsV1Api(self.api).read_namespaced_daemon_set(
            self.daemonset, self.namespace).spec
        tolerations = self.api.sanitize_for_serialization(spec.template.spec.tolerations or [])
        if tolerates(tolerations, AGENT_TAINT):
            raise FaultRefused(f"daemonset/{self.namespace}/{self.daemonset} tolerates the "
                               f"taint {AGENT_TAINT['key']}:{AGENT_TAINT['effect']}: its pod "
                               f"cannot be kept off node/{self.node} this way")
        labels = ",".join(f"{k}={v}" for k, v in spec.selector.match_labels.items())
        set_taint(self.api, self.node, AGENT_TAINT, True)
        if not self._wait(labels, lambda pods: not pods):
            raise TimeoutError(f"the pod of daemonset/{self.namespace}/{self.daemonset} on "
                               f"node/{self.node} was still there {AGENT_TIMEOUT}s after its "
                               "taint")

    def revert(self) -> None:
        with suppress_not_found():
            set_taint(self.api, self.node, AGENT_TAINT, False)
            labels = ",".join(f"{k}={v}" for k, v in client.AppsV1Api(
                self.api).read_namespaced_daemon_set(self.daemonset, self.namespace)
                .spec.selector.match_labels.items())
            if not self._wait(labels, lambda pods: any(map(_ready, pods.values()))):
                raise TimeoutError(f"daemonset/{self.namespace}/{self.daemonset} had no Ready "
                                   f"pod on node/{self.node} {AGENT_TIMEOUT}s after its taint "
                                   "was removed")

    def _wait(self, labels: str, done: Callable[[dict[str, Any]], bool]) -> bool:
        """Watch the DaemonSet's pods on the node until ``done(name -> pod)``."""
        core = client.CoreV1Api(self.api)
        where = {"label_selector": labels, "field_selector": f"spec.nodeName={self.node}"}
        listing = core.list_namespaced_pod(self.namespace, **where)
        pods = {p.metadata.name: p for p in listing.items}
        if done(pods):
            return True
        stream = watch.Watch()
        for event in stream.stream(core.list_namespaced_pod, self.namespace, **where,
                                   resource_version=listing.metadata.resource_version,
                                   timeout_seconds=AGENT_TIMEOUT):
            pod = event["object"]
            if event["type"] == "DELETED":
                pods.pop(pod.metadata.name, None)
            else:
                pods[pod.metadata.name] = pod
            if done(pods):
                stream.stop()
                return True
        return False


def _ready(pod: Any) -> bool:
    return not pod.metadata.deletion_timestamp and any(
        c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


ROLLOUT_ANNOTATION = "aftershock.io/rollout"  # on the pod template: what makes it a new revision
ROLLOUTS = {  # how a DaemonSet replaces a node's pod, one node at a time
    "surge": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    "recreate": {"type": "RollingUpdate",
                 "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
}
ROLLOUT_SAID = {"surge": "each node's new pod Ready before its old one stops",
                "recreate": "each node's old pod deleted before its new one is made"}


@dataclass
class DaemonSetRollout:
    """A DaemonSet rolls out a new revision of its pods, as an upgrade of a driver's plugin
    does: its pod template changes (an annotation, so the image stays the one under test) and
    its controller replaces the pods node by node, with surge (``how`` "surge") or by deleting
    each old pod before it makes the new one ("recreate"). Applied at once; ``wait`` returns
    once every node runs a Ready pod of the new revision and no old pod is left. Not reverted:
    the new revision is the plugin from then on."""

    api: Any
    namespace: str
    daemonset: str
    how: str
    revision: str = "1"
    # the new revision's command of one container (name, argv), else the same pods again
    command: tuple[str, tuple[str, ...]] | None = None

    @property
    def description(self) -> str:
        return (f"daemonset/{self.namespace}/{self.daemonset} rolled out a new revision "
                f"({ROLLOUT_SAID[self.how]})")

    def apply(self) -> None:
        template: dict[str, Any] = {"metadata": {"annotations": {
            ROLLOUT_ANNOTATION: self.revision}}}
        if self.command is not None:
            container, argv = self.command
            template["spec"] = {"containers": [{"name": container, "command": list(argv)}]}
        door.call(client.AppsV1Api(self.api).patch_namespaced_daemon_set, self.daemonset,
                  self.namespace, body={"spec": {"updateStrategy": ROLLOUTS[self.how],
                                                 "template": template}})

    def revert(self) -> None:
        return None

    def wait(self, timeout: float) -> bool:
        """Whether the rollout finished within ``timeout`` seconds: the DaemonSet's status
        says every node has an available pod of the new revision, and no other pod of it is
        left (an old one still stopping, with surge)."""
        apps, core = client.AppsV1Api(self.api), client.CoreV1Api(self.api)
        where = {"field_selector": f"metadata.name={self.daemonset}"}
        listing = apps.list_namespaced_daemon_set(self.namespace, **where)
        done = any(map(_rolled_out, listing.items))
        if not done:
            stream = watch.Watch()
            for event in stream.stream(apps.list_namespaced_daemon_set, self.namespace,
                                       **where, resource_version=listing.metadata
                                       .resource_version, timeout_seconds=int(timeout)):
                if _rolled_out(event["object"]):
                    stream.stop()
                    done = True
        if not done:
            return False
        spec = apps.read_namespaced_daemon_set(self.daemonset, self.namespace)
        labels = ",".join(f"{k}={v}" for k, v in spec.spec.selector.match_labels.items())
        wanted = spec.status.desired_number_scheduled or 0
        listing = core.list_namespaced_pod(self.namespace, label_selector=labels)
        pods = {p.metadata.name for p in listing.items}
        if len(pods) <= wanted:
            return True
        stream = watch.Watch()
        for event in stream.stream(core.list_namespaced_pod, self.namespace,
                                   label_selector=labels, timeout_seconds=int(timeout),
                                   resource_version=listing.metadata.resource_version):
            if event["type"] == "DELETED":
                pods.discard(event["object"].metadata.name)
            else:
                pods.add(event["object"].metadata.name)
            if len(pods) <= wanted:
                stream.stop()
                return True
        return False


def _rolled_out(daemonset: Any) -> bool:
    """As `kubectl rollout status` reads a DaemonSet: its controller saw the new template, and
    every node it wants a pod on has an available pod of it."""
    status, wanted = daemonset.status, daemonset.status.desired_number_scheduled or 0
    return ((status.observed_generation or 0) >= (daemonset.metadata.generation or 0)
            and (status.updated_number_scheduled or 0) >= wanted
            and (status.number_available or 0) >= wanted and wanted > 0)
