"""How big an input may be on this machine. Every input that sizes resources (the nodes of a
shape, the pods a node may hold, the pods a step makes, how long a step waits, repeats) is
checked before anything starts, against this machine's free memory, cores and process limit,
with costs measured by benchmarks/bench_scale.py (Kubernetes 1.34.4, 2 cores):

- an empty cluster and the harness: about 0.6 GiB (the control plane 0.51, the harness 0.09);
- a node: about 0.6 MiB (100 nodes: 0.57 GiB against 0.51 for one);
- a pod: about 0.3 MiB (0.2 in the cluster, 0.1 in the recorder's history);
- 1,000 nodes and 10,000 pods were run on 2 cores: more per core has not been measured;
- the control plane runs about 200 threads, which a process limit counts.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

MIB, GIB = 1024 ** 2, 1024 ** 3
BASE_MEMORY = 0.6 * GIB
NODE_MEMORY = 0.6 * MIB
POD_MEMORY = 0.3 * MIB
USABLE = 0.8  # of the memory available now; the rest is the machine's own
NODES_PER_CORE = 500  # measured: 1,000 nodes on 2 cores
PODS_PER_CORE = 5000  # measured: 10,000 pods on 2 cores
CLUSTER_THREADS = 200
MAX_PODS_PER_NODE = 1000  # a node's pods capacity (kubelet's own default is 110)
MAX_SECONDS = 3600  # any one step's wait or duration
MAX_REPEAT = 1000
MAX_OBJECTS = 100_000  # objects one step writes to a storage cluster
ALWAYS_FINE = 100  # pods a step may make without asking the machine
POD_ARGUMENTS = ("replicas", "completions")  # step parameters that are a number of pods
SECOND_ARGUMENTS = ("seconds", "duration", "offset", "delay", "latency")


@dataclass(frozen=True)
class Machine:
    memory: int  # bytes available now
    cores: int
    threads_left: int | None  # processes and threads this user may still start; None: no limit

    @classmethod
    def here(cls) -> Machine:
        return cls(_available_memory(), len(os.sched_getaffinity(0)), _threads_left())


def _available_memory() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def _threads_left() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft == resource.RLIM_INFINITY:
        return None
    uid = os.getuid()
    used = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines()
                          if ":" in line)
        except OSError:
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            used += int(fields.get("Threads", "1"))
    return soft - used


def need(nodes: int, pods: int = 0) -> float:
    """Bytes a cluster of ``nodes`` holding ``pods`` needs, with the harness."""
    return BASE_MEMORY + nodes * NODE_MEMORY + pods * POD_MEMORY


def gib(value: float) -> str:
    return f"{value / GIB:.1f} GiB" if value < 10 * GIB else f"{value / GIB:.0f} GiB"


def _beyond(count: int, what: str, wanted: float, per_core: int,
            machine: Machine) -> str | None:
    """Why ``count`` of ``what`` (needing ``wanted`` bytes) exceed this machine, or None."""
    if wanted > USABLE * machine.memory:
        return (f"{count} {what} need about {gib(wanted)} of memory; this machine has "
                f"{gib(machine.memory)} available")
    if count > per_core * machine.cores:
        return (f"{count} {what}: at most {per_core * machine.cores} on this machine's "
                f"{machine.cores} cores ({per_core} per core is what was measured)")
    return None


def nodes_problem(nodes: int, machine: Machine | None = None) -> str | None:
    """Why a cluster of ``nodes`` cannot start here, or None."""
    machine = machine or Machine.here()
    problem = _beyond(nodes, "nodes", need(nodes), NODES_PER_CORE, machine)
    if problem and "memory" in problem:
        return f"{problem} (at most {max_nodes(machine)} nodes here)"
    if problem is None and machine.threads_left is not None \
            and machine.threads_left < CLUSTER_THREADS:
        return (f"a cluster runs about {CLUSTER_THREADS} threads; the process limit leaves "
                f"{machine.threads_left} (ulimit -u)")
    return problem


def max_nodes(machine: Machine) -> int:
    by_memory = int((USABLE * machine.memory - BASE_MEMORY) / NODE_MEMORY)
    return max(0, min(by_memory, NODES_PER_CORE * machine.cores))


def pods_problem(pods: int, machine: Machine | None = None) -> str | None:
    """Why one step making ``pods`` pods cannot run here, or None."""
    return _beyond(pods, "pods", need(1, pods), PODS_PER_CORE, machine or Machine.here())


SIZING = ("replicas", "parallelism")  # the fields of a manifest that size its pods


def manifest_problem(documents: list, machine: Machine | None = None) -> str | None:
    """Why manifests a step applies (or a patch) would make more pods than this machine holds:
    every ``replicas`` or ``parallelism`` in them, of any kind, counts as that many pods."""
    pods = sum(_sizing(doc) for doc in documents)
    return pods_problem(pods, machine) if pods > ALWAYS_FINE else None


def _sizing(node: object) -> int:
    if isinstance(node, dict):
        return sum(value if key in SIZING and isinstance(value, int) and
                   not isinstance(value, bool) else _sizing(value)
                   for key, value in node.items())
    if isinstance(node, list):
        return sum(_sizing(item) for item in node)
    return 0


def step_problem(name: str, arguments: dict, machine: Machine | None = None) -> str | None:
    """Why a step's numbers are beyond what may run, or None (``name``: the step's function)."""
    for key in SECOND_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, int) and value > MAX_SECONDS:
            return f"{key} {value}: at most {MAX_SECONDS} seconds (an hour) in one step"
    pods = [arguments[key] for key in POD_ARGUMENTS if isinstance(arguments.get(key), int)]
    if isinstance(arguments.get("size"), int):  # a gang's or a storage cluster's pods
        pods.append(arguments["size"] * (arguments.get("groups") or 1))
    for count in pods:
        problem = pods_problem(count, machine) if count > ALWAYS_FINE else None
        if problem:
            return problem
    if name == "write_objects" and arguments.get("count", 0) > MAX_OBJECTS:
        return f"{arguments['count']} objects: at most {MAX_OBJECTS} in one step"
    return None
