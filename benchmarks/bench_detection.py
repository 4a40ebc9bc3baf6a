"""How fast a "Then within N seconds ..." step notices a change, against a 50 ms polling loop.

For each of N changes (a label patched on a pod through the apiserver), two observers time
the moment they see it, measured from just before the PATCH is sent:
- aftershock: ``Timeline.wait_until`` over the recorder's watch events (what `within` uses);
- polling: a thread that GETs the pod every 50 ms, running at the same time on the same changes.
Prints p50/p95/max for both and the ratio. Goal: p95 <= 20 ms and >= 2x faster than polling.

    .venv/bin/python benchmarks/bench_detection.py [--changes 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from pathlib import Path

from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.machine.shape import default_shape
from aftershock.providers.local import LocalProvider
from aftershock.timeline import Recorder, Timeline

REPO = Path(__file__).resolve().parents[1]

POLL = 0.05


def _label(pod: dict | None) -> str | None:
    return (((pod or {}).get("metadata") or {}).get("labels") or {}).get("step")


class Poller(threading.Thread):
    def __init__(self, api, namespace: str, name: str):
        super().__init__(daemon=True)
        self.corev1, self.namespace, self.name = kube.core(api), namespace, name
        self.seen: dict[str, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            pod = self.corev1.read_namespaced_pod(self.name, self.namespace)
            step = (pod.metadata.labels or {}).get("step")
            if step is not None:
                self.seen.setdefault(step, time.monotonic())
            self.stop.wait(POLL)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=200)
    args = parser.parse_args()
    cluster = LocalProvider().up(default_shape(REPO))
    try:
        run(cluster, args.changes)
    finally:
        cluster.down()


def run(cluster, changes: int) -> None:
    api = kube.api_client(cluster.info.kubeconfig)
    corev1, namespace, name = kube.core(api), "default", "probe"
    kube.wait_for_service_account(api, namespace)
    corev1.create_namespaced_pod(namespace, workloads.pod(name))
    timeline = Timeline()
    recorder = Recorder(timeline, cluster.info.kubeconfig).start()
    poller = Poller(kube.api_client(cluster.info.kubeconfig), namespace, name)
    poller.start()
    ours, polled = [], []
    for index in range(changes):
        step = str(index)
        time.sleep(random.uniform(0, POLL))  # spread the changes over the polling phase
        sent = time.monotonic()
        corev1.patch_namespaced_pod(name, namespace, {"metadata": {"labels": {"step": step}}})
        held, _ = timeline.wait_until(
            lambda state, s=step: _label(state.get("pods", namespace, name)) == s, 10)
        assert held, f"change {index} not seen"
        ours.append(time.monotonic() - sent)
        deadline = time.monotonic() + 2
        while step not in poller.seen and time.monotonic() < deadline:
            time.sleep(0.005)  # the polling observer is the thing being compared, not judged
        polled.append(poller.seen.get(step, float("inf")) - sent)
    poller.stop.set()
    recorder.stop()
    print(f"{changes} changes on pod/{namespace}/{name}; times from just before each PATCH")
    print(f"{'':22}{'p50':>9}{'p95':>9}{'max':>9}")
    for label, values in (("aftershock (watch)", ours), ("polling every 50 ms", polled)):
        print(f"{label:22}{statistics.median(values) * 1000:7.1f}ms"
              f"{percentile(values, 0.95) * 1000:7.1f}ms{max(values) * 1000:7.1f}ms")
    ratio = percentile(polled, 0.95) / percentile(ours, 0.95)
    p95 = percentile(ours, 0.95) * 1000
    print(f"p95 ratio polling/aftershock: {ratio:.1f}x")
    print(f"goal: p95 <= 20 ms ({'met' if p95 <= 20 else 'NOT met'}), "
          f">= 2x faster than polling ({'met' if ratio >= 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
