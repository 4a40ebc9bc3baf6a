"""What the operator decides, as pure functions of pods, nodes and member dirs (no API calls)."""

from __future__ import annotations

from collections.abc import Iterable

from kubernetes import client

from implementations.storage.data import Member

RETENTION_MODES = ("decommission", "retain", "safe_decommission")


def removed_ordinals(current: int, desired: int) -> list[int]:
    """A StatefulSet scaled from current to desired loses its highest ordinals."""
    return list(range(max(desired, 0), current))


def ordinal_of(pod_name: str, cluster: str) -> int | None:
    prefix, _, number = pod_name.rpartition("-")
    return int(number) if prefix == cluster and number.isdigit() else None


def is_ready(pod: client.V1Pod) -> bool:
    """Running, Ready and not terminating."""
    status = pod.status
    if pod.metadata.deletion_timestamp or not status or status.phase != "Running":
        return False
    return any(c.type == "Ready" and c.status == "True" for c in status.conditions or ())


def ready_members(pods: Iterable[client.V1Pod], cluster: str) -> dict[int, str]:
    """Ordinal -> node of each Ready member pod of the cluster."""
    ready = {}
    for pod in pods:
        ordinal = ordinal_of(pod.metadata.name, cluster)
        if ordinal is not None and is_ready(pod) and pod.spec and pod.spec.node_name:
            ready[ordinal] = pod.spec.node_name
    return dict(sorted(ready.items()))


def node_ready(node: client.V1Node) -> bool:
    conditions = (node.status.conditions if node.status else None) or ()
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def autoscale_size(nodes: Iterable[client.V1Node], variant: str) -> int:
    """correct: one member per Ready node, cordoned or not (a cordon is not a capacity loss);
    faulty: only Ready nodes that are schedulable, so cordoning a node shrinks the cluster."""
    ready = [n for n in nodes if node_ready(n)]
    if variant == "faulty":
        ready = [n for n in ready if not (n.spec and n.spec.unschedulable)]
    return len(ready)


def migration_target(ordinal: int, ready: dict[int, str], size: int) -> tuple[int, str] | None:
    """A Ready remaining member (ordinal < size) to copy a removed member's objects into."""
    remaining = [(o, node) for o, node in sorted(ready.items()) if o < size]
    return remaining[ordinal % len(remaining)] if remaining else None


def hosts(ordinals: Iterable[int], pods: Iterable[client.V1Pod], dirs: Iterable[Member],
          cluster: str) -> dict[int, set[str]]:
    """For each ordinal, the nodes that host it: its pod's node and wherever its dirs are."""
    wanted = {o: set() for o in ordinals}
    for pod in pods:
        ordinal = ordinal_of(pod.metadata.name, cluster)
        if ordinal in wanted and pod.spec and pod.spec.node_name:
            wanted[ordinal].add(pod.spec.node_name)
    for member in dirs:
        if member.ordinal in wanted:
            wanted[member.ordinal].add(member.node)
    return wanted


def retire_plan(removed: list[int], ready: dict[int, str], size: int,
                mode: str) -> tuple[dict[int, tuple[int, str] | None], int] | None:
    """correct: which removed ordinals to retire now (each with its migration target) and the
    replicas to scale to afterwards; None when nothing can be done safely yet.

    safe_decommission copies into a Ready remaining member. When none is Ready (one is Pending,
    e.g. for want of a free node) it steps down one member at a time, into a lower Ready member:
    the node that frees lets the Pending one in. With size 0 there is nowhere to copy (kept)."""
    if mode != "safe_decommission" or size == 0:
        return dict.fromkeys(removed), size
    targets = {o: migration_target(o, ready, size) for o in removed}
    if None not in targets.values():
        return targets, size
    highest = max(removed)
    step = migration_target(highest, ready, highest)
    return ({highest: step}, highest) if step else None
