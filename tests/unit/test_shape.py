"""Cluster shapes: the shipped ones load; every malformed one names file:line and the field."""

from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.machine.shape import DEVICES_LABEL, default_shape, load_shape
from aftershock.providers.gates import for_cluster
from aftershock.providers.local_nodes import node_manifest

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
        ("kubernetesVersion: latest\nnodes: {count: 1}\n", 1, "must look like 1.37.2"),
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


def dra_flags(version: str, component: str) -> list[str]:
    return for_cluster(version).flags(component)


def test_dra_is_switched_on_before_1_34_and_v1beta2_served_after():
    for version in ("1.34.4", "1.35.4", "1.36.3", "1.37.2"):
        assert dra_flags(version, "kube-apiserver") == [
            "--runtime-config=resource.k8s.io/v1beta2=true"]
        assert dra_flags(version, "kube-controller-manager") == []
    apiserver = dra_flags("1.33.13", "kube-apiserver")
    assert "--feature-gates=DynamicResourceAllocation=true" in apiserver
    assert any("resource.k8s.io/v1beta2=true" in flag for flag in apiserver)
    assert dra_flags("1.33.13", "kube-scheduler") == [
        "--feature-gates=DynamicResourceAllocation=true"]


@pytest.mark.parametrize(("version", "api", "gates"), [
    ("1.35.4", "v1alpha1", "GangScheduling=true,GenericWorkload=true"),
    ("1.36.3", "v1alpha2", "GangScheduling=true,GenericWorkload=true"),
    ("1.37.2", "v1beta1", "DRAWorkloadResourceClaims=true,GenericWorkload=true"),
])
def test_gang_scheduling_turns_on_each_version_s_gates_and_workload_api(version, api, gates):
    """The gates and API version move with each minor (1.37 folds GangScheduling into
    GenericWorkload, beta and still off by default): every component gets the gates, the API
    server the Workload API's version."""
    on = for_cluster(version, gang_scheduling=True)
    for component in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
        assert f"--feature-gates={gates}" in on.flags(component)
    assert f"--runtime-config=resource.k8s.io/v1beta2=true,scheduling.k8s.io/{api}=true" in \
        on.flags("kube-apiserver")
    assert not any("scheduling.k8s.io" in flag for flag in for_cluster(version).flags(
        "kube-apiserver"))


def test_gang_scheduling_before_1_35_is_refused_naming_the_shape(tmp_path):
    path = tmp_path / "gang.yaml"
    path.write_text("kubernetesVersion: 1.34.4\ngangScheduling: true\nnodes: {count: 1}\n")
    shape = load_shape(path)
    assert shape.gang_scheduling
    with pytest.raises(UserError, match=r"gang\.yaml: gangScheduling needs Kubernetes 1\.35 "
                       r"or later .* this cluster is v1\.34\.4"):
        for_cluster("1.34.4", shape.gang_scheduling, shape.source)


def test_gang_scheduling_must_be_a_boolean(tmp_path):
    path = tmp_path / "gang.yaml"
    path.write_text("nodes: {count: 1}\ngangScheduling: yes please\n")
    with pytest.raises(UserError, match=r"gang\.yaml:2.*'gangScheduling' must be true or false"):
        load_shape(path)


def test_the_default_shape_is_the_project_s_three_nodes_file(tmp_path):
    assert default_shape(REPO) == load_shape(REPO / "clusters/three-nodes.yaml")
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "three-nodes.yaml").write_text("nodes: [{name: only}]\n")
    assert [node.name for node in default_shape(tmp_path).nodes] == ["only"]
    assert len(default_shape(tmp_path / "elsewhere").nodes) == 3  # built in, with no file


def test_a_shape_may_raise_the_scheduler_s_client_rate_on_both_providers(tmp_path):
    """kube-scheduler writes at 50 requests a second by default; a shape that schedules as
    fast as the API server allows says so, and both providers pass it on the same way."""
    from aftershock.providers.kind_config import scheduler_args
    from aftershock.providers.local import scheduler_flags

    fast = load_shape(REPO / "clusters/one-node-fast-scheduler.yaml")
    assert (fast.scheduler_qps, fast.scheduler_burst) == (1000, 10000)
    assert scheduler_flags(fast) == ["--kube-api-qps=1000", "--kube-api-burst=10000", "--v=6"]
    assert scheduler_args(fast) == {"scheduler": {"extraArgs": {
        "kube-api-qps": "1000", "kube-api-burst": "10000", "v": "6"}}}
    plain = load_shape(REPO / "clusters/three-nodes.yaml")
    assert scheduler_flags(plain) == [] and scheduler_args(plain) == {}
    path = tmp_path / "s.yaml"
    for body, message in (
            ("scheduler: {clientQPS: 0}\n", "'scheduler.clientQPS' must be a whole number ≥ 1"),
            ("scheduler: {clientBurst: 1000000}\n", "'scheduler.clientBurst' must be at most"),
            ("scheduler: {qps: 5}\n", "unknown field 'scheduler.qps'")):
        path.write_text("nodes: {count: 1}\n" + body)
        with pytest.raises(UserError, match=message):
            load_shape(path)


def test_a_shape_may_name_the_level_the_scheduler_logs_at(tmp_path):
    """kube-scheduler's --v, on both providers: at 6 its DRA plugin logs every device it sees
    allocated, which slows the handlers the race of kubernetes#136269 runs between."""
    from aftershock.providers.kind_config import scheduler_args
    from aftershock.providers.local import scheduler_flags

    path = tmp_path / "s.yaml"
    path.write_text("nodes: {count: 1}\nscheduler: {verbosity: 6}\n")
    shape = load_shape(path)
    assert scheduler_flags(shape) == ["--v=6"]
    assert scheduler_args(shape) == {"scheduler": {"extraArgs": {"v": "6"}}}
    for value in ("11", "-1", "true", "high"):
        path.write_text(f"nodes: {{count: 1}}\nscheduler: {{verbosity: {value}}}\n")
        with pytest.raises(UserError, match=r"'scheduler\.verbosity' must be a whole number "
                                            r"from 0 to 10"):
            load_shape(path)
