"""Steps that act on nodes and control-plane components (faults, always reverted)."""

from __future__ import annotations

from aftershock.concepts.records import NodeRecords
from aftershock.faults import components, drain, nodes
from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.machine.capabilities import Capability
from aftershock.scenario import Scenario, StepFailed, given, then, when


def node_of_pod(scenario: Scenario, name: str, selector: dict[str, str] | None = None) -> str:
    """The first node (by name) running a live pod of ``name`` (its labels, or ``selector``)."""
    labels = ",".join(f"{k}={v}" for k, v in selector.items()) if selector else \
        workloads.label_selector(name)
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, label_selector=labels).items
    placed = sorted(pod.spec.node_name for pod in pods
                    if pod.spec.node_name and not pod.metadata.deletion_timestamp)
    if not placed:
        raise StepFailed(f"no pod of {name} is on a node yet")
    return placed[0]


def cordon_and_drain(scenario: Scenario, node: str,
                     options: drain.DrainOptions) -> drain.DrainReport:
    scenario.require(Capability.DESTRUCTIVE)
    # drain never uncordons; the scenario end does (the cordon is a fault)
    scenario.inject(nodes.Cordon(scenario.api, node))
    report = drain.drain_node(scenario.api, node, options,
                              log=lambda line: scenario.timeline.mark(f"drain: {line}"))
    scenario.remember("drained node", node)
    scenario.remember("drain report", report)
    return report


@when("I cordon and drain the node running a pod of {name:Name}")
def drain_node_of(scenario: Scenario, name: str) -> None:
    """Takes that node's workloads away, as node maintenance does (`kubectl drain
    --ignore-daemonsets`): a real node always runs DaemonSet pods (kube-proxy, the pod network),
    which a drain cannot move. `I drain node N` keeps kubectl's default and refuses them."""
    cordon_and_drain(scenario, node_of_pod(scenario, name),
                     drain.DrainOptions(ignore_daemonsets=True))


@when("I drain node {node:Name}")
def drain_node(scenario: Scenario, node: str) -> None:
    cordon_and_drain(scenario, node, drain.DrainOptions())


@when("I drain node {node:Name} ignoring DaemonSets")
def drain_node_ignoring_daemonsets(scenario: Scenario, node: str) -> None:
    cordon_and_drain(scenario, node, drain.DrainOptions(ignore_daemonsets=True))


@when("I drain node {node:Name} deleting emptyDir data")
def drain_node_emptydir(scenario: Scenario, node: str) -> None:
    cordon_and_drain(scenario, node, drain.DrainOptions(delete_emptydir_data=True))


@when("I drain node {node:Name} ignoring DaemonSets and deleting emptyDir data")
def drain_node_for_maintenance(scenario: Scenario, node: str) -> None:
    """`kubectl drain --ignore-daemonsets --delete-emptydir-data`, as node maintenance does:
    what explore's node plans do, on any cluster (a kind node runs DaemonSet pods)."""
    cordon_and_drain(scenario, node, drain.DrainOptions(ignore_daemonsets=True,
                                                        delete_emptydir_data=True))


@when("I drain node {node:Name} forcing pods without a controller")
def drain_node_force(scenario: Scenario, node: str) -> None:
    cordon_and_drain(scenario, node, drain.DrainOptions(force=True))


@when("I drain node {node:Name} with a grace period of {seconds:d} seconds")
def drain_node_grace(scenario: Scenario, node: str, seconds: int) -> None:
    cordon_and_drain(scenario, node, drain.DrainOptions(grace_period=seconds))


@then("draining node {node:Name} is refused")
def drain_refused(scenario: Scenario, node: str) -> None:
    try:
        cordon_and_drain(scenario, node, drain.DrainOptions(timeout=30))
    except drain.DrainRefused as exc:
        scenario.remember("drain refusal", str(exc))
        return
    raise StepFailed(f"draining node/{node} was expected to be refused, but it went through")


@when("I cordon node {node:Name}")
def cordon(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.DESTRUCTIVE)
    scenario.inject(nodes.Cordon(scenario.api, node))


@given("every node is labelled {key}={value}")
def label_every_node(scenario: Scenario, key: str, value: str) -> None:
    """The scenario's nodes ('a cluster with N nodes': not a control plane that takes no
    workloads), as an operator's guide labels the nodes its pods may run on; put back at the
    end."""
    found = scenario.facts.get("nodes")
    if not found:
        raise StepFailed("no earlier step named the cluster's nodes ('a cluster with N nodes')")
    for node in found:
        scenario.set_up(nodes.NodeLabel(scenario.api, node, key, value))


@when("I uncordon node {node:Name}")
def uncordon(scenario: Scenario, node: str) -> None:
    scenario.end_fault(nodes.Cordon(scenario.api, node).description)


@when("node {node:Name} fails")
def node_fails(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.NODE_FAILURE)
    scenario.inject(nodes.NodeFailure(scenario.cluster, node))


@when("node {node:Name} recovers")
def node_recovers(scenario: Scenario, node: str) -> None:
    scenario.end_fault(nodes.NodeFailure(scenario.cluster, node).description)


@when("I delete node {node:Name} without draining it")
def delete_node(scenario: Scenario, node: str) -> None:
    delete_undrained(scenario, node)


def delete_undrained(scenario: Scenario, node: str) -> None:
    """Delete a Node without a drain, remembering what was bound to it (for the clean-up
    judgements of N and D)."""
    scenario.require(Capability.NODE_DELETE)
    scenario.remember("deleted node", node)
    scenario.remember("bound to the deleted node", bound_to_node(scenario.timeline.state(), node))
    _remember_record_of(scenario, node)
    scenario.inject(nodes.NodeDeletion(scenario.cluster, scenario.api, node))


def _remember_record_of(scenario: Scenario, node: str) -> None:
    """Where the profile keeps node records, the one the node holds is to be reclaimed (N1),
    however the step chose the node."""
    profile = scenario.facts.get("profile")
    if profile is None or "node_records" not in (profile.concepts or {}) or \
            "reclaimed record" in scenario.facts:
        return
    records = NodeRecords.of(scenario)
    state = scenario.timeline.state()
    held = [i for i in range(records.slots) if records.holder(state, i) == node]
    if held:
        scenario.remember("reclaimed record", (held[0], node, scenario.now))


def component_name(words: str) -> str:
    try:
        return components.component_named(words)
    except ValueError as exc:
        raise StepFailed(str(exc)) from None


@when("I stop the {component}")
def stop_component(scenario: Scenario, component: str) -> None:
    scenario.require(Capability.COMPONENT_RESTART)
    scenario.inject(components.ComponentStopped(scenario.cluster, component_name(component)))


@when("I start the {component}")
def start_component(scenario: Scenario, component: str) -> None:
    scenario.end_fault(components.ComponentStopped(scenario.cluster,
                                                   component_name(component)).description)


@when("I restart the {component}")
def restart_component(scenario: Scenario, component: str) -> None:
    scenario.require(Capability.COMPONENT_RESTART)
    name = component_name(component)
    scenario.timeline.mark(f"restart {name}")
    scenario.cluster.restart_component(name)


@when("a node {node:Name} joins the cluster")
def node_joins(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.NODE_ADD)
    scenario.timeline.mark(f"node/{node} joins")
    scenario.cluster.add_node(node)
    for key in NODE_WATCHES:  # its state is read from now on, as the other nodes' is
        if key in scenario.facts:
            scenario.facts[key].add(node)


# the facts that hold a loop on each node (`sut.node_state`): a node's kubelet checkpoint, its
# CDI spec files, its kubelet's plugin sockets
NODE_WATCHES = ("node state", "cdi specs", "registrations")


def node_of_named_pod(scenario: Scenario, pod: str) -> str:
    node = kube.core(scenario.api).read_namespaced_pod(pod, scenario.namespace).spec.node_name
    if not node:
        raise StepFailed(f"pod/{scenario.namespace}/{pod} is on no node")
    scenario.remember(f"node of pod {pod}", node)
    return node


@when("I cordon and drain the node running pod {pod:Name}")
def drain_node_of_pod(scenario: Scenario, pod: str) -> None:
    cordon_and_drain(scenario, node_of_named_pod(scenario, pod), drain.DrainOptions())


@when("I delete the node running pod {pod:Name} without draining it")
def delete_node_of_pod(scenario: Scenario, pod: str) -> None:
    delete_undrained(scenario, node_of_named_pod(scenario, pod))


def bound_to_node(state, node: str) -> set[tuple[str, str, str]]:
    """What belongs to a node as recorded now: its pods, its lease, its ResourceSlices."""
    bound = {("pods", p["metadata"].get("namespace", ""), p["metadata"]["name"])
             for p in state.select("pods") if p.get("spec", {}).get("nodeName") == node}
    bound |= {("resourceslices", "", s["metadata"]["name"]) for s in state.select("resourceslices")
              if s.get("spec", {}).get("nodeName") == node}
    if state.get("leases", "kube-node-lease", node) is not None:
        bound.add(("leases", "kube-node-lease", node))
    return bound


@when("I delete the node running a pod of {name:Name} without draining it")
def delete_node_of_workload(scenario: Scenario, name: str) -> None:
    delete_undrained(scenario, node_of_pod(scenario, name))
