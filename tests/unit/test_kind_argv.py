"""The exact commands the kind provider runs for each operation and capability."""

import sys
from pathlib import Path

import pytest

from aftershock.errors import ClusterError
from aftershock.go import kind_binary
from aftershock.providers import kind_argv as cmd

KUBECONFIG = Path("/cache/clusters/as-1/kubeconfig")
CP = "as-1-control-plane"


def test_cluster_lifecycle_names_the_cluster_and_our_own_kubeconfig():
    assert cmd.create_cluster("kind", "as-1", Path("/w/kind-config.yaml"), KUBECONFIG) == [
        "kind", "create", "cluster", "--name", "as-1", "--config", "/w/kind-config.yaml",
        "--kubeconfig", "/cache/clusters/as-1/kubeconfig"]
    assert cmd.delete_cluster("kind", "as-1", KUBECONFIG) == [
        "kind", "delete", "cluster", "--name", "as-1", "--kubeconfig",
        "/cache/clusters/as-1/kubeconfig"]
    assert cmd.get_kubeconfig("kind", "as-1") == ["kind", "get", "kubeconfig", "--name", "as-1"]


def test_kind_runs_with_our_kubeconfig_and_the_engine_it_was_given():
    assert cmd.kind_env("docker", KUBECONFIG) == {"KUBECONFIG": str(KUBECONFIG)}
    assert cmd.kind_env("podman", KUBECONFIG) == {"KUBECONFIG": str(KUBECONFIG),
                                                  "KIND_EXPERIMENTAL_PROVIDER": "podman"}


def test_loading_an_image_into_all_or_some_nodes():
    assert cmd.load_image("kind", "as-1", "acme/op:dev") == [
        "kind", "load", "docker-image", "acme/op:dev", "--name", "as-1"]
    assert cmd.load_image("kind", "as-1", "acme/op:dev", ["as-1-worker", "as-1-worker2"]) == [
        "kind", "load", "docker-image", "acme/op:dev", "--name", "as-1",
        "--nodes", "as-1-worker,as-1-worker2"]


def test_node_failure_stops_the_node_container_at_once_and_recovery_starts_it():
    assert cmd.stop_node("docker", "as-1-worker2") == ["docker", "stop", "-t", "0",
                                                       "as-1-worker2"]
    assert cmd.start_node("docker", "as-1-worker2") == ["docker", "start", "as-1-worker2"]
    assert cmd.node_state("podman", "as-1-worker") == [
        "podman", "inspect", "--format", "{{.State.Running}}", "as-1-worker"]


def test_component_stop_and_start_move_its_static_pod_manifest():
    assert cmd.stop_component("docker", CP, "kube-scheduler") == [
        "docker", "exec", CP, "mv", "/etc/kubernetes/manifests/kube-scheduler.yaml",
        "/etc/kubernetes/kube-scheduler.yaml.stopped"]
    assert cmd.start_component("docker", CP, "kube-scheduler") == [
        "docker", "exec", CP, "mv", "/etc/kubernetes/kube-scheduler.yaml.stopped",
        "/etc/kubernetes/manifests/kube-scheduler.yaml"]


def test_component_restart_stops_its_container_through_ctr():
    """ctr, which every kind node image has (crictl is not in the one built here)."""
    assert cmd.running_containers("docker", CP, "kube-controller-manager") == [
        "docker", "exec", CP, "sh", "-c", cmd.RUNNING, "running", "kube-controller-manager"]
    assert "ctr -n k8s.io containers ls -q" in cmd.RUNNING and "RUNNING" in cmd.RUNNING
    assert cmd.stop_containers("docker", CP, ["abc", "def"]) == [
        "docker", "exec", CP, "sh", "-c",
        'for id; do ctr -n k8s.io tasks kill "$id" || exit 1; done', "stop", "abc", "def"]


def test_the_audit_log_is_made_readable_for_the_recorder():
    assert cmd.open_audit_log("docker", CP) == [
        "docker", "exec", CP, "chmod", "-R", "a+rX", "/var/log/kubernetes/aftershock"]


def test_an_image_is_built_with_the_engine():
    assert cmd.build_image("docker", "acme/op:dev", Path("/r/Dockerfile"), Path("/r")) == [
        "docker", "build", "--tag", "acme/op:dev", "--file", "/r/Dockerfile", "/r"]


def test_kind_is_installed_from_its_pinned_go_module_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(tmp_path))
    assert kind_binary.install_command() == ["go", "install", "sigs.k8s.io/kind@v0.33.0"]
    assert kind_binary.install_env(tmp_path / "gobin")["GOBIN"] == str(tmp_path / "gobin")
    assert kind_binary.cached_path() == tmp_path / "bin/tools/kind-v0.33.0/kind"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert kind_binary.find(path=str(empty)) is None
    kind_binary.cached_path().parent.mkdir(parents=True)
    kind_binary.cached_path().write_text("")
    assert kind_binary.find(path=str(empty)) == str(kind_binary.cached_path())


def test_the_runner_returns_stdout_or_raises_with_the_command_and_stderr():
    assert cmd.run([sys.executable, "-c", "print('ok')"]) == "ok\n"
    with pytest.raises(ClusterError) as caught:
        cmd.run([sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"])
    assert "exited with 3" in str(caught.value) and "boom" in str(caught.value)
    with pytest.raises(ClusterError, match="no-such-binary"):
        cmd.run(["no-such-binary-aftershock"])
