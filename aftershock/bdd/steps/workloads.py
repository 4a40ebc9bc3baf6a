"""Steps that create, scale and delete workloads."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

from aftershock.bdd.steps.implementation import dynamic_resource
from aftershock.checks.invariants import STAMP_TOLERANCE
from aftershock.kube import api as kube
from aftershock.kube import door, workloads, writes
from aftershock.kube.api import suppress_not_found
from aftershock.scenario import Scenario, StepFailed, given, when


def create_workload(scenario: Scenario, manifest: dict) -> None:
    """Create a workload as written: strict field validation, read back (see
    aftershock.kube.writes)."""
    kind, name = manifest["kind"], manifest["metadata"]["name"]
    if kind not in ("Deployment", "StatefulSet", "Job", "Pod"):
        raise StepFailed(f"cannot create a {kind}")
    scenario.timeline.mark(f"create {kind.lower()}/{scenario.namespace}/{name}")
    resource = _resource(scenario, manifest["apiVersion"], kind)
    writes.create(resource, manifest, scenario.namespace)


def _resource(scenario: Scenario, api_version: str, kind: str):
    group, _, version = api_version.rpartition("/")
    return dynamic_resource(scenario, {"group": group, "version": version, "kind": kind})


@given("a Deployment {name} with {replicas:d} replicas")
def a_deployment(scenario: Scenario, name: str, replicas: int) -> None:
    create_workload(scenario, workloads.deployment(name, replicas))


@given("a Deployment {name} with {replicas:d} replicas spread across nodes")
def a_spread_deployment(scenario: Scenario, name: str, replicas: int) -> None:
    create_workload(scenario, workloads.deployment(name, replicas, spread_across_nodes=True))


@given("a Deployment {name} with {replicas:d} replicas spread across nodes that answer on "
       "port {port:d}")
def a_listening_deployment(scenario: Scenario, name: str, replicas: int, port: int) -> None:
    """Ready while the pod answers the kubelet's probe on ``port`` (a real one on kind; kwok
    simulates readiness)."""
    if not 0 < port < 65536:
        raise StepFailed(f"port {port} is not a TCP port (1-65535)")
    create_workload(scenario, workloads.deployment(name, replicas, spread_across_nodes=True,
                                                   port=port))


@given("a Deployment {name} with {replicas:d} replicas whose pods carry the finalizer "
       "{finalizer}")
def a_deployment_with_finalizer(scenario: Scenario, name: str, replicas: int,
                                finalizer: str) -> None:
    create_workload(scenario, workloads.deployment(name, replicas, finalizers=[finalizer]))
    scenario.on_cleanup(f"finalizer {finalizer} of the pods of {name}",
                        lambda: _remove_finalizer(scenario, finalizer, name))


@given("a Deployment {name} with {replicas:d} replicas whose pods are labelled {key}={value}")
def a_deployment_with_labels(scenario: Scenario, name: str, replicas: int, key: str,
                             value: str) -> None:
    manifest = workloads.deployment(name, replicas)
    manifest["spec"]["template"]["metadata"]["labels"][key] = value
    create_workload(scenario, manifest)


@when("I set condition {type:w} of pod {name:Name} to {status:w} without moving its "
      "lastTransitionTime")
def dishonest_condition(scenario: Scenario, type: str, name: str, status: str) -> None:
    """A deliberately buggy status writer, to show the lastTransitionTime check catches it.
    The stamp it keeps must be older than the check's tolerance on the API server's clock: a
    stamp something else moved a moment ago (the node controller marks a pod not Ready when a
    heartbeat is late) would make this write look honest, so it waits for the stamp to age."""
    corev1 = kube.core(scenario.api)
    deadline = scenario.now + 30
    while True:
        pod, _, headers = corev1.read_namespaced_pod_status_with_http_info(name,
                                                                           scenario.namespace)
        conditions = [c.to_dict() for c in pod.status.conditions or []]
        mine = next((c for c in conditions if c["type"] == type), None)
        if mine is None:
            raise StepFailed(f"pod/{scenario.namespace}/{name} has no condition {type}")
        age = parsedate_to_datetime(headers["Date"]) - mine["last_transition_time"]
        wait = STAMP_TOLERANCE + 1 - age.total_seconds()
        if wait <= 0:
            break
        if scenario.now + wait > deadline:
            raise StepFailed(f"condition {type} of pod/{scenario.namespace}/{name} kept "
                             "changing for 30 s: no old stamp to keep")
        let_pass(scenario, wait)
    mine["status"] = status
    body = {"status": {"conditions": [
        {"type": c["type"], "status": c["status"],
         "lastTransitionTime": c["last_transition_time"].strftime("%Y-%m-%dT%H:%M:%SZ")}
        for c in conditions]}}
    scenario.timeline.mark(f"set condition {type}={status} on pod/{scenario.namespace}/{name}")
    door.call(corev1.patch_namespaced_pod_status, name, scenario.namespace, body)


@given("a StatefulSet {name} with {replicas:d} replicas whose PVCs are {policy} when scaled")
def a_statefulset(scenario: Scenario, name: str, replicas: int, policy: str) -> None:
    if policy not in ("retained", "deleted"):
        raise StepFailed(f"PVC retention must be 'retained' or 'deleted', not '{policy}'")
    when_scaled = "Retain" if policy == "retained" else "Delete"
    create_workload(scenario, workloads.statefulset(name, replicas, when_scaled=when_scaled))


@given("a Job {name} with {completions:d} completions")
def a_job(scenario: Scenario, name: str, completions: int) -> None:
    create_workload(scenario, workloads.job(name, completions))


@given("a pod {name:Name}")
def a_pod(scenario: Scenario, name: str) -> None:
    create_workload(scenario, workloads.pod(name))


@given("a pod {name:Name} on node {node:Name}")
def a_pod_on_node(scenario: Scenario, name: str, node: str) -> None:
    manifest = workloads.pod(name)
    manifest["spec"]["nodeName"] = node
    create_workload(scenario, manifest)


@given("a pod {name:Name} labelled {key}={value}")
def a_labelled_pod(scenario: Scenario, name: str, key: str, value: str) -> None:
    create_workload(scenario, workloads.pod(name, {key: value}))


@when("I scale the {kind:w} {name:Name} to {replicas:d}")
def scale(scenario: Scenario, kind: str, name: str, replicas: int) -> None:
    if kind not in ("Deployment", "StatefulSet"):
        raise StepFailed(f"cannot scale a {kind}: Deployment or StatefulSet")
    scenario.timeline.mark(f"scale {kind.lower()}/{scenario.namespace}/{name} to {replicas}")
    writes.set_field(_resource(scenario, "apps/v1", kind), name, scenario.namespace,
                     "spec.replicas", replicas)


@when("I delete the {kind:w} {name:Name}")
def delete(scenario: Scenario, kind: str, name: str) -> None:
    scenario.timeline.mark(f"delete {kind.lower()}/{scenario.namespace}/{name}")
    namespace = scenario.namespace
    if kind == "Deployment":
        door.delete(kube.apps(scenario.api).delete_namespaced_deployment, name, namespace)
    elif kind == "StatefulSet":
        door.delete(kube.apps(scenario.api).delete_namespaced_stateful_set, name, namespace)
    elif kind == "Job":
        door.delete(kube.batch(scenario.api).delete_namespaced_job, name, namespace,
                    propagation_policy="Background")
    elif kind == "pod":
        door.delete(kube.core(scenario.api).delete_namespaced_pod, name, namespace)
    else:
        raise StepFailed(f"cannot delete a {kind}: Deployment, StatefulSet, Job or pod")


def _remove_finalizer(scenario: Scenario, finalizer: str, name: str) -> None:
    corev1 = kube.core(scenario.api)
    pods = corev1.list_namespaced_pod(scenario.namespace,
                                      label_selector=workloads.label_selector(name)).items
    for pod in pods:
        remaining = [f for f in pod.metadata.finalizers or [] if f != finalizer]
        if remaining != list(pod.metadata.finalizers or []):
            with suppress_not_found():
                door.call(corev1.patch_namespaced_pod, pod.metadata.name, scenario.namespace,
                          {"metadata": {"finalizers": remaining or None}})


@when("I remove the finalizer {finalizer} from every pod of {name}")
def remove_finalizer(scenario: Scenario, finalizer: str, name: str) -> None:
    scenario.timeline.mark(f"remove finalizer {finalizer} from the pods of {name}")
    _remove_finalizer(scenario, finalizer, name)


@when("{seconds:d} seconds pass")
def seconds_pass(scenario: Scenario, seconds: int) -> None:
    """Let time pass on the recorder's clock (events keep being recorded meanwhile)."""
    let_pass(scenario, seconds)


def let_pass(scenario: Scenario, seconds: float) -> None:
    deadline = scenario.now + seconds
    scenario.wait_until(lambda _state: scenario.now >= deadline, seconds)


@when("I delete a pod of {name}")
def delete_a_pod_of(scenario: Scenario, name: str) -> None:
    corev1 = kube.core(scenario.api)
    pods = corev1.list_namespaced_pod(scenario.namespace,
                                      label_selector=workloads.label_selector(name)).items
    live = sorted(p.metadata.name for p in pods if not p.metadata.deletion_timestamp)
    if not live:
        raise StepFailed(f"no live pod of {name} to delete")
    shown = f"pod/{scenario.namespace}/{live[0]}"
    scenario.timeline.mark(f"delete {shown}")
    door.delete(corev1.delete_namespaced_pod, live[0], scenario.namespace)
    # As kubectl delete does, until it is gone: in the recorded history, so that the next step
    # starts from a state that already shows the delete (a 'for 3 s' once began before it).
    gone = scenario.wait_until(
        lambda state: state.get("pods", scenario.namespace, live[0]) is None, 60)[0]
    if not gone:
        raise StepFailed(f"{shown} was deleted but is still there after 60s")
