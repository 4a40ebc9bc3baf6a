"""The embedded cluster at scale: 100, 300 and 1,000 nodes with 10 pods per node, on this
machine, with the recorder watching everything as in a scenario (issue 16).

For each size it prints:
- cluster up: from start until every node is Ready;
- RSS of the cluster's processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
  kwok), and of this process (the recorder) beside it;
- pods per second: one Deployment of 10 pods per node, from its creation until every pod is
  recorded Running (the ReplicaSet controller, the scheduler and kwok at their own pace);
- recorder lag: for each pod, when the recorder got its ADDED event minus when the API server
  completed its create (the audit log's stageTimestamp), p50, p99 and max;
- idle CPU: the cores the cluster uses for 10 s once its nodes are Ready, before any pod
  (node leases and heartbeats);
- events lost: pods and nodes whose recorded state differs (by name or resourceVersion) from a
  fresh list once the recorder has caught up.
With --kwokctl, the largest size is also brought up by kwokctl on the same binaries (`kwokctl
create cluster --runtime binary`, `kwokctl scale node`) and given the same Deployment: its up
time, RSS and pods per second go beside ours, with the ratio.
Goals at 1,000 nodes and 10,000 pods on 2 cores: up <= 60 s, RSS <= 4 GiB, lag p99 <= 1 s,
0 events lost, >= 20 pods per second (KWOK's figure).

    .venv/bin/python benchmarks/bench_scale.py [--nodes 100 300 1000] [--pods-per-node 10]
                                               [--kwokctl]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from aftershock.go import toolchain
from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.machine.shape import DEFAULT_CAPACITY, NodeSpec, Shape
from aftershock.providers.local import LocalProvider
from aftershock.timeline import Recorder, Timeline
from aftershock.timeline.entry import AUDIT, WATCH
from aftershock.timeline.state import Query, is_running

REPO = Path(__file__).resolve().parents[1]
GIB = 1024 ** 3
WAIT = 900  # seconds any one phase may take


def shape_of(nodes: int) -> Shape:
    capacity = {**DEFAULT_CAPACITY, "pods": "110"}
    return Shape(f"scale-{nodes}", tuple(NodeSpec(f"node-{i}", capacity=capacity)
                                         for i in range(1, nodes + 1)), source="bench_scale")


def rss(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            total += psutil.Process(pid).memory_info().rss
    return total


def idle_cores(pids: list[int], seconds: float = 10.0) -> float:
    """CPU the cluster's processes use with nothing to do but heartbeats (cores)."""
    def used() -> float:
        total = 0.0
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(pid).cpu_times()
                total += times.user + times.system
        return total

    before = used()
    time.sleep(seconds)  # a rate over a span of time
    return (used() - before) / seconds


def deployment(replicas: int) -> dict:
    body = workloads.deployment("scale", replicas)
    containers = body["spec"]["template"]["spec"]["containers"]
    containers[0]["resources"] = {"requests": {"cpu": "1m", "memory": "1Mi"}}
    return body


def running(state, query: Query, count: int) -> bool:
    """Every pod of the Deployment Running: one incremental count, as the steps' waits ask it
    (a scan of 10,000 pods on every event, under the timeline's lock, held up the recorder)."""
    return state.count(query) == count


@contextlib.contextmanager
def collector_pauses():
    """Python's cyclic collector stops every thread of this process, the recorder's too: its
    pauses by generation (seconds each) while the block runs."""
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    began = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append(time.perf_counter() - began[0])

    gc.callbacks.append(timed)
    try:
        yield pauses
    finally:
        gc.callbacks.remove(timed)


def lag(entries) -> list[float]:
    """ADDED recorded minus create completed, per pod (by name)."""
    created = {e.name: e.wall for e in entries if e.kind == AUDIT and e.resource == "pods"
               and e.verb == "create" and e.code == 201 and not e.subresource}
    added = {}
    for e in entries:
        if e.kind == WATCH and e.resource == "pods" and e.type == "ADDED" and e.name in created:
            added.setdefault(e.name, e.wall)
    return sorted(added[name] - created[name] for name in added)


def lost(api, timeline: Timeline) -> tuple[int, int]:
    """(objects whose recorded state differs from a fresh list, objects listed)."""
    core = kube.core(api)
    listed = {("pods", p.metadata.namespace, p.metadata.name): p.metadata.resource_version
              for p in core.list_pod_for_all_namespaces().items}
    listed |= {("nodes", "", n.metadata.name): n.metadata.resource_version
               for n in core.list_node().items}

    def caught_up(state) -> bool:
        return all(((state.get(*key) or {}).get("metadata") or {}).get("resourceVersion")
                   is not None for key in listed)

    timeline.wait_until(caught_up, 30)
    state = timeline.state()
    differ = 0
    for key, version in listed.items():
        recorded = state.get(*key)
        if recorded is None:
            differ += 1
            continue
        recorded_rv = int(recorded["metadata"]["resourceVersion"])
        if recorded_rv < int(version):  # newer is fine: changed after the list
            differ += 1
    recorded = {k for k in state.objects if k[0] in ("pods", "nodes")}
    differ += len(recorded - set(listed))  # recorded, but gone from the API server
    return differ, len(listed)


def ours(nodes: int, per_node: int) -> dict:
    began = time.monotonic()
    cluster = LocalProvider().up(shape_of(nodes))
    up = time.monotonic() - began
    api = kube.api_client(cluster.info.kubeconfig)
    time.sleep(10)  # the start's own work (first syncs, nodes turning Ready) is not idling
    idle = idle_cores([r.pid for r in cluster.state.processes.values()])
    timeline = Timeline()
    recorder = Recorder(timeline, cluster.info.kubeconfig, audit_log=cluster.audit_log).start()
    try:
        kube.wait_for_service_account(api, "default")
        pods = nodes * per_node
        created = time.monotonic()
        cpu_before = sum(psutil.Process().cpu_times()[:2])
        checked = [0, 0.0]  # the waiter's own cost: checks, seconds
        query = Query("pods", "default", workloads.selector_labels("scale"), is_running)

        def all_running(state) -> bool:
            began = time.perf_counter()
            try:
                return running(state, query, pods)
            finally:
                checked[0] += 1
                checked[1] += time.perf_counter() - began

        with collector_pauses() as pauses:
            kube.apps(api).create_namespaced_deployment("default", deployment(pods))
            held, _ = timeline.wait_until(all_running, WAIT)
        took = time.monotonic() - created
        recorder_cpu = sum(psutil.Process().cpu_times()[:2]) - cpu_before
        pids = [r.pid for r in cluster.state.processes.values()]
        memory = rss(pids)
        recorder.sync_audit()
        delays = lag(timeline.entries)
        differ, listed = lost(api, timeline)
        return {"nodes": nodes, "pods": pods, "up": up, "rss": memory, "idle_cores": idle,
                "recorder_rss": psutil.Process().memory_info().rss,
                "pods_per_s": pods / took if held else 0.0, "all_running": held,
                "lag": delays, "lost": differ, "listed": listed,
                "processes": len(pids), "timings": dict(cluster.timings),
                "recorder_cores": recorder_cpu / took, "waiter_checks": checked[0],
                "waiter_seconds": checked[1], "gc_full": len(pauses[2]),
                "gc_full_max": max(pauses[2], default=0.0),
                "gc_seconds": sum(sum(p) for p in pauses.values())}
    finally:
        recorder.stop()
        cluster.down()


def kwokctl(nodes: int, per_node: int, binaries: toolchain.Binaries) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-scale-kwokctl-") as scratch:
        env = {**os.environ, "HOME": scratch, "KWOK_WORKDIR": f"{scratch}/work"}
        kubeconfig, name = f"{scratch}/kubeconfig", f"scale{os.getpid()}"
        tool = binaries.path("kwokctl")

        def run(*command: str) -> str:
            out = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, env=env)
            if out.returncode:
                raise SystemExit(f"{' '.join(command[:3])} failed:\n{out.stderr[-2000:]}")
            return out.stdout

        began = time.monotonic()
        try:
            run(tool, "create", "cluster", "--name", name, "--runtime", "binary", "--kubeconfig",
                kubeconfig, "--wait", "120s",
                "--kube-apiserver-binary", binaries.path("kube-apiserver"),
                "--kube-controller-manager-binary", binaries.path("kube-controller-manager"),
                "--kube-scheduler-binary", binaries.path("kube-scheduler"),
                "--kwok-controller-binary", binaries.path("kwok"),
                "--etcd-binary", binaries.path("etcd"))
            run(tool, "scale", "node", "--name", name, "--replicas", str(nodes))
            run(binaries.kubectl, "--kubeconfig", kubeconfig, "wait", "--for=condition=Ready",
                "nodes", "--all", f"--timeout={WAIT}s")
            up = time.monotonic() - began
            api = kube.api_client(kubeconfig)
            kube.wait_for_service_account(api, "default")
            pods = nodes * per_node
            created = time.monotonic()
            kube.apps(api).create_namespaced_deployment("default", deployment(pods))
            deadline = created + WAIT
            while time.monotonic() < deadline:
                # kwok marks a pod Running and Ready at once; the Deployment's status is one
                # small read where a list of 10,000 pods would cost this side seconds
                status = kube.apps(api).read_namespaced_deployment_status("scale", "default")
                if (status.status.ready_replicas or 0) == pods:
                    break
                time.sleep(1)  # kwokctl's cluster has no recorder to wait on
            took = time.monotonic() - created
            pids = [p.pid for p in psutil.process_iter(["cmdline"])
                    if any(scratch in part for part in (p.info["cmdline"] or []))]
            return {"nodes": nodes, "pods": pods, "up": up, "rss": rss(pids),
                    "pods_per_s": pods / took, "processes": len(pids)}
        finally:
            subprocess.run([tool, "delete", "cluster", "--name", name], env=env,
                           capture_output=True, timeout=120)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, nargs="*", default=[100, 300, 1000])
    parser.add_argument("--pods-per-node", type=int, default=10)
    parser.add_argument("--kwokctl", action="store_true")
    parser.add_argument("--kwokctl-only", action="store_true",
                        help="only kwokctl's figures at the largest size")
    args = parser.parse_args()
    if args.kwokctl_only:
        ref = kwokctl(max(args.nodes), args.pods_per_node, toolchain.require())
        print(f"kwokctl: {ref['nodes']} nodes, {ref['pods']} pods: up {ref['up']:.1f}s, "
              f"RSS {ref['rss'] / GIB:.2f} GiB, {ref['pods_per_s']:.1f} pods/s, "
              f"{ref['processes']} processes")
        return
    rows = []
    print(f"{'nodes':>6}{'pods':>7}{'up s':>7}{'RSS GiB':>9}{'rec GiB':>9}{'pods/s':>8}"
          f"{'lag p50':>9}{'p99':>7}{'max':>7}{'lost':>6}{'procs':>6}{'idle CPU':>9}")
    for nodes in args.nodes:
        row = ours(nodes, args.pods_per_node)
        rows.append(row)
        delays = row["lag"]
        print(f"{nodes:>6}{row['pods']:>7}{row['up']:>7.1f}{row['rss'] / GIB:>9.2f}"
              f"{row['recorder_rss'] / GIB:>9.2f}{row['pods_per_s']:>8.1f}"
              f"{percentile(delays, 0.5):>9.3f}{percentile(delays, 0.99):>7.3f}"
              f"{(max(delays) if delays else float('nan')):>7.3f}"
              f"{row['lost']:>6}{row['processes']:>6}{row['idle_cores']:>9.2f}", flush=True)
        print(f"{'':>6} this process during the pods: {row['recorder_cores']:.2f} cores; the "
              f"waiter checked {row['waiter_checks']} times, {row['waiter_seconds']:.1f}s; "
              f"the cyclic collector paused it {row['gc_seconds']:.2f}s ({row['gc_full']} full "
              f"collections, the longest {row['gc_full_max']:.3f}s)", flush=True)
    if args.kwokctl:
        binaries = toolchain.require()
        nodes = max(args.nodes)
        ref = kwokctl(nodes, args.pods_per_node, binaries)
        mine = next(r for r in rows if r["nodes"] == nodes)
        print(f"\nat {nodes} nodes, {ref['pods']} pods: {'':10}{'aftershock':>12}{'kwokctl':>10}"
              f"{'ratio':>8}")
        for label, key, unit in (("up", "up", "s"), ("RSS", "rss", "GiB"),
                                 ("pods/s", "pods_per_s", "")):
            scale = GIB if key == "rss" else 1
            a, b = mine[key] / scale, ref[key] / scale
            print(f"{label + ' ' + unit:>30}{a:>12.2f}{b:>10.2f}{a / b:>7.2f}x")
        rows.append({"kwokctl": ref})
    goals = rows[-2] if args.kwokctl else rows[-1]
    if goals.get("nodes") == 1000:
        delays = goals["lag"]
        print(f"goals at 1000 nodes: up <= 60 s: {goals['up']:.1f}; RSS <= 4 GiB: "
              f"{goals['rss'] / GIB:.2f}; lag p99 <= 1 s: {percentile(delays, 0.99):.3f}; "
              f"lost 0: {goals['lost']}; >= 20 pods/s: {goals['pods_per_s']:.1f}")
    out = REPO / "reports" / time.strftime("scale-%Y%m%d-%H%M%S.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps([{k: v for k, v in r.items() if k != "lag"} |
                               ({"lag_p50": percentile(r["lag"], 0.5),
                                 "lag_p99": percentile(r["lag"], 0.99)} if "lag" in r else {})
                               for r in rows], indent=1, default=str))
    print(f"figures: {out}; median lag over all sizes "
          f"{statistics.median([d for r in rows for d in r.get('lag', [])] or [0]):.3f}s")


if __name__ == "__main__":
    main()
