"""Recorded processes: cleanup ends exactly what we started, and gc ends what dead runs left."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from aftershock.machine import cache as scratch
from aftershock.machine import processes


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(tmp_path))
    return tmp_path


def test_start_time_identifies_a_live_process():
    assert scratch.start_time(os.getpid()) is not None
    assert scratch.start_time(2**22 + 12345) is None


def test_terminate_ends_a_spawned_process(tmp_path):
    _, record = processes.spawn("sleeper", ["sleep", "60"], tmp_path / "sleeper.log")
    assert record.alive()
    processes.terminate([record])
    assert not record.alive()


def test_a_recycled_pid_is_not_ours(tmp_path):
    _, record = processes.spawn("sleeper", ["sleep", "60"], tmp_path / "sleeper.log")
    impostor = processes.ProcessRecord("x", record.pid, record.start_time + 1, [], "")
    processes.terminate([impostor])
    assert record.alive(), "a process whose start time differs must not be signalled"
    processes.terminate([record])


OWNER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from aftershock.machine import processes as p
    workdir = p.clusters_root() / "victim"
    workdir.mkdir(parents=True)
    pid, start = p.current_owner()
    state = p.ClusterState("victim", "local", pid, start, time.time(), str(workdir))
    _, record = p.spawn("sleeper", ["sleep", "300"], workdir / "sleeper.log")
    state.processes["sleeper"] = record
    state.save()
    print(record.pid, flush=True)
    time.sleep(300)
""")


def test_gc_ends_the_processes_of_a_run_killed_with_sigkill(cache):
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "AFTERSHOCK_CACHE": str(cache)})
    child = int(owner.stdout.readline())
    assert scratch.start_time(child) is not None
    (state,) = processes.list_states()
    assert not processes.is_dead_run(state), "a live owner's cluster is not gc'd"
    assert processes.gc().clusters == []

    owner.send_signal(signal.SIGKILL)
    owner.wait()
    time.sleep(0.05)
    assert scratch.start_time(child) is not None, "SIGKILL leaves the component behind"
    result = processes.gc()
    assert result.clusters == ["victim"]
    assert scratch.start_time(child) is None
    assert not (cache / "clusters" / "victim").exists()


def test_gc_removes_the_credentials_a_dead_process_kept_without_a_cluster_record(cache):
    """A runner with no cluster state keeps its kubeconfig's keys in its process's scratch;
    it used to be a temp dir nothing ever removed."""
    dead = cache / "credentials" / "pid4194999-1" / "ns-abc"
    dead.mkdir(parents=True)
    (dead / "kubeconfig").write_text("token")
    live = scratch.scratch_for_this_process("credentials")
    assert str(dead.parent) in processes.gc().leftovers
    assert not dead.parent.exists() and live.exists()


def test_undo_records_with_no_teardown_registered_are_not_said_undone(tmp_path, monkeypatch):
    """A gc run where no provider registered its teardown (it did not come through
    aftershock.providers.clusters) names each undo record as not undone, never as undone."""
    monkeypatch.setattr(processes, "TEARDOWNS", {})
    monkeypatch.setattr(processes, "AFTER_TEARDOWN", {})
    state = processes.ClusterState("reused-1", "existing", None, None, 0.0, str(tmp_path),
                                   str(tmp_path / "kubeconfig"))
    state.undo = {"cordon/node-1": {"verb": "uncordon"}}
    failures = processes.remove_cluster(state)
    assert list(failures) == ["cordon/node-1"] and "no teardown" in failures["cordon/node-1"]
    assert tmp_path.is_dir()  # the record is kept for a gc that can undo it
