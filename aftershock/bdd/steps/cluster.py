"""Steps about the cluster itself."""

from __future__ import annotations

from aftershock.kube import api as kube
from aftershock.scenario import Scenario, StepFailed, given

CONTROL_PLANE = "node-role.kubernetes.io/control-plane"


@given("a cluster with {count:d} nodes")
def a_cluster_with_nodes(scenario: Scenario, count: int) -> None:
    """Counts the nodes workloads run on: a control-plane node that takes none (kind's, an
    existing cluster's) is not one of the scenario's nodes."""
    nodes = kube.core(scenario.api).list_node().items
    ready = [node.metadata.name for node in nodes if _ready(node) and not _control_plane(node)]
    if len(ready) != count:
        shape = scenario.cluster.shape
        where = f" (shape {shape.source})" if shape else ""
        raise StepFailed(
            f"the cluster has {len(ready)} Ready nodes{where}, the scenario needs {count}; "
            "choose a shape with --shape")
    scenario.remember("nodes", ready)


@given("a cluster with 1 node")
def a_cluster_with_one_node(scenario: Scenario) -> None:
    """As 'a cluster with N nodes', in the words for one."""
    a_cluster_with_nodes(scenario, 1)


def _control_plane(node) -> bool:
    """A control-plane node that keeps workloads off (kind's); a single-node cluster's only
    node is labelled control-plane too, but runs workloads and counts."""
    return any(taint.key == CONTROL_PLANE and taint.effect in ("NoSchedule", "NoExecute")
               for taint in node.spec.taints or [])


def _ready(node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])
