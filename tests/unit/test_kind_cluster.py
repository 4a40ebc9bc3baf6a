"""The kind cluster runs exactly these commands for each operation (a fake runner answers)."""

from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from aftershock.errors import ClusterError, UserError
from aftershock.machine import processes
from aftershock.machine.capabilities import Capability, MissingCapability
from aftershock.machine.shape import NodeSpec, Shape, Taint
from aftershock.providers import kind as kindmod
from aftershock.providers import kind_argv as cmd

SHAPE = Shape(name="two", source="two.yaml", nodes=(
    NodeSpec("node-1"), NodeSpec("node-2", taints=(Taint("gpu", "NoSchedule"),))))
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: kind-as-1
  cluster: {server: "https://127.0.0.1:41234", certificate-authority-data: Zm9v}
contexts: []
users: []
"""
CP = ["docker", "exec", "as-1-control-plane"]


class FakeRunner:
    """Records every command; answers from a list of (argv prefix, stdout) in order."""

    def __init__(self, answers=()):
        self.calls: list[list[str]] = []
        self.envs: list[dict] = []
        self.answers = list(answers)

    def __call__(self, argv, env=None, timeout=600):
        self.calls.append(list(argv))
        self.envs.append(dict(env or {}))
        for index, (prefix, out) in enumerate(self.answers):
            if list(argv[:len(prefix)]) == list(prefix):
                del self.answers[index]
                if isinstance(out, Exception):
                    raise out
                return out
        return ""


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(tmp_path))
    monkeypatch.setattr(kindmod.KindCluster, "_wait_nodes_ready", lambda self, api=None: None)
    return kindmod.KindCluster(SHAPE, "as-1", kubernetes_version="1.34.4", engine="docker",
                               kind="/bin/kind")


def _runner(monkeypatch, answers=()):
    runner = FakeRunner(answers)
    monkeypatch.setattr(cmd, "run", runner)
    return runner


def test_start_creates_the_cluster_writes_our_kubeconfig_and_opens_the_audit_log(
        cluster, monkeypatch, tmp_path):
    runner = _runner(monkeypatch, [(["/bin/kind", "get", "kubeconfig"], KUBECONFIG)])
    cluster.start()
    workdir = tmp_path / "clusters" / "as-1"
    assert runner.calls == [
        ["/bin/kind", "create", "cluster", "--name", "as-1", "--config",
         str(workdir / "kind-config.yaml"), "--kubeconfig", str(workdir / "kubeconfig")],
        ["/bin/kind", "get", "kubeconfig", "--name", "as-1"],
        [*CP, "chmod", "-R", "a+rX", "/var/log/kubernetes/aftershock"],
    ]
    assert {env["KUBECONFIG"] for env in runner.envs} == {str(workdir / "kubeconfig")}
    assert (workdir / "kubeconfig").read_text() == KUBECONFIG
    assert (workdir / "kubeconfig").stat().st_mode & 0o777 == 0o600
    config = yaml.safe_load((workdir / "kind-config.yaml").read_text())
    assert [node["role"] for node in config["nodes"]] == ["control-plane", "worker", "worker"]
    assert (workdir / "audit-policy.yaml").read_text().startswith("# Audit policy")
    assert cluster.info.server == "https://127.0.0.1:41234"
    assert cluster.info.context == "kind-as-1" and cluster.info.provider == "kind"
    assert cluster.audit_log == workdir / "audit" / "audit.log"
    state = processes.ClusterState.load(workdir)
    assert (state.provider, state.engine, state.kubernetes_version) == ("kind", "docker",
                                                                          "1.34.4")


def test_a_failed_create_deletes_the_cluster_and_its_work_dir(cluster, monkeypatch, tmp_path):
    runner = _runner(monkeypatch, [(["/bin/kind", "create"], ClusterError("no image"))])
    with pytest.raises(ClusterError, match="no image"):
        cluster.start()
    assert runner.calls[-1][:3] == ["/bin/kind", "delete", "cluster"]
    assert not (tmp_path / "clusters" / "as-1").exists()


def test_node_failure_stops_and_recovery_starts_that_nodes_container(cluster, monkeypatch):
    runner = _runner(monkeypatch)
    cluster.stop_kubelet("node-2")
    cluster.start_kubelet("node-2")
    assert runner.calls == [["docker", "stop", "-t", "0", "as-1-worker2"],
                            ["docker", "start", "as-1-worker2"]]
    with pytest.raises(ClusterError, match="node/node-9 is not part"):
        cluster.stop_kubelet("node-9")


def test_restart_stops_the_components_container_and_waits_for_a_new_one(cluster, monkeypatch):
    ps = [*CP, "sh", "-c", cmd.RUNNING, "running", "kube-scheduler"]
    runner = _runner(monkeypatch, [(ps, "abc\n"), (ps, "abc\n"), (ps, "def\n")])
    monkeypatch.setattr(kindmod.time, "sleep", lambda seconds: None)
    cluster.restart_component("kube-scheduler")
    assert runner.calls == [ps, cmd.stop_containers("docker", CP[-1], ["abc"]), ps, ps]


def test_stop_and_start_move_the_manifest_and_wait_for_the_container(cluster, monkeypatch):
    ps = [*CP, "sh", "-c", cmd.RUNNING, "running", "kube-controller-manager"]
    runner = _runner(monkeypatch, [(ps, "abc\n"), (ps, ""), (ps, ""), (ps, "def\n")])
    monkeypatch.setattr(kindmod.time, "sleep", lambda seconds: None)
    cluster.stop_component("kube-controller-manager")
    cluster.start_component("kube-controller-manager")
    assert runner.calls == [
        [*CP, "mv", "/etc/kubernetes/manifests/kube-controller-manager.yaml",
         "/etc/kubernetes/kube-controller-manager.yaml.stopped"], ps, ps,
        [*CP, "mv", "/etc/kubernetes/kube-controller-manager.yaml.stopped",
         "/etc/kubernetes/manifests/kube-controller-manager.yaml"], ps, ps]


def test_a_component_kubeconfig_is_a_missing_capability_on_kind(cluster, monkeypatch):
    _runner(monkeypatch)
    with pytest.raises(MissingCapability) as caught:
        cluster.restart_component("kube-scheduler", Path("/proxy.kubeconfig"))
    assert caught.value.capability == Capability.WATCH_DELAY_FOR_COMPONENTS
    assert Capability.WATCH_DELAY_FOR_COMPONENTS not in cluster.capabilities
    assert {Capability.NODE_FAILURE, Capability.COMPONENT_RESTART, Capability.LOAD_IMAGE,
            Capability.DESTRUCTIVE, Capability.NODE_DELETE} <= cluster.capabilities


def test_load_image_and_down(cluster, monkeypatch, tmp_path):
    inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", "acme/op:dev"]
    runner = _runner(monkeypatch, [(inspect, "sha256:aaa\n"), (inspect, "sha256:aaa\n"),
                                   (inspect, "sha256:bbb\n")])
    cluster.paths.workdir.mkdir(parents=True)
    cluster.load_image("acme/op:dev")
    cluster.load_image("acme/op:dev")  # the nodes hold it as it is: not copied again
    cluster.load_image("acme/op:dev")  # rebuilt: copied again
    cluster.down()
    load = ["/bin/kind", "load", "docker-image", "acme/op:dev", "--name", "as-1"]
    assert runner.calls == [
        inspect, load, inspect, inspect, load,
        ["/bin/kind", "delete", "cluster", "--name", "as-1", "--kubeconfig",
         str(cluster.paths.kubeconfig)]]
    assert not cluster.paths.workdir.exists()


def _node(name, unschedulable=None, taints=()):
    return SimpleNamespace(metadata=SimpleNamespace(name=name), spec=SimpleNamespace(
        unschedulable=unschedulable,
        taints=[SimpleNamespace(key=k, effect=e, value=v) for k, e, v in taints]))


class FakeCore:
    def __init__(self, nodes):
        self.nodes, self.patches = nodes, []

    def list_node(self):
        return SimpleNamespace(items=self.nodes)

    def patch_node(self, name, body, **kwargs):
        assert kwargs == {"field_validation": "Strict"}, "every write goes through the door"
        self.patches.append((name, body))
        return {"metadata": {"name": name}, "spec": body["spec"]}


def test_reset_brings_back_parked_components_stopped_nodes_and_the_shapes_taints(
        cluster, monkeypatch):
    ps = [*CP, "sh", "-c", cmd.RUNNING, "running", "kube-scheduler"]
    inspect = ["docker", "inspect", "--format", "{{.State.Running}}"]
    runner = _runner(monkeypatch, [
        ([*CP, "ls", "/etc/kubernetes"], "admin.conf\nkube-scheduler.yaml.stopped\nmanifests\n"),
        (ps, "abc\n"), ([*inspect, "as-1-worker"], "true\n"),
        ([*inspect, "as-1-worker2"], "false\n")])
    core = FakeCore([
        _node("as-1-control-plane"),
        _node("node-1", unschedulable=True,
              taints=[("node.kubernetes.io/unreachable", "NoExecute", None)]),
        _node("node-2", taints=[("gpu", "NoSchedule", None)])])

    @contextmanager
    def api_client(kubeconfig, context):
        yield "api"

    monkeypatch.setattr(kindmod.kube, "api_client", api_client)
    monkeypatch.setattr(kindmod.kube, "core", lambda api: core)
    changed = cluster.reset_nodes()
    assert changed == ["restarted kube-scheduler", "started the container of node/node-2",
                       "reset node/node-1 to its shape"]
    assert [*CP, "mv", "/etc/kubernetes/kube-scheduler.yaml.stopped",
            "/etc/kubernetes/manifests/kube-scheduler.yaml"] in runner.calls
    assert ["docker", "start", "as-1-worker2"] in runner.calls
    assert core.patches == [("node-1", {"spec": {"unschedulable": None, "taints": []}})]


def test_a_deleted_node_registers_again_when_its_container_restarts(cluster, monkeypatch):
    runner = _runner(monkeypatch)
    core = FakeCore([_node("node-2", taints=[("gpu", "NoSchedule", None)])])
    assert cluster._reset_node_objects(core) == ["re-registered node/node-1"]
    assert runner.calls == [["docker", "stop", "-t", "0", "as-1-worker"],
                            ["docker", "start", "as-1-worker"]]


def test_without_an_engine_the_kind_provider_says_so_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as caught:
        kindmod.KindProvider().up(SHAPE)
    message = str(caught.value)
    assert "\n" not in message and "--cluster=local" in message
    assert message.startswith("--cluster=kind needs a container engine: ")


def test_gc_deletes_the_kind_cluster_of_a_dead_run(tmp_path, monkeypatch):
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(tmp_path))
    runner = _runner(monkeypatch)
    monkeypatch.setattr(kindmod.kind_binary, "find", lambda: "/bin/kind")
    workdir = tmp_path / "clusters" / "as-9"
    workdir.mkdir(parents=True)
    state = processes.ClusterState("as-9", "kind", owner_pid=None, owner_start=None, created=0,
                                   workdir=str(workdir), kubeconfig=str(workdir / "kubeconfig"),
                                   engine="podman")
    processes.remove_cluster(state)
    assert runner.calls == [["/bin/kind", "delete", "cluster", "--name", "as-9", "--kubeconfig",
                             str(workdir / "kubeconfig")]]
    assert runner.envs[0]["KIND_EXPERIMENTAL_PROVIDER"] == "podman"
    assert not workdir.exists()


def test_parked_components_are_read_from_a_listing():
    assert kindmod.parked("a\nkube-scheduler.yaml.stopped\nmanifests\n") == ["kube-scheduler"]
    assert kindmod.server_of(KUBECONFIG) == "https://127.0.0.1:41234"


ROUTES = ("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
          "eth0\t00000000\t010012AC\t0003\t0\t0\t0\t00000000\n"
          "eth0\t000012AC\t00000000\t0001\t0\t0\t0\t0000FFFF\n")


def test_an_image_archive_is_also_served_to_pulls_and_the_server_ends_with_the_cluster(
        cluster, monkeypatch, tmp_path):
    """AIStore's pods pull always: the first archive starts the cluster's registry on the nodes'
    gateway, tells every node's containerd to pull aftershock.local/... there, and down() ends
    it with the cluster."""
    from aftershock.containers.images import archive, registry

    runner = _runner(monkeypatch, [(["docker", "exec", "as-1-control-plane", "cat"], ROUTES)])
    bound = []

    def listen(host):
        bound.append(host)
        return registry.socket.create_server(("127.0.0.1", 0))

    monkeypatch.setattr(kindmod.registry, "listen", listen)
    cluster.paths.workdir.mkdir(parents=True)
    program = tmp_path / "prog"
    program.write_bytes(b"x")
    image = tmp_path / "image.tar"
    archive.write(archive.Image("aftershock.local/aisnode:v4.9",
                                (archive.Entry("/usr/bin/aisnode", program),)), image)
    cluster.load_image_archive(image)
    cluster.load_image_archive(image)  # one registry per cluster
    assert bound == ["172.18.0.1"]
    told = [c for c in runner.calls if "hosts.toml" in " ".join(c)]
    assert sorted(c[2] for c in told) == sorted(cluster.containers.values())
    assert all(c[-2] == "/etc/containerd/certs.d/aftershock.local" for c in told)
    assert (cluster.paths.workdir / "registry" / "tags" / "aisnode" / "v4.9").is_file()
    record = cluster.state.processes["registry"]
    assert record.alive()
    cluster.down()
    assert not record.alive()
