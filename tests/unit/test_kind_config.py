"""The kind config comes from the same cluster shape as the local cluster: one worker per shape
node under the shape's name, its labels and taints, the node image of the Kubernetes version,
and the audit policy mounted into the control plane."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from aftershock.errors import UserError
from aftershock.machine.shape import DEVICES_LABEL, NodeSpec, Shape, Taint, load_shape
from aftershock.providers import kind_config as kc

REPO = Path(__file__).resolve().parents[2]
HOST = kc.HostPaths(Path("/cache/clusters/as-1/audit-policy.yaml"),
                    Path("/cache/clusters/as-1/audit"))
TAINTED = Shape(name="tainted", source="tainted.yaml", nodes=(
    NodeSpec("gpu-1", labels={"pool": "gpu"}, taints=(Taint("gpu", "NoSchedule", "true"),)),
    NodeSpec("plain-1"),
), not_ready_toleration_seconds=30, unreachable_toleration_seconds=40)


def _patch(text: str) -> dict:
    return yaml.safe_load(text)


def test_a_two_node_shape_gives_exactly_this_config():
    config = kc.kind_config(TAINTED, "as-1", "1.34.4", HOST)
    image = "kindest/node:v1.34.4"
    assert config["kind"] == "Cluster" and config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    assert config["name"] == "as-1"
    assert "featureGates" not in config  # GA: only v1beta2 served beside v1, as on local
    assert config["runtimeConfig"] == {"resource.k8s.io/v1beta2": "true"}
    assert config["nodes"] == [
        {"role": "control-plane", "image": image, "extraMounts": [
            {"hostPath": "/cache/clusters/as-1/audit-policy.yaml",
             "containerPath": "/etc/kubernetes/aftershock/audit-policy.yaml", "readOnly": True},
            {"hostPath": "/cache/clusters/as-1/audit",
             "containerPath": "/var/log/kubernetes/aftershock"}]},
        {"role": "worker", "image": image, "labels": {"pool": "gpu"},
         "kubeadmConfigPatches": ["kind: JoinConfiguration\nnodeRegistration:\n  name: gpu-1\n"
                                  "  taints:\n  - key: gpu\n    effect: NoSchedule\n"
                                  "    value: 'true'\n"]},
        {"role": "worker", "image": image,
         "kubeadmConfigPatches": ["kind: JoinConfiguration\nnodeRegistration:\n"
                                  "  name: plain-1\n"]},
    ]


def test_the_apiserver_writes_the_audit_log_into_the_mounted_directory():
    cluster, kubelet = kc.kind_config(TAINTED, "as-1", "1.34.4", HOST)["kubeadmConfigPatches"]
    patch = _patch(cluster)
    assert patch["kind"] == "ClusterConfiguration" and "apiVersion" not in patch
    assert patch["apiServer"]["extraArgs"] == {
        "audit-policy-file": "/etc/kubernetes/aftershock/audit-policy.yaml",
        "audit-log-path": "/var/log/kubernetes/aftershock/audit.log",
        "audit-log-format": "json", "audit-log-maxsize": "0",
        "audit-log-maxbackup": "1",
        "default-not-ready-toleration-seconds": "30",
        "default-unreachable-toleration-seconds": "40"}
    assert patch["apiServer"]["extraVolumes"] == [
        {"name": "aftershock-audit-policy",
         "hostPath": "/etc/kubernetes/aftershock/audit-policy.yaml",
         "mountPath": "/etc/kubernetes/aftershock/audit-policy.yaml", "readOnly": True,
         "pathType": "File"},
        {"name": "aftershock-audit-log", "hostPath": "/var/log/kubernetes/aftershock",
         "mountPath": "/var/log/kubernetes/aftershock", "pathType": "DirectoryOrCreate"}]
    assert patch["controllerManager"]["extraArgs"] == {
        "node-monitor-period": "1s", "node-monitor-grace-period": "5s"}
    assert _patch(kubelet) == {"kind": "KubeletConfiguration", "nodeLeaseDurationSeconds": 4,
                               "failCgroupV1": False}  # 1.35 refuses cgroup v1 hosts otherwise
    assert HOST.audit_log == Path("/cache/clusters/as-1/audit/audit.log")


def test_the_default_shape_keeps_its_node_names_labels_and_devices():
    shape = load_shape(REPO / "clusters/three-nodes.yaml")
    workers = kc.kind_config(shape, "as-2", "1.33.6", HOST)["nodes"][1:]
    assert [_patch(w["kubeadmConfigPatches"][0])["nodeRegistration"]["name"]
            for w in workers] == ["node-1", "node-2", "node-3"]
    assert workers[0]["labels"] == {"topology.kubernetes.io/zone": "zone-a", DEVICES_LABEL: "1"}
    assert {w["image"] for w in workers} == {"kindest/node:v1.33.6"}


def test_before_1_34_dra_is_switched_on_as_on_the_local_provider():
    config = kc.kind_config(TAINTED, "as-1", "1.33.6", HOST)
    assert config["featureGates"] == {"DynamicResourceAllocation": True}
    assert config["runtimeConfig"] == {"resource.k8s.io/v1beta1": "true",
                                       "resource.k8s.io/v1beta2": "true"}
    for version in ("1.34.4", "1.35.4", "1.37.2"):  # GA: v1beta2 served beside v1, as local
        assert kc.gate_settings(TAINTED, version) == {
            "runtimeConfig": {"resource.k8s.io/v1beta2": "true"}}


def test_gang_scheduling_is_the_same_gates_as_on_the_local_provider():
    gang = dataclasses.replace(TAINTED, gang_scheduling=True)
    config = kc.kind_config(gang, "as-1", "1.36.3", HOST)
    assert config["featureGates"] == {"GangScheduling": True, "GenericWorkload": True}
    assert config["runtimeConfig"]["scheduling.k8s.io/v1alpha2"] == "true"


def test_port_mappings_are_published_by_the_control_plane_only_when_asked():
    ports = (kc.PortMapping(30080, 8080),)
    nodes = kc.kind_config(TAINTED, "as-1", "1.34.4", HOST, ports)["nodes"]
    assert nodes[0]["extraPortMappings"] == [
        {"containerPort": 30080, "hostPort": 8080, "listenAddress": "127.0.0.1",
         "protocol": "TCP"}]
    assert all("extraPortMappings" not in node for node in nodes[1:])


@pytest.mark.parametrize(("key", "allowed"), [
    ("pool", True), ("aftershock.io/size", True), ("example.com/x", True),
    ("topology.kubernetes.io/zone", True), ("kubernetes.io/arch", True),
    ("node.kubernetes.io/instance-type", True), ("kubelet.kubernetes.io/x", True),
    ("foo.node.kubernetes.io/x", True),
    ("node-role.kubernetes.io/worker", False), ("kubernetes.io/role", False),
    ("example.k8s.io/x", False),
])
def test_which_labels_a_kubelet_may_give_its_node(key, allowed):
    assert kc.kubelet_may_set(key) is allowed


def test_a_label_no_kubelet_may_set_is_one_error_naming_the_shape_and_node():
    shape = Shape(name="roles", source="clusters/roles.yaml", nodes=(
        NodeSpec("n1", labels={"node-role.kubernetes.io/worker": ""}),))
    with pytest.raises(UserError) as caught:
        kc.kind_config(shape, "as-1", "1.34.4", HOST)
    assert str(caught.value) == (
        "clusters/roles.yaml: node n1: a kubelet may not set the label "
        "'node-role.kubernetes.io/worker', so a kind node cannot carry it (the local provider "
        "can)")


def test_the_rendered_config_reads_back_with_the_patches_as_literal_blocks():
    config = kc.kind_config(TAINTED, "as-1", "1.34.4", HOST)
    text = kc.render(config)
    assert yaml.safe_load(text) == config
    assert "- |\n  kind: ClusterConfiguration\n" in text


def test_node_names_map_to_kinds_container_names_in_config_order():
    assert kc.node_containers("as-1", TAINTED) == {
        "as-1-control-plane": "as-1-control-plane", "gpu-1": "as-1-worker",
        "plain-1": "as-1-worker2"}
    assert kc.node_image("v1.35.0") == "kindest/node:v1.35.0"
