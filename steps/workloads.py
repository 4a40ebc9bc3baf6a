"""Steps that create workloads and judge their pods."""

from __future__ import annotations

from aftershock import kube, workloads
from aftershock.scenario import Scenario, StepFailed, given, then


@given("a Deployment {name} with {replicas:d} replicas")
def a_deployment(scenario: Scenario, name: str, replicas: int) -> None:
    _create_deployment(scenario, workloads.deployment(name, replicas))


@given("a Deployment {name} with {replicas:d} replicas spread across nodes")
def a_spread_deployment(scenario: Scenario, name: str, replicas: int) -> None:
    _create_deployment(scenario, workloads.deployment(name, replicas, spread_across_nodes=True))


def _create_deployment(scenario: Scenario, manifest: dict) -> None:
    kube.apps(scenario.api).create_namespaced_deployment(scenario.namespace, manifest)


def _running(pods: dict) -> list:
    return [pod for pod in pods.values()
            if pod.status.phase == "Running" and not pod.metadata.deletion_timestamp]


def _describe(pods: dict) -> str:
    if not pods:
        return "no pods"
    return "; ".join(
        f"{kube.pod_ref(pod)} {pod.status.phase}"
        f"{' terminating' if pod.metadata.deletion_timestamp else ''} "
        f"on node/{pod.spec.node_name or '-'}" for pod in pods.values())


@then("within {seconds:d} seconds {count:d} pods of {name} are Running "
      "on {spread:d} different nodes")
def pods_running_spread(scenario: Scenario, seconds: int, count: int, name: str,
                        spread: int) -> None:
    def holds(pods: dict) -> bool:
        running = _running(pods)
        return len(running) == count and len({p.spec.node_name for p in running}) == spread

    held, pods = kube.wait_for_pods(scenario.api, scenario.namespace,
                                    workloads.label_selector(name), holds, seconds)
    if not held:
        raise StepFailed(f"after {seconds}s, wanted {count} Running pods of {name} on {spread} "
                         f"different nodes; saw: {_describe(pods)}")


@then("within {seconds:d} seconds {count:d} pods of {name} are Running, none on the drained node")
def pods_running_elsewhere(scenario: Scenario, seconds: int, count: int, name: str) -> None:
    drained = scenario.recall("drained node")

    def holds(pods: dict) -> bool:
        running = _running(pods)
        return len(running) == count and all(p.spec.node_name != drained for p in running)

    held, pods = kube.wait_for_pods(scenario.api, scenario.namespace,
                                    workloads.label_selector(name), holds, seconds)
    if not held:
        raise StepFailed(f"after {seconds}s, wanted {count} Running pods of {name}, none on "
                         f"node/{drained}; saw: {_describe(pods)}")
