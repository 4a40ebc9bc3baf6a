"""Cluster shapes: the shipped ones load; every malformed one names file:line and the field."""

from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.providers.local import dra_flags
from aftershock.providers.local_nodes import node_manifest
from aftershock.shape import DEVICES_LABEL, default_shape, load_shape

REPO = Path(__file__).resolve().parents[2]


def _quantity_mi(value: str) -> int:
    assert value.endswith("Mi"), value
    return int(value[:-2])


def test_three_nodes_shape_loads():
    shape = load_shape(REPO / "clusters/three-nodes.yaml")
    assert shape.node_names == ["node-1", "node-2", "node-3"]
    assert shape.nodes[0].labels["topology.kubernetes.io/zone"] == "zone-a"
    assert [node.devices for node in shape.nodes] == [1, 1, 1]


def test_a_nodes_devices_become_its_devices_label():
    shape = load_shape(REPO / "clusters/three-nodes.yaml")
    assert node_manifest(shape.nodes[0], 1)["metadata"]["labels"][DEVICES_LABEL] == "1"
    ten = load_shape(REPO / "clusters/ten-small-nodes.yaml")
    assert DEVICES_LABEL not in node_manifest(ten.nodes[0], 1)["metadata"]["labels"]


def test_every_node_has_its_own_address_and_pod_range_and_a_running_kubelet():
    shape = load_shape(REPO / "clusters/ten-small-nodes.yaml")
    made = [node_manifest(node, index) for index, node in enumerate(shape.nodes, start=1)]
    addresses = {m["status"]["addresses"][0]["address"] for m in made}
    ranges = {m["spec"]["podCIDR"] for m in made}
    assert len(addresses) == len(ranges) == 10
    assert all(m["metadata"]["labels"]["aftershock.io/kubelet"] == "running" for m in made)
    assert node_manifest(shape.nodes[0], 1000)["spec"]["podCIDR"] == "10.131.232.0/24"


def test_ten_small_nodes_fit_exactly_one_80mi_pod_each():
    shape = load_shape(REPO / "clusters/ten-small-nodes.yaml")
    assert len(shape.nodes) == 10
    for node in shape.nodes:
        memory = _quantity_mi(node.capacity["memory"])
        assert 80 <= memory < 160, node


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("nodes:\n  count: 3\n  template:\n    capacty:\n      cpu: 1\n", 4,
         "unknown field 'nodes.template.capacty' (did you mean 'capacity'?)"),
        ("nodes:\n  count: 3\n  template:\n    capacity:\n      memory: lots\n", 5,
         "field 'nodes.template.capacity.memory' must be a quantity"),
        ("nodes:\n  count: zero\n", 2, "field 'nodes.count' must be a whole number"),
        ("name: x\n", 1, "field 'nodes' is required"),
        ("nodes:\n  - name: a\n  - name: a\n", 3, "node name 'a' appears twice"),
        ("nodes:\n  - name: a\n    taints:\n      - key: k\n        effect: Sometimes\n", 5,
         "effect' must be one of NoSchedule"),
        ("nodes: [\n  count: 3\n", 3, "not valid YAML"),
        ("kubernetesVersion: latest\nnodes: {count: 1}\n", 1, "must look like 1.34.4"),
        ("nodes:\n  - name: a\n    devices: -1\n", 3,
         "field 'nodes.0.devices' must be a whole number ≥ 0"),
    ],
)
def test_malformed_shape_names_file_line_and_field(tmp_path, text, line, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        load_shape(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message
    assert "\n" not in message


def test_missing_shape_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such cluster shape file"):
        load_shape(tmp_path / "absent.yaml")


def test_dra_is_switched_on_before_1_34_and_v1beta2_served_after():
    assert dra_flags("1.34.4", "kube-apiserver") == [
        "--runtime-config=resource.k8s.io/v1beta2=true"]
    assert dra_flags("1.34.4", "kube-controller-manager") == []
    apiserver = dra_flags("1.33.13", "kube-apiserver")
    assert "--feature-gates=DynamicResourceAllocation=true" in apiserver
    assert any("resource.k8s.io/v1beta2=true" in flag for flag in apiserver)
    assert dra_flags("1.33.13", "kube-scheduler") == [
        "--feature-gates=DynamicResourceAllocation=true"]


def test_the_default_shape_is_the_project_s_three_nodes_file(tmp_path):
    assert default_shape(REPO) == load_shape(REPO / "clusters/three-nodes.yaml")
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "three-nodes.yaml").write_text("nodes: [{name: only}]\n")
    assert [node.name for node in default_shape(tmp_path).nodes] == ["only"]
    assert len(default_shape(tmp_path / "elsewhere").nodes) == 3  # built in, with no file
