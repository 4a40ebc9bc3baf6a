"""Steps that run Chaos Mesh experiments: its controller is installed where the provider can
(kind, built here), and each experiment is a fault, deleted when the scenario ends."""

from __future__ import annotations

from aftershock import workloads
from aftershock.bdd.steps.history import judge_deleted_count
from aftershock.faults import chaosmesh
from aftershock.providers.base import Capability
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
    manifest = chaosmesh.pod_kill(f"kill-{name}", scenario.namespace,
                                  workloads.selector_labels(name))
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
