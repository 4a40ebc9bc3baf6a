"""The nodes of an embedded cluster: created from the shape, joined later, reset between
scenarios. One kwok process (component ``kwok``) plays the kubelet of every node.

kwok manages the nodes its label selector matches, and the selector is sent to the API server:
when a node's ``aftershock.io/kubelet`` label turns from ``running`` to ``stopped`` the server's
watch tells kwok the node is gone (a DELETED event with the node as it last matched), and kwok
stops renewing its lease, updating its status and running its pods, as when a real kubelet
dies; back to ``running``, it is an ADDED node, managed again. (kwok's annotation selector is
applied on the client side only: a node that stops matching it is managed on.) So a node costs
no process, and a node failure changes that node's label and nothing else."""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.request

from aftershock.errors import ClusterError
from aftershock.machine.shape import DEVICES_LABEL

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_MANAGED = "fake"
KUBELET = "kwok"  # the component playing every node's kubelet
LEGACY_PREFIX = "kwok-"  # one kwok per node, as clusters made before recorded them
KUBELET_LABEL = "aftershock.io/kubelet"
RUNNING, STOPPED = "running", "stopped"
CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", KUBELET)
START_TIMEOUT = 60.0


class Nodes:
    """Node handling for LocalCluster (which provides shape, state, _api, _spawn, ...)."""

    def add_node(self, name: str) -> None:
        """A node joins, shaped like the shape's last node: its Node is created and its kubelet
        starts. reset_nodes() removes it again."""
        if name in self.shape.node_names or name in self.extra_nodes:
            raise ClusterError(f"node/{name} is already part of cluster {self.name}")
        spec = dataclasses.replace(self.shape.nodes[-1], name=name)
        self.extra_nodes[name] = spec
        self._api("POST", "/api/v1/nodes", node_manifest(spec, self.node_index(name)))

    @property
    def node_count(self) -> int:
        return len(self.shape.nodes) + len(self.extra_nodes)

    def node_index(self, name: str) -> int:
        """A node's place among the shape's and the joined nodes: its IP and pod range."""
        names = [*self.shape.node_names, *self.extra_nodes]
        return names.index(name) + 1 if name in names else len(names) + 1

    def stop_kubelet(self, node: str) -> None:
        """The node's simulated kubelet dies: its lease stops, nothing else changes."""
        self._patch_node(node, {"metadata": {"labels": {KUBELET_LABEL: STOPPED}}})

    def start_kubelet(self, node: str) -> None:
        self._patch_node(node, {"metadata": {"labels": {KUBELET_LABEL: RUNNING}}})

    def reset_nodes(self) -> list[str]:
        """Bring the nodes back to the shape between scenarios: kubelets running, missing nodes
        re-created, extra nodes deleted, cordons and taints undone. Returns what was changed."""
        changed = []
        self.extra_nodes.clear()
        for component in [c for c in self.state.processes if c.startswith(LEGACY_PREFIX)]:
            self.stop_component(component)  # one kwok per node, from before: kwok plays them
        for component in CONTROL_PLANE:
            record = self.state.processes.get(component)
            if record is None or not record.alive():
                self.start_component(component)
                changed.append(f"restarted {component}")
        present = {item["metadata"]["name"]: item
                   for item in self._api("GET", "/api/v1/nodes")["items"]}
        for index, spec in enumerate(self.shape.nodes, start=1):
            wanted = node_manifest(spec, index)
            current = present.pop(spec.name, None)
            if current is None:
                self._api("POST", "/api/v1/nodes", wanted)
                changed.append(f"re-created node/{spec.name}")
                continue
            if (current["metadata"].get("labels") or {}).get(KUBELET_LABEL) != RUNNING:
                self.start_kubelet(spec.name)
                changed.append(f"restarted the kubelet of node/{spec.name}")
            taints = wanted["spec"].get("taints", [])
            drifted = (current["spec"].get("taints") or []) != taints
            if current["spec"].get("unschedulable") or drifted:
                self._patch_node(spec.name, {"spec": {"unschedulable": None, "taints": taints}})
                changed.append(f"reset node/{spec.name} to its shape")
        for extra in present:
            self._api("DELETE", f"/api/v1/nodes/{extra}")
            changed.append(f"deleted node/{extra}, not in the shape")
        if changed:
            self._wait_nodes_ready()
        return changed

    def _patch_node(self, name: str, patch: dict) -> None:
        request = urllib.request.Request(
            f"{self.server}/api/v1/nodes/{name}", method="PATCH", data=json.dumps(patch).encode(),
            headers={"Content-Type": "application/merge-patch+json"})
        with urllib.request.urlopen(request, context=self._admin_tls(), timeout=30):
            pass

    def _create_nodes(self) -> None:
        for index, node in enumerate(self.shape.nodes, start=1):
            self._api("POST", "/api/v1/nodes", node_manifest(node, index))

    def _wait_nodes_ready(self) -> None:
        wanted = set(self.shape.node_names)
        began = time.monotonic()
        context = self._admin_tls()
        listing = self._api("GET", "/api/v1/nodes")
        ready = {item["metadata"]["name"] for item in listing["items"] if _node_ready(item)}
        version = listing["metadata"]["resourceVersion"]
        while not wanted <= ready:
            if time.monotonic() - began > START_TIMEOUT:
                left = sorted(wanted - ready)
                raise self._fail(KUBELET, f"left {len(left)} nodes NotReady ({left[:5]})")
            url = (f"{self.server}/api/v1/nodes?watch=true&resourceVersion={version}"
                   "&allowWatchBookmarks=false&timeoutSeconds=30")
            with urllib.request.urlopen(url, context=context, timeout=START_TIMEOUT) as stream:
                for line in stream:
                    event = json.loads(line)
                    node = event["object"]
                    if event["type"] == "ERROR":
                        break
                    version = node["metadata"]["resourceVersion"]
                    name = node["metadata"]["name"]
                    if event["type"] != "DELETED" and _node_ready(node):
                        ready.add(name)
                    else:
                        ready.discard(name)
                    if wanted <= ready:
                        break
        self.timings["nodes-ready"] = time.monotonic() - began


def node_manifest(node, index: int) -> dict:
    """The Node object for the ``index``-th node (from 1): labels, taints, capacity, its own IP
    and pod range; its kubelet (kwok) running."""
    labels = {"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "type": "kwok", **node.labels,
              KUBELET_LABEL: RUNNING}
    if node.devices:
        labels[DEVICES_LABEL] = str(node.devices)
    spec = {"podCIDR": pod_cidr(index)}
    if node.taints:
        spec["taints"] = [taint.to_api() for taint in node.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels,
                     "annotations": {KWOK_ANNOTATION: KWOK_MANAGED,
                                     "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": spec,
        "status": {"capacity": dict(node.capacity), "allocatable": dict(node.capacity),
                   "addresses": [{"type": "InternalIP", "address": node_ip(index)},
                                 {"type": "Hostname", "address": node.name}]},
    }


def node_ip(index: int) -> str:
    return f"10.0.{index // 250}.{index % 250 + 1}"


def pod_cidr(index: int) -> str:
    return f"10.{128 + index // 256}.{index % 256}.0/24"  # 10.128.0.0/9: 32,768 nodes


def _node_ready(node: dict) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
