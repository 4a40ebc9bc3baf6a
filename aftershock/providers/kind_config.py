"""The kind cluster config, generated from the same cluster shape the local provider uses.

One control-plane node plus one worker per shape node. Each worker's Kubernetes node takes the
shape's name (kubeadm's ``nodeRegistration.name``), so features speak of ``node-1`` on kind as
they do locally, and its labels and taints are registered by its own kubelet. Capacity is what
the machine has: kind cannot shape it. The apiserver writes the audit log (same policy as the
local provider) into a host directory mounted into the control-plane container.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from aftershock.containers.images import registry
from aftershock.errors import UserError
from aftershock.machine.shape import DEVICES_LABEL, NodeSpec, Shape
from aftershock.providers import gates
from aftershock.providers.local import NODE_LEASE_SECONDS, NODE_MONITOR_GRACE, scheduler_flags

API_VERSION = "kind.x-k8s.io/v1alpha4"
NODE_IMAGE = "kindest/node"
POLICY_IN_NODE = "/etc/kubernetes/aftershock/audit-policy.yaml"
AUDIT_DIR_IN_NODE = "/var/log/kubernetes/aftershock"
NODE_DATA_IN_NODE = "/var/lib/aftershock/node-data"  # {node_data}/<node> on the host
AUDIT_LOG_IN_NODE = f"{AUDIT_DIR_IN_NODE}/audit.log"

# Labels in the kubernetes.io / k8s.io namespaces a kubelet may give its own node; with any
# other such label in --node-labels the kubelet refuses to start.
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/instance-type", "kubernetes.io/os",
    "kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch", "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region", "failure-domain.kubernetes.io/zone",
    "failure-domain.kubernetes.io/region", "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region", "node.kubernetes.io/instance-type",
})
KUBELET_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


@dataclass(frozen=True)
class PortMapping:
    """A port of the control-plane container published on the host (e.g. a NodePort)."""

    container_port: int
    host_port: int
    listen_address: str = "127.0.0.1"


@dataclass(frozen=True)
class HostPaths:
    """Where the audit policy and the audit log live on the host."""

    audit_policy: Path
    audit_dir: Path
    node_data: Path | None = None  # <node_data>/<node> is mounted into each worker

    def node_dir(self, node: str) -> Path | None:
        return self.node_data / node if self.node_data else None

    @property
    def audit_log(self) -> Path:
        return self.audit_dir / "audit.log"


def node_image(kubernetes_version: str) -> str:
    return f"{NODE_IMAGE}:v{kubernetes_version.lstrip('v')}"


def kubelet_may_set(key: str) -> bool:
    domain = key.split("/", 1)[0] if "/" in key else ""
    restricted = domain in ("kubernetes.io", "k8s.io") or domain.endswith(
        (".kubernetes.io", ".k8s.io"))
    if not restricted or key in KUBELET_LABELS:
        return True
    return any(domain == space or domain.endswith(f".{space}") for space in KUBELET_NAMESPACES)


def node_labels(shape: Shape, node: NodeSpec) -> dict[str, str]:
    """The shape's labels plus the devices label; one that no kubelet may set is an error."""
    for key in node.labels:
        if not kubelet_may_set(key):
            raise UserError(f"node {node.name}: a kubelet may not set the label '{key}', so a "
                            "kind node cannot carry it (the local provider can)",
                            path=shape.source)
    labels = dict(node.labels)
    if node.devices:
        labels[DEVICES_LABEL] = str(node.devices)
    return labels


def _yaml(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False)


def join_patch(node: NodeSpec) -> str:
    """The worker registers under the shape's name, with the shape's taints."""
    registration: dict[str, Any] = {"name": node.name}
    if node.taints:
        registration["taints"] = [taint.to_api() for taint in node.taints]
    return _yaml({"kind": "JoinConfiguration", "nodeRegistration": registration})


def cluster_patch(shape: Shape) -> str:
    """Audit log and toleration defaults on the apiserver; fast node-failure detection on the
    controller-manager (the same periods as the local provider). extraArgs in the map form:
    kind converts it for kubeadm's v1beta4 list form."""
    return _yaml({
        "kind": "ClusterConfiguration",
        "apiServer": {
            "extraArgs": {
                "audit-policy-file": POLICY_IN_NODE,
                "audit-log-path": AUDIT_LOG_IN_NODE,
                "audit-log-format": "json",
                "audit-log-maxsize": "0",  # 100 MB, then the log is rotated (followed)
                "audit-log-maxbackup": "1",
                "default-not-ready-toleration-seconds":
                    str(shape.not_ready_toleration_seconds),
                "default-unreachable-toleration-seconds":
                    str(shape.unreachable_toleration_seconds),
            },
            "extraVolumes": [
                {"name": "aftershock-audit-policy", "hostPath": POLICY_IN_NODE,
                 "mountPath": POLICY_IN_NODE, "readOnly": True, "pathType": "File"},
                {"name": "aftershock-audit-log", "hostPath": AUDIT_DIR_IN_NODE,
                 "mountPath": AUDIT_DIR_IN_NODE, "pathType": "DirectoryOrCreate"},
            ],
        },
        "controllerManager": {"extraArgs": {
            "node-monitor-period": "1s",
            "node-monitor-grace-period": NODE_MONITOR_GRACE,
        }},
        **scheduler_args(shape),
    })


def scheduler_args(shape: Shape) -> dict[str, Any]:
    """The same client rate and log level for kube-scheduler as on the local provider
    (scheduler_flags)."""
    flags = dict(flag.lstrip("-").split("=", 1) for flag in scheduler_flags(shape))
    return {"scheduler": {"extraArgs": flags}} if flags else {}


def kubelet_patch() -> str:
    # From 1.35 the kubelet refuses to start on a cgroup v1 host unless told (failCgroupV1
    # defaults to true; this machine's engine runs on cgroup v1, see the node image's base)
    return _yaml({"kind": "KubeletConfiguration",
                  "nodeLeaseDurationSeconds": NODE_LEASE_SECONDS, "failCgroupV1": False})


def gate_settings(shape: Shape, kubernetes_version: str) -> dict[str, Any]:
    """The same gates and API versions as the local provider's (providers/gates.py)."""
    chosen = gates.for_cluster(kubernetes_version, shape.gang_scheduling, shape.source)
    settings: dict[str, Any] = {}
    if chosen.feature_gates:
        settings["featureGates"] = dict(chosen.feature_gates)
    if chosen.runtime_config:
        settings["runtimeConfig"] = dict(chosen.runtime_config)
    return settings


def control_plane(image: str, host: HostPaths, ports: Sequence[PortMapping]) -> dict[str, Any]:
    node: dict[str, Any] = {
        "role": "control-plane",
        "image": image,
        "extraMounts": [
            {"hostPath": str(host.audit_policy), "containerPath": POLICY_IN_NODE,
             "readOnly": True},
            {"hostPath": str(host.audit_dir), "containerPath": AUDIT_DIR_IN_NODE},
        ],
    }
    if ports:
        node["extraPortMappings"] = [
            {"containerPort": port.container_port, "hostPort": port.host_port,
             "listenAddress": port.listen_address, "protocol": "TCP"} for port in ports]
    return node


def worker(shape: Shape, node: NodeSpec, image: str, data: Path | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"role": "worker", "image": image}
    if data is not None:  # an implementation's node-local data, on this node's disk
        config["extraMounts"] = [{"hostPath": str(data), "containerPath": NODE_DATA_IN_NODE}]
    labels = node_labels(shape, node)
    if labels:
        config["labels"] = labels
    config["kubeadmConfigPatches"] = [join_patch(node)]
    return config


def kind_config(shape: Shape, name: str, kubernetes_version: str, host: HostPaths,
                ports: Sequence[PortMapping] = (), image: str | None = None) -> dict[str, Any]:
    """``image``: the node image (default: kind's published one for the version)."""
    image = image or node_image(kubernetes_version)
    return {
        "kind": "Cluster",
        "apiVersion": API_VERSION,
        "name": name,
        **gate_settings(shape, kubernetes_version),
        "containerdConfigPatches": [registry.CONTAINERD_PATCH],
        "kubeadmConfigPatches": [cluster_patch(shape), kubelet_patch()],
        "nodes": [control_plane(image, host, ports),
                  *(worker(shape, node, image, host.node_dir(node.name))
                    for node in shape.nodes)],
    }


class _Readable(yaml.SafeDumper):
    """Multi-line strings (the kubeadm patches) as literal blocks, as people write them."""


def _string(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Readable.add_representer(str, _string)


def render(config: dict[str, Any]) -> str:
    return yaml.dump(config, Dumper=_Readable, sort_keys=False)


def node_containers(name: str, shape: Shape) -> dict[str, str]:
    """Kubernetes node name → kind's container name (kind names workers in config order:
    <name>-worker, <name>-worker2, ...)."""
    containers = {f"{name}-control-plane": f"{name}-control-plane"}
    for index, node in enumerate(shape.nodes, start=1):
        containers[node.name] = f"{name}-worker{index if index > 1 else ''}"
    return containers
