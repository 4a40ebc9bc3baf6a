"""Steps that act on nodes."""

from __future__ import annotations

from aftershock import kube, workloads
from aftershock.faults import drain, nodes
from aftershock.providers.base import Capability
from aftershock.scenario import Scenario, StepFailed, when


@when("I cordon and drain the node running a pod of {name}")
def drain_node_of(scenario: Scenario, name: str) -> None:
    scenario.require(Capability.DESTRUCTIVE)
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, label_selector=workloads.label_selector(name)).items
    placed = sorted(pod.spec.node_name for pod in pods if pod.spec.node_name)
    if not placed:
        raise StepFailed(f"no pod of {name} is on a node yet")
    node = placed[0]
    scenario.on_cleanup(f"uncordon node/{node}", lambda: nodes.uncordon(scenario.api, node))
    drain.drain_node(scenario.api, node)
    scenario.remember("drained node", node)
