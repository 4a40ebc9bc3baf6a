"""Warm `cluster up` time: aftershock's embedded provider vs plain kwokctl on the same binaries.

Both are timed end to end as a user runs them, until 3 nodes are Ready:
- aftershock: `aftershock cluster up --shape clusters/three-nodes.yaml`
- kwokctl:    `kwokctl create cluster --runtime binary --wait 60s` + `kwokctl scale node
              --replicas 3` + `kubectl wait --for=condition=Ready nodes --all`
Runs alternate so background load hits both alike. kwokctl gets its own HOME, work dir and
kubeconfig, so ~/.kube/config is never touched. Goal: median ≤ 5 s and ≤ 1.1x kwokctl.

    .venv/bin/python benchmarks/bench_cluster_up.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from aftershock.go import toolchain

REPO = Path(__file__).resolve().parents[1]


def _run(command: list[str], env: dict | None = None) -> str:
    out = subprocess.run(command, capture_output=True, text=True, timeout=180,
                         env={**os.environ, **(env or {})})
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{out.stderr[-2000:]}")
    return out.stdout


def time_aftershock(index: int) -> float:
    name = f"bench-{os.getpid()}-{index}"
    began = time.monotonic()
    _run([str(REPO / ".venv/bin/aftershock"), "cluster", "up", "--shape",
          str(REPO / "clusters/three-nodes.yaml"), "--name", name])
    elapsed = time.monotonic() - began
    _run([str(REPO / ".venv/bin/aftershock"), "cluster", "down", name])
    return elapsed


def time_kwokctl(index: int, binaries: toolchain.Binaries) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-kwokctl-") as scratch:
        env = {"HOME": scratch, "KWOK_WORKDIR": f"{scratch}/work"}
        kubeconfig = f"{scratch}/kubeconfig"
        kwokctl, name = binaries.path("kwokctl"), f"bench{index}"
        began = time.monotonic()
        _run([kwokctl, "create", "cluster", "--name", name, "--runtime", "binary",
              "--kubeconfig", kubeconfig, "--wait", "60s",
              "--kube-apiserver-binary", binaries.path("kube-apiserver"),
              "--kube-controller-manager-binary", binaries.path("kube-controller-manager"),
              "--kube-scheduler-binary", binaries.path("kube-scheduler"),
              "--kwok-controller-binary", binaries.path("kwok"),
              "--etcd-binary", binaries.path("etcd")], env)
        _run([kwokctl, "scale", "node", "--name", name, "--replicas", "3"], env)
        _run([binaries.kubectl, "--kubeconfig", kubeconfig, "wait", "--for=condition=Ready",
              "nodes", "--all", "--timeout=60s"], env)
        elapsed = time.monotonic() - began
        _run([kwokctl, "delete", "cluster", "--name", name], env)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    binaries = toolchain.require()
    print(f"binaries: {binaries.directory.name}; {args.runs} runs each, alternating")
    ours, reference = [], []
    time_aftershock(-1)  # one unmeasured run each: page cache and binaries warm
    time_kwokctl(-1, binaries)
    for index in range(args.runs):
        ours.append(time_aftershock(index))
        reference.append(time_kwokctl(index, binaries))
        print(f"  run {index + 1}: aftershock {ours[-1]:.2f}s   kwokctl {reference[-1]:.2f}s",
              flush=True)
    median_ours, median_ref = statistics.median(ours), statistics.median(reference)
    ratio = median_ours / median_ref
    print(f"{'':12}{'median':>9}{'min':>9}{'max':>9}")
    for label, values in (("aftershock", ours), ("kwokctl", reference)):
        print(f"{label:12}{statistics.median(values):8.2f}s{min(values):8.2f}s{max(values):8.2f}s")
    print(f"ratio aftershock/kwokctl (median): {ratio:.2f}x")
    print(f"goal: median <= 5 s ({'met' if median_ours <= 5 else 'NOT met'}), "
          f"ratio <= 1.1x ({'met' if ratio <= 1.1 else 'NOT met'})")


if __name__ == "__main__":
    main()
