"""The embedded cluster, for real: version, nodes, audit log, node failure, and cleanup."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kubernetes import watch

from aftershock.go import toolchain
from aftershock.kube import api as kube
from aftershock.machine import cache, processes
from aftershock.providers.local import LocalCluster

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aftershock.cli", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})}, cwd=REPO)


def _kubectl(kubeconfig: str, *args: str, home: Path) -> str:
    kubectl = toolchain.require().kubectl
    out = subprocess.run([kubectl, "--kubeconfig", kubeconfig, *args], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "HOME": str(home)})
    assert out.returncode == 0, out.stderr
    return out.stdout


def _audit(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_cluster_up_serves_the_pinned_version_with_ready_nodes_then_down_leaves_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    name = f"it-{uuid.uuid4().hex[:6]}"
    up = _cli("cluster", "up", "--shape", "clusters/three-nodes.yaml", "--name", name,
              env={"HOME": str(home), "AFTERSHOCK_CACHE": str(cache.cache_root())})
    assert up.returncode == 0, up.stderr
    kubeconfig = up.stdout.strip()
    workdir = Path(kubeconfig).parent
    try:
        version = json.loads(_kubectl(kubeconfig, "version", "-o", "json", home=tmp_path))
        assert version["serverVersion"]["gitVersion"] == f"v{toolchain.pinned_kubernetes()}"
        nodes = json.loads(_kubectl(kubeconfig, "get", "nodes", "-o", "json", home=tmp_path))
        ready = [n["metadata"]["name"] for n in nodes["items"]
                 if any(c["type"] == "Ready" and c["status"] == "True"
                        for c in n["status"]["conditions"])]
        assert sorted(ready) == ["node-1", "node-2", "node-3"]
        assert not (home / ".kube").exists(), "cluster up must never touch ~/.kube"

        entries = _audit(workdir / "audit.log")
        creates = [e for e in entries if e["verb"] == "create"
                   and e["objectRef"]["resource"] == "nodes"]
        assert {e["user"]["username"] for e in creates} == {"aftershock"}
        assert not [e for e in entries if e["objectRef"].get("resource") == "events"]
        assert not [e for e in entries if e["verb"] in ("get", "list", "watch")]
        state = processes.ClusterState.load(workdir)
        pids = [record for record in state.processes.values()]
        # the control plane and one kwok for every node: a node costs no process
        assert sorted(state.processes) == ["etcd", "kube-apiserver", "kube-controller-manager",
                                           "kube-scheduler", "kwok"]
        assert all(record.alive() for record in pids)
    finally:
        down = _cli("cluster", "down", name)
    assert down.returncode == 0, down.stderr
    assert not any(record.alive() for record in pids)
    assert not workdir.exists()


SLEEPY_TEST = """
import time

def test_holds_a_cluster(aftershock_cluster):
    print("CLUSTER", aftershock_cluster.paths.workdir, flush=True)
    time.sleep(600)
"""


def _sleepy_run(tmp_path: Path) -> tuple[subprocess.Popen, Path, list]:
    """A pytest run holding a cluster: the process, the cluster's work dir, its records."""
    (tmp_path / "test_sleepy.py").write_text(SLEEPY_TEST)
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), str(tmp_path / "test_sleepy.py")],
        stdout=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True)
    try:
        workdir = next((Path(line.split()[1]) for line in run.stdout
                        if line.startswith("CLUSTER")), None)
        assert workdir is not None, "the test run did not start its cluster"
        records = list(processes.ClusterState.load(workdir).processes.values())
        assert records and all(record.alive() for record in records)
    except BaseException:
        os.killpg(run.pid, signal.SIGTERM)  # never leave a run holding a cluster
        raise
    return run, workdir, records


def test_a_run_killed_with_sigkill_is_cleaned_by_gc(tmp_path):
    run, workdir, records = _sleepy_run(tmp_path)
    try:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        assert all(record.alive() for record in records), "SIGKILL leaves the processes"
        gc = _cli("cluster", "gc")
        assert gc.returncode == 0, gc.stderr
        assert not any(record.alive() for record in records)
        assert not workdir.exists()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)


def test_a_run_ended_with_sigterm_removes_its_cluster(tmp_path):
    run, workdir, records = _sleepy_run(tmp_path)
    try:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=60)
        assert not any(record.alive() for record in records)
        assert not workdir.exists()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)


def _ready(node) -> str:
    return next((c.status for c in node.status.conditions or [] if c.type == "Ready"), "None")


def test_a_node_whose_kubelet_stops_is_not_ready_within_10s_and_tainted(aftershock_cluster):
    if not isinstance(aftershock_cluster, LocalCluster):
        pytest.skip("needs the local provider")
    api = kube.api_client(aftershock_cluster.info.kubeconfig)
    corev1 = kube.core(api)
    node = aftershock_cluster.shape.node_names[-1]
    version = corev1.list_node().metadata.resource_version
    stopped = time.monotonic()
    aftershock_cluster.stop_kubelet(node)
    try:
        not_ready_after = tainted = None
        stream = watch.Watch()
        for event in stream.stream(corev1.list_node, field_selector=f"metadata.name={node}",
                                   resource_version=version, timeout_seconds=30):
            seen = event["object"]
            if not_ready_after is None and _ready(seen) != "True":
                not_ready_after = time.monotonic() - stopped
            keys = {t.key for t in seen.spec.taints or []}
            if "node.kubernetes.io/unreachable" in keys:
                tainted = time.monotonic() - stopped
                stream.stop()
        assert not_ready_after is not None and not_ready_after <= 10, not_ready_after
        assert tainted is not None
        taints = [e for e in _audit(aftershock_cluster.audit_log)
                  if e["objectRef"].get("name") == node and e["verb"] in ("patch", "update")
                  and e["user"]["username"].endswith("node-controller")]
        assert taints, "the taint must come from the real node lifecycle controller"
    finally:
        changed = aftershock_cluster.reset_nodes()
    assert f"restarted the kubelet of node/{node}" in changed
    assert _ready(corev1.read_node(node)) == "True"
    api.close()


def test_a_component_started_while_it_runs_replaces_it_and_a_stop_stops_the_only_one(
        aftershock_cluster):
    """Two controller managers (no leader election) would both act: one stopped as a fault,
    the other would still replace a deleted pod, and its record, overwritten, would leak."""
    if not isinstance(aftershock_cluster, LocalCluster):
        pytest.skip("needs the local provider")
    component = "kube-controller-manager"
    first = aftershock_cluster.state.processes[component]
    aftershock_cluster.start_component(component)
    second = aftershock_cluster.state.processes[component]
    try:
        assert second.pid != first.pid
        assert not first.alive(), f"pid {first.pid}: a second {component} was left running"
        aftershock_cluster.stop_component(component)
        assert not second.alive()
    finally:
        aftershock_cluster.reset_nodes()
    assert aftershock_cluster.running()[component]


def test_a_deleted_pod_a_finalizer_holds_fails_after_its_grace_period_and_then_goes(
        aftershock_cluster):
    """As a kubelet since Kubernetes 1.27: a deleted pod held by a controller's finalizer runs
    on for its grace period, then is put in a terminal phase (what the finalizer's controller,
    Kueue's for one, waits for), and goes once the finalizer is removed."""
    if not isinstance(aftershock_cluster, LocalCluster):
        pytest.skip("needs the local provider")
    api = kube.api_client(aftershock_cluster.info.kubeconfig)
    corev1 = kube.core(api)
    name = f"held-{uuid.uuid4().hex[:6]}"
    corev1.create_namespaced_pod("default", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "finalizers": ["example.com/held"]},
        "spec": {"terminationGracePeriodSeconds": 2, "containers": [
            {"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
    try:
        _await_pod(corev1, name, lambda pod: pod.status.phase == "Running")
        corev1.delete_namespaced_pod(name, "default")
        failed = _await_pod(corev1, name, lambda pod: pod.status.phase == "Failed")
        states = [status.state.terminated for status in failed.status.container_statuses]
        assert [state.exit_code for state in states] == [143]
        # not before its grace period was over: the deletion timestamp is when it ends
        assert all(state.finished_at >= failed.metadata.deletion_timestamp for state in states)
    finally:
        corev1.patch_namespaced_pod(name, "default", {"metadata": {"finalizers": None}})
    _await_pod(corev1, name, lambda pod: pod is None)
    api.close()


def _await_pod(corev1, name: str, wanted, timeout: int = 30):
    """The pod once ``wanted`` holds of it (None: gone), watched from a list."""
    listing = corev1.list_namespaced_pod("default", field_selector=f"metadata.name={name}")
    pod = listing.items[0] if listing.items else None
    if wanted(pod):
        return pod
    stream = watch.Watch()
    for event in stream.stream(corev1.list_namespaced_pod, "default",
                               field_selector=f"metadata.name={name}",
                               resource_version=listing.metadata.resource_version,
                               timeout_seconds=timeout):
        pod = None if event["type"] == "DELETED" else event["object"]
        if wanted(pod):
            stream.stop()
            return pod
    raise AssertionError(f"pod/default/{name}: not as wanted within {timeout}s")
