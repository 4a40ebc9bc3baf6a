"""The nodes of an embedded cluster: created from the shape, joined later, reset between
scenarios. Each node's kubelet is one kwok process (``kwok-<node>``) owned by LocalCluster."""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.request

from aftershock.errors import ClusterError
from aftershock.shape import DEVICES_LABEL

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_MANAGED = "fake"
KUBELET_PREFIX = "kwok-"  # component name of the kwok process playing node N's kubelet
CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
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
        self._api("POST", "/api/v1/nodes", node_manifest(spec))
        self._spawn(f"{KUBELET_PREFIX}{name}")

    def reset_nodes(self) -> list[str]:
        """Bring the nodes back to the shape between scenarios: kubelets running, missing nodes
        re-created, extra nodes deleted, cordons and taints undone. Returns what was changed."""
        changed = []
        self.extra_nodes.clear()
        # Kubelets of joined nodes, also those an earlier session on this cluster recorded.
        for component in list(self.state.processes):
            node = component.removeprefix(KUBELET_PREFIX)
            if component.startswith(KUBELET_PREFIX) and node not in self.shape.node_names:
                self.stop_component(component)
                changed.append(f"stopped the kubelet of node/{node}, not in the shape")
        for component in CONTROL_PLANE:
            record = self.state.processes.get(component)
            if record is None or not record.alive():
                self.start_component(component)
                changed.append(f"restarted {component}")
        for node in self.shape.node_names:
            component = f"{KUBELET_PREFIX}{node}"
            record = self.state.processes.get(component)
            if record is None or not record.alive():
                self._spawn(component)
                changed.append(f"restarted the kubelet of node/{node}")
        present = {item["metadata"]["name"]: item
                   for item in self._api("GET", "/api/v1/nodes")["items"]}
        for spec in self.shape.nodes:
            wanted = node_manifest(spec)
            current = present.pop(spec.name, None)
            if current is None:
                self._api("POST", "/api/v1/nodes", wanted)
                changed.append(f"re-created node/{spec.name}")
                continue
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
        for node in self.shape.nodes:
            self._api("POST", "/api/v1/nodes", node_manifest(node))

    def _wait_nodes_ready(self) -> None:
        wanted = set(self.shape.node_names)
        began = time.monotonic()
        context = self._admin_tls()
        listing = self._api("GET", "/api/v1/nodes")
        ready = {item["metadata"]["name"] for item in listing["items"] if _node_ready(item)}
        version = listing["metadata"]["resourceVersion"]
        while not wanted <= ready:
            if time.monotonic() - began > START_TIMEOUT:
                first = f"{KUBELET_PREFIX}{sorted(wanted - ready)[0]}"
                raise self._fail(first, f"left nodes {sorted(wanted - ready)} NotReady")
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


def node_manifest(node) -> dict:
    """The Node object for one shape node: labels, taints, capacity; managed by kwok."""
    labels = {"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "type": "kwok", **node.labels}
    if node.devices:
        labels[DEVICES_LABEL] = str(node.devices)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels,
                     "annotations": {KWOK_ANNOTATION: KWOK_MANAGED,
                                     "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"taints": [taint.to_api() for taint in node.taints]} if node.taints else {},
        "status": {"capacity": dict(node.capacity), "allocatable": dict(node.capacity)},
    }


def _node_ready(node: dict) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
