"""Kill a run at random moments and count what it leaves (issue 16).

SIGKILL: a feature with faults active (kube-controller-manager's pod watch delayed through a
proxy, a drained node, a stopped kubelet, an implementation under test running) is started and
killed with SIGKILL at a random moment, --kills times; `aftershock cluster gc` runs after each.
Half the runs use their own embedded cluster; the other half reuse one cluster (made once with
`aftershock cluster up`, run on with --cluster=existing), where gc must also undo what the
killed run did to it: its cordons, its namespaces, the objects it labelled as its own.

Ctrl-C: the same feature (two scenarios) gets SIGINT at a random moment, --interrupts times,
and no gc: the run must tear itself down, and its run dir must hold the report of every
scenario that finished before the interrupt.

After each kill or interrupt it counts, against what was there before the test: processes
(anything running the cached binaries or an implementation), listening ports, cluster dirs,
temp dirs, and on the reused cluster: cordoned nodes, nodes whose kubelet is stopped, scenario
namespaces and cluster-scoped objects that name one. Goal: 0 of each.

    .venv/bin/python benchmarks/kill_test.py [--kills 50] [--interrupts 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

from aftershock.kube import api as kube
from aftershock.machine import processes
from aftershock.machine.cache import cache_root
from aftershock.providers.existing import current_context

REPO = Path(__file__).resolve().parents[1]
FEATURE = """Feature: faults active when the run is killed
  Scenario: a drained node, a stopped kubelet and a delayed controller manager
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a replica group web with 3 replicas
    When the pod watch of the controller manager is delayed by 2 seconds
    And I drain node node-1 deleting emptyDir data
    And node node-2 fails
    And 10 seconds pass
    Then at no point did the replica group web have more than 3 live pods

  Scenario: the same again
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a replica group web with 3 replicas
    When I drain node node-1 deleting emptyDir data
    And node node-2 fails
    And 10 seconds pass
    Then at no point did the replica group web have more than 3 live pods
"""
# On a reused cluster (--cluster=existing) only what that provider allows: cordons, drains.
REUSED_FEATURE = """Feature: faults active on a reused cluster when the run is killed
  Scenario: a drained node and a cordoned one
    Given a cluster with 3 nodes
    And the implementation under test is running
    And a replica group web with 3 replicas
    When I drain node node-1 deleting emptyDir data
    And I cordon node node-2
    And 10 seconds pass
    Then at no point did the replica group web have more than 3 live pods
"""
PROFILE = "profiles/replicagroup-correct.yaml"
LENGTH = 45.0  # seconds: about as long as the feature runs, from start
REUSED_LENGTH = 15.0  # the reused cluster's feature (no cluster to start)
TMP = Path(tempfile.mkdtemp(prefix="kill-test-tmp-"))  # the runs' TMPDIR: their temp files


def aftershock(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aftershock.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


CLUSTER = re.compile(r"/clusters/([^/]+)/")


def ours(process: psutil.Process, spare: set[str]) -> bool:
    """A process of this test's runs: the cached binaries of a cluster not in ``spare`` (those
    there before), or an implementation under test started from this checkout."""
    try:
        line = " ".join(process.cmdline())
        cwd = process.cwd()
    except psutil.Error:
        return False
    if "-m implementations." in line:
        return cwd == str(REPO)
    found = CLUSTER.search(line)
    return str(cache_root()) in line and not (found and found[1] in spare)


def others() -> set[str]:
    """Clusters a live run owns: another run's, beside this test (this test's runs are dead
    whenever it counts)."""
    return {s.name for s in processes.list_states()
            if s.owner_pid is not None and s.owner_alive()}


def snapshot(spare: set[str] | None = None) -> dict[str, set]:
    root = processes.clusters_root()
    clusters = {p.name for p in root.iterdir()} if root.is_dir() else set()
    clusters -= others()
    spare = (clusters if spare is None else spare) | others()
    pids = {p.pid for p in psutil.process_iter() if ours(p, spare)}
    ports = {c.laddr.port for c in psutil.net_connections("tcp")
             if c.status == psutil.CONN_LISTEN and (c.pid is None or c.pid in pids)}
    temp = {p.name for p in TMP.iterdir()}
    mine = f"pid{os.getpid()}-"  # this test's own client
    scratch = {str(p) for kind in ("clients",) for p in (cache_root() / kind).glob("pid*")
               if not p.name.startswith(mine)}
    return {"processes": pids, "ports": ports, "cluster dirs": clusters, "temp dirs": temp,
            "client scratch dirs": scratch}


def leftovers(before: dict[str, set], spare: set[int]) -> Counter:
    """What is there now and was not before (``spare``: pids of the reused cluster)."""
    now = snapshot(before["cluster dirs"])
    left = Counter()
    for key in now:
        extra = now[key] - before[key]
        if key == "processes":
            extra -= spare
            for pid in extra:
                with contextlib.suppress(psutil.Error):
                    print(f"    left: pid {pid}: {' '.join(psutil.Process(pid).cmdline())[:160]}")
        left[key] += len(extra)
    return left


def reused_left(kubeconfig: Path) -> Counter:
    """What a killed run left on the cluster it reused."""
    api = kube.api_client(kubeconfig)
    core = kube.core(api)
    left = Counter()
    for node in core.list_node().items:
        left["cordoned nodes"] += bool(node.spec.unschedulable)
        left["stopped kubelets"] += (node.metadata.labels or {}).get(
            "aftershock.io/kubelet") == "stopped"
    left["scenario namespaces"] += sum(  # one being deleted is going
        1 for ns in core.list_namespace(label_selector="aftershock.io/scenario=true").items
        if ns.metadata.deletion_timestamp is None)
    left["labelled volumes"] += len(core.list_persistent_volume(
        label_selector=kube.OWNER_LABEL).items)
    api.close()
    return left


def run(feature: Path, run_dir: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "aftershock.cli", "run", str(feature),
                             "--profile", PROFILE, "--run-dir", str(run_dir), "-p",
                             "no:cacheprovider", *extra], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "TMPDIR": str(TMP)})


def kills(count: int, rng: random.Random, work: Path) -> tuple[Counter, list[float]]:
    total, moments = Counter(), []
    feature = work / "faults.feature"
    feature.write_text(FEATURE)
    reused_feature = work / "reused.feature"
    reused_feature.write_text(REUSED_FEATURE)
    up = aftershock("cluster", "up", "--shape", "clusters/three-nodes.yaml", "--name",
                    f"killtest-{os.getpid()}")
    if up.returncode:
        raise SystemExit(f"cluster up failed: {up.stderr}")
    kubeconfig = Path(up.stdout.strip().splitlines()[-1])
    reused = processes.ClusterState.load(kubeconfig.parent)
    spare = {r.pid for r in reused.processes.values()}
    context = current_context(kubeconfig)
    before = snapshot()
    try:
        for index in range(count):
            on_reused = index % 2 == 1
            extra = ("--cluster=existing", "--kubeconfig", str(kubeconfig),
                     "--allow-faults-on", context) if on_reused else ()
            moment = rng.uniform(0.5, REUSED_LENGTH if on_reused else LENGTH)
            process = run(reused_feature if on_reused else feature, work / f"kill-{index}",
                          *extra)
            try:
                process.wait(timeout=moment)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                process.wait()
            gc = aftershock("cluster", "gc")
            time.sleep(1)  # processes gc signalled are gone from /proc a moment later
            left = leftovers(before, spare)
            if on_reused:
                left += reused_left(kubeconfig)
            total += left
            moments.append(moment)
            said = ", ".join(f"{n} {k}" for k, n in sorted(left.items()) if n) or "nothing"
            print(f"kill {index + 1}/{count} at {moment:.1f}s "
                  f"({'reused cluster' if on_reused else 'own cluster'}): left {said}"
                  + ("" if gc.returncode == 0 else f"; gc failed: {gc.stderr[-300:]}"),
                  flush=True)
            if sum(left.values()):
                print("    gc said: " + " | ".join(gc.stderr.strip().splitlines()[-6:]))
    finally:
        aftershock("cluster", "down", reused.name)
    return total, moments


def finished(output: str) -> int:
    """Scenarios the run reported as done (pytest's progress: a line per result)."""
    return sum(1 for line in output.splitlines()
               if (" PASSED" in line or " FAILED" in line) and "::" in line)


def interrupts(count: int, rng: random.Random, work: Path) -> Counter:
    total = Counter()
    feature = work / "faults.feature"
    feature.write_text(FEATURE)
    before = snapshot()
    for index in range(count):
        moment = rng.uniform(0.5, 2 * LENGTH)
        run_dir = work / f"interrupt-{index}"
        process = run(feature, run_dir, "-v")
        try:
            output, _ = process.communicate(timeout=moment)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)
            try:
                output, _ = process.communicate(timeout=180)
            except subprocess.TimeoutExpired:
                process.kill()
                output, _ = process.communicate()
                total["hung teardowns"] += 1
        left = leftovers(before, set())
        done = finished(output or "")
        reports = len(list(run_dir.rglob("timeline.jsonl")))
        left["finished scenarios without a report"] += max(0, done - reports)
        total += left
        said = ", ".join(f"{n} {k}" for k, n in sorted(left.items()) if n) or "nothing"
        print(f"interrupt {index + 1}/{count} at {moment:.1f}s: {done} scenarios finished, "
              f"{reports} reports; left {said}", flush=True)
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--interrupts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kill-test-", dir=REPO / "reports") as scratch:
        work = Path(scratch)
        killed, moments = kills(args.kills, rng, work) if args.kills else (Counter(), [])
        interrupted = interrupts(args.interrupts, rng, work) if args.interrupts else Counter()
    print(f"\nSIGKILL x{args.kills} (then cluster gc): "
          + (", ".join(f"{n} {k}" for k, n in sorted(killed.items()) if n) or "0 left of any"))
    print(f"Ctrl-C x{args.interrupts} (no gc): "
          + (", ".join(f"{n} {k}" for k, n in sorted(interrupted.items()) if n)
             or "0 left of any; every finished scenario kept its report"))
    print(f"{time.monotonic() - began:.0f}s in all")
    shutil.rmtree(TMP, ignore_errors=True)
    out = REPO / "reports" / time.strftime("kill-test-%Y%m%d-%H%M%S.json")
    out.write_text(json.dumps({"kills": dict(killed), "interrupts": dict(interrupted),
                               "moments": moments}, indent=1))
    if sum(killed.values()) + sum(interrupted.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
