"""WatchDelay fidelity, measured: how late an informer behind the proxy sees new pods (should be
the delay, ± 100 ms), and what the proxy adds to writes (should be ~nothing), side by side with
the same client talking to the apiserver directly.

    .venv/bin/python benchmarks/bench_watchdelay.py [--pods 100] [--delay 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from kubernetes import client
from kubernetes.informer.informer import SharedInformer

from aftershock.faults.watchdelay import Rule, Upstream, WatchDelay
from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.machine.shape import default_shape
from aftershock.providers.local import LocalProvider
from aftershock.timeline import Recorder, Timeline

REPO = Path(__file__).resolve().parents[1]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(label: str, values: list[float], unit: float = 1000) -> str:
    return (f"{label:34}{statistics.median(values) * unit:9.1f}{pct(values, .95) * unit:9.1f}"
            f"{max(values) * unit:9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--delay", type=float, default=2.0)
    args = parser.parse_args()
    cluster = LocalProvider().up(default_shape(REPO))
    scratch = Path(tempfile.mkdtemp(prefix="bench-watchdelay-"))
    try:
        run(cluster, scratch, args.pods, args.delay)
    finally:
        cluster.down()


def run(cluster, scratch: Path, pods: int, delay: float) -> None:
    direct = kube.api_client(cluster.info.kubeconfig)
    kube.wait_for_service_account(direct, "default")
    proxy = WatchDelay(Upstream.from_kubeconfig(Path(cluster.info.kubeconfig), scratch),
                       scratch / "proxy.jsonl").start()
    proxy.set_rules([Rule(delay=delay, resource="pods")])
    proxied = kube.api_client(proxy.write_kubeconfig(scratch / "kubeconfig"))
    timeline = Timeline()
    recorder = Recorder(timeline, cluster.info.kubeconfig).start()
    seen: dict[str, float] = {}
    informer = SharedInformer(client.CoreV1Api(proxied).list_namespaced_pod, namespace="default")
    informer.add_event_handler("ADDED",
                               lambda o: seen.setdefault(o.metadata.name, time.monotonic()))
    informer.start()
    time.sleep(1)
    writes = {"direct": [], "proxy": []}
    for index in range(pods):
        for label, api in (("direct", direct), ("proxy", proxied)):
            began = time.monotonic()
            client.CoreV1Api(api).create_namespaced_pod("default",
                                                        workloads.pod(f"{label}-{index}"))
            writes[label].append(time.monotonic() - began)
    deadline = time.monotonic() + delay + 10
    while len(seen) < 2 * pods and time.monotonic() < deadline:
        time.sleep(0.05)
    informer.stop()
    recorder.stop()
    proxy.stop()
    recorded = {e.name: e.mono for e in timeline.entries if e.resource == "pods"
                and e.type == "ADDED"}
    late = [seen[name] - recorded[name] for name in seen if name in recorded]
    error = [abs(value - delay) for value in late]
    print(f"{pods * 2} pods; delay {delay:g}s on the pod watch of one informer client")
    print(f"{'':34}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    print(row("informer lateness vs recorder", late))
    print(row("  |lateness - delay|", error))
    print(row("create, direct to apiserver", writes["direct"]))
    print(row("create, through the proxy", writes["proxy"]))
    added = statistics.median(writes["proxy"]) - statistics.median(writes["direct"])
    print(f"proxy adds {added * 1000:.1f} ms to a write (median); seen {len(late)}/{2 * pods}")
    print(f"goal: lateness within ±100 ms of the delay "
          f"({'met' if max(error) <= 0.1 else 'NOT met'})")


if __name__ == "__main__":
    main()
