"""Steps that run Chaos Mesh experiments: its controller and daemon are installed where the
provider can (kind, built here), and each experiment is a fault, deleted when the scenario
ends."""

from __future__ import annotations

from aftershock.bdd.steps.history import judge_deleted_count
from aftershock.faults import chaosmesh
from aftershock.kube import workloads
from aftershock.machine.capabilities import Capability
from aftershock.scenario import Scenario, StepFailed, given, then, when

CONTROLLER = "system:serviceaccount:chaos-mesh:chaos-controller-manager"


@given("Chaos Mesh is installed")
def chaos_mesh_installed(scenario: Scenario) -> None:
    scenario.require(Capability.CHAOS_MESH)
    scenario.cluster.install_chaos_mesh()
    scenario.timeline.mark("Chaos Mesh's controller is available")


@when("Chaos Mesh kills one pod of {name:Name}")
def chaos_mesh_kills_a_pod(scenario: Scenario, name: str) -> None:
    scenario.require(Capability.CHAOS_MESH)
    _run(scenario, chaosmesh.pod_kill(f"kill-{name}", scenario.namespace,
                                      workloads.selector_labels(name)))


@when("Chaos Mesh cuts the network of {name:Name} for {seconds:d} seconds")
def chaos_mesh_cuts_the_network(scenario: Scenario, name: str, seconds: int) -> None:
    """A NetworkChaos partition of every pod of ``name``: Chaos Mesh's daemon drops what they
    send until the experiment's duration is over (and the scenario deletes it at its end)."""
    scenario.require(Capability.CHAOS_MESH)
    if seconds < 1:
        raise StepFailed(f"a network cut lasts at least 1 second, not {seconds}")
    _run(scenario, chaosmesh.network_cut(f"cut-{name}", scenario.namespace,
                                         workloads.selector_labels(name), f"{seconds}s"))


def _run(scenario: Scenario, manifest: dict) -> None:
    """Apply the experiment as a fault and wait until Chaos Mesh says it is injected."""
    experiment = chaosmesh.Experiment(scenario.api, manifest)
    scenario.inject(experiment)
    try:
        experiment.wait_injected()
    except TimeoutError as exc:
        raise StepFailed(str(exc)) from exc


@then("Chaos Mesh deleted exactly {count:d} pods of {name:Name}", check="deleted_count")
def chaos_mesh_deleted(scenario: Scenario, count: int, name: str) -> None:
    judge_deleted_count(scenario, workloads.selector_labels(name), count, CONTROLLER,
                        "Chaos Mesh's controller", name)
