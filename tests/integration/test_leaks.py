"""Nothing left behind and nothing secret written where reports go, as a user would hit it: a run
whose implementation is live holds no token or key in its run dir, and a run killed with SIGKILL
leaves its implementation process to `aftershock cluster gc`, which ends it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aftershock.machine import processes

REPO = Path(__file__).resolve().parents[2]
SECRET = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.|PRIVATE KEY-----")
FEATURE = """Feature: a long run
  Scenario: an implementation runs behind its observing proxy for a while
    Given a cluster with 3 nodes
    And the implementation under test is running
    And the implementation's watches and writes are observed
    When 120 seconds pass
"""


def _implementation(owner: int) -> tuple[processes.ClusterState, processes.ProcessRecord] | None:
    for state in processes.list_states():
        if state.owner_pid != owner:
            continue
        for key, record in state.processes.items():
            if key.startswith("implementation/") and record.alive():
                return state, record
    return None


def _secrets_in(directory: Path) -> list[str]:
    found = []
    for path in directory.rglob("*"):
        if path.is_file() and SECRET.search(path.read_bytes()):
            found.append(str(path.relative_to(directory)))
    return found


@pytest.mark.cluster
def test_a_killed_run_leaves_nothing_and_a_live_one_writes_no_credential(tmp_path):
    feature = tmp_path / "long.feature"
    feature.write_text(FEATURE)
    run_dir = tmp_path / "run"
    run = subprocess.Popen([sys.executable, "-m", "aftershock.cli", "run", str(feature),
                            "--profile", "profiles/replicagroup-correct.yaml", "--run-dir",
                            str(run_dir), "-p", "no:cacheprovider"], cwd=REPO,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found = None
    try:
        deadline = time.monotonic() + 240
        while found is None and time.monotonic() < deadline and run.poll() is None:
            found = _implementation(run.pid)
            time.sleep(0.5)  # another process's state file: nothing to wait on
        assert found is not None, "the implementation was never recorded with its cluster"
        time.sleep(3)  # the observing proxy's restart has written what it writes
        state, record = _implementation(run.pid) or found  # the one running now
        assert _secrets_in(run_dir) == []
        private = Path(state.workdir) / "private"
        assert (Path(state.workdir).stat().st_mode & 0o077) == 0
        assert any(SECRET.search(p.read_bytes()) for p in private.rglob("*.kubeconfig"))
    finally:
        os.kill(run.pid, signal.SIGKILL)  # the run alone: what it started lives on
        run.wait()
    assert record.alive(), "SIGKILL of the run must not have ended its implementation"
    gc = subprocess.run([sys.executable, "-m", "aftershock.cli", "cluster", "gc"], cwd=REPO,
                        capture_output=True, text=True, timeout=120)
    assert gc.returncode == 0, gc.stderr
    assert not record.alive(), gc.stdout
    assert not Path(state.workdir).exists()


REUSED = """Feature: a run on a reused cluster
  Scenario: nodes cordoned while it runs
    Given a cluster with 3 nodes
    And every node is labelled aftershock.test/reused=yes
    And the implementation under test is running
    When I cordon node node-1
    And I cordon node node-2
    And 120 seconds pass
"""


def _cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aftershock.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.cluster
def test_gc_undoes_what_a_killed_run_did_to_a_cluster_it_reused(tmp_path):
    from aftershock.kube import api as kube
    from aftershock.providers.existing import current_context

    name = f"reused-{os.getpid()}"
    up = _cli("cluster", "up", "--shape", "clusters/three-nodes.yaml", "--name", name)
    assert up.returncode == 0, up.stderr
    kubeconfig = Path(up.stdout.strip().splitlines()[-1])
    feature = tmp_path / "reused.feature"
    feature.write_text(REUSED)
    run = subprocess.Popen([sys.executable, "-m", "aftershock.cli", "run", str(feature),
                            "--profile", "profiles/replicagroup-correct.yaml",
                            "--cluster=existing", "--kubeconfig", str(kubeconfig),
                            "--allow-faults-on", current_context(kubeconfig),
                            "--run-dir", str(tmp_path / "run"), "-p", "no:cacheprovider"],
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = kube.api_client(kubeconfig)
    core = kube.core(api)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            if sum(bool(n.spec.unschedulable) for n in core.list_node().items) == 2:
                break
            time.sleep(0.5)  # another process's doing: nothing to wait on
        assert sum(bool(n.spec.unschedulable) for n in core.list_node().items) == 2
        assert sum(("aftershock.test/reused" in (n.metadata.labels or {}))
                   for n in core.list_node().items) == 3
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        gc = _cli("cluster", "gc")
        assert gc.returncode == 0, gc.stdout + gc.stderr
        assert "undid what a dead run left on a reused cluster" in gc.stdout + gc.stderr
        assert not [n.metadata.name for n in core.list_node().items if n.spec.unschedulable]
        assert not [n.metadata.name for n in core.list_node().items
                    if "aftershock.test/reused" in (n.metadata.labels or {})]
        namespaces = core.list_namespace(label_selector="aftershock.io/scenario=true").items
        assert not [ns for ns in namespaces if ns.metadata.deletion_timestamp is None]
        assert not [s for s in processes.list_states() if s.provider == "existing"
                    and s.owner_pid == run.pid]
    finally:
        if run.poll() is None:
            run.kill()
        api.close()
        _cli("cluster", "down", name)


@pytest.mark.cluster
def test_what_the_implementation_made_cluster_wide_goes_when_it_is_uninstalled():
    """An operator's own webhook configuration, an autoscaler's node: made by its identity
    outside its namespace, they would outlive the scenario (and a webhook whose server is gone
    refuses what it matches). Found in the audit log, they go with it, finalizers and all."""
    from kubernetes import client

    from aftershock.notebook import Session

    with Session(shape="clusters/three-nodes.yaml",
                 profile=str(REPO / "tests/data/maker/maker.yaml")) as session:
        session.step("Given the implementation under test is running")
        name = f"made-{session.scenario.namespace}"
        scheduling = client.SchedulingV1Api(session.scenario.api)
        made = scheduling.read_priority_class(name)
        assert made.metadata.finalizers == ["example.com/made"]
        generated = [pc.metadata.name for pc in scheduling.list_priority_class().items
                     if pc.metadata.name.startswith(f"{name}-")]
        assert len(generated) == 1, generated
        assert session.end_scenario() == []
        left = {pc.metadata.name for pc in scheduling.list_priority_class().items}
        assert name not in left and generated[0] not in left, left
