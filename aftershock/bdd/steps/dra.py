"""Steps about dynamic resource allocation (the device_driver concept): D1, D2, D5, D6 on the
real scheduler and resource-claim controller, with the profile's driver."""

from __future__ import annotations

from pathlib import Path

from kubernetes.dynamic.exceptions import ResourceNotFoundError

from aftershock.bdd.steps.implementation import implementation_of
from aftershock.bdd.steps.workloads import create_workload
from aftershock.concepts import concept, dra
from aftershock.faults.node_agent import AGENT_TAINT
from aftershock.kube import api as kube
from aftershock.kube import door, workloads, writes
from aftershock.machine.capabilities import Capability
from aftershock.profile.placeholders import fill
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, given, then, when

CLAIMING_GRACE_SECONDS = 10


def dra_resource(scenario: Scenario, kind: str):
    return kube.dynamic_client(scenario.api).resources.get(
        api_version=kube.dra_api_version(scenario.api), kind=kind)


def claiming_pod_spec(claim: dict[str, str], spec: dict | None = None) -> dict:
    """A pod spec (``spec``, or one pause container) that uses one claim (``claim``: its
    resourceClaimName or resourceClaimTemplateName) in its first container. It tolerates the
    taint that keeps a driver's plugin off a node (`faults.node_agent`): a workload stays
    where its claim was prepared while the plugin is stopped."""
    spec = spec if spec is not None else workloads.pod_template("claimant")["spec"]
    # A pod deleted with no grace leaves the API before its kubelet has unprepared its claims,
    # and its device can be handed on while still prepared (kubernetes/kubernetes#131513): that
    # is what the force-delete step does on purpose, never what every deletion should do.
    spec["terminationGracePeriodSeconds"] = CLAIMING_GRACE_SECONDS
    spec["resourceClaims"] = [{"name": "device", **claim}]
    spec["containers"][0]["resources"] = {"claims": [{"name": "device"}]}
    spec["tolerations"] = [*spec.get("tolerations", []),
                           {"key": AGENT_TAINT["key"], "operator": "Exists",
                            "effect": AGENT_TAINT["effect"]}]
    return spec


def device_claim(scenario: Scenario, kind: str, name: str,
                 device_class: str | None = None,
                 tolerations: list[dict[str, str]] | None = None) -> str:
    """A ResourceClaim, or a ResourceClaimTemplate, for one device of the driver's class (or
    of ``device_class``), its request with ``tolerations`` of device taints."""
    spec = {"devices": {"requests": [{"name": "device", "exactly": {
        "deviceClassName": device_class or concept(scenario, "device_driver")
        ["device_class"], **({"tolerations": tolerations} if tolerations else {})}}]}}
    writes.create(dra_resource(scenario, kind), {
        "apiVersion": kube.dra_api_version(scenario.api), "kind": kind, "metadata": {"name": name},
        "spec": {"spec": spec} if kind == "ResourceClaimTemplate" else spec}, scenario.namespace)
    return name


def create_pod(scenario: Scenario, name: str, spec: dict,
               annotations: dict[str, str] | None = None) -> None:
    """A bare pod, labelled as the workload steps label theirs (``a pod of <name>``)."""
    metadata = {"name": name, "labels": workloads.selector_labels(name),
                **({"annotations": annotations} if annotations else {})}
    writes.create(kube.dynamic_client(scenario.api).resources.get(api_version="v1", kind="Pod"),
                  {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec},
                  scenario.namespace)


@given("a Deployment {name:Name} of {replicas:d} pods that each claim a device")
def claiming_deployment(scenario: Scenario, name: str, replicas: int) -> None:
    template = device_claim(scenario, "ResourceClaimTemplate", f"{name}-device")
    manifest = workloads.deployment(name, replicas)
    claiming_pod_spec({"resourceClaimTemplateName": template},
                      manifest["spec"]["template"]["spec"])
    create_workload(scenario, manifest)


@given("a pod {name:Name} that claims a device and finishes after {seconds:d} seconds")
def finishing_pod(scenario: Scenario, name: str, seconds: int) -> None:
    """It ends by itself: on kind its kubelet ends it at its activeDeadlineSeconds (Failed),
    on the embedded cluster kwok at its aftershock.io/succeed-after (Succeeded)."""
    template = device_claim(scenario, "ResourceClaimTemplate", f"{name}-device")
    spec = claiming_pod_spec({"resourceClaimTemplateName": template})
    spec["activeDeadlineSeconds"] = seconds
    spec["restartPolicy"] = "Never"
    create_pod(scenario, name, spec, {workloads.SUCCEED_AFTER: f"{seconds}s"})


def placed_pods(scenario: Scenario, name: str) -> list[str]:
    """The live pods of ``name`` on a node, by name."""
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, label_selector=workloads.label_selector(name)).items
    return sorted(p.metadata.name for p in pods
                  if p.spec.node_name and not p.metadata.deletion_timestamp)


@when("I force-delete a pod of {name:Name}")
def force_delete(scenario: Scenario, name: str) -> None:
    corev1 = kube.core(scenario.api)
    placed = placed_pods(scenario, name)
    if not placed:
        raise StepFailed(f"no scheduled pod of {name} to force-delete")
    scenario.timeline.mark(f"force-delete pod/{scenario.namespace}/{placed[0]}")
    door.delete(corev1.delete_namespaced_pod, placed[0], scenario.namespace,
                grace_period_seconds=0)


TAINT_KEY = "aftershock.io/unhealthy"
TAINT_EFFECTS = ("NoSchedule", "NoExecute")


@given("a pod {name:Name} that claims a device that tolerates every NoExecute device taint")
def tolerating_pod(scenario: Scenario, name: str) -> None:
    """Its claim's request tolerates any NoExecute taint (operator Exists, no key). A toleration
    with no effect, which the API says matches every effect, kube-controller-manager 1.37.2's
    eviction controller takes for none (features/kubernetes/dra_device_taints.feature)."""
    template = device_claim(scenario, "ResourceClaimTemplate", f"{name}-device",
                            tolerations=[{"operator": "Exists", "effect": "NoExecute"}])
    create_pod(scenario, name, claiming_pod_spec({"resourceClaimTemplateName": template}))


def allocated_device(scenario: Scenario, pod: str) -> dict[str, str]:
    """The driver's device allocated to the claim of ``pod`` (its driver, pool and name)."""
    read = kube.core(scenario.api).read_namespaced_pod(pod, scenario.namespace)
    names = [status.resource_claim_name for status in read.status.resource_claim_statuses or []
             if status.resource_claim_name]
    names += [claim.resource_claim_name for claim in read.spec.resource_claims or []
              if claim.resource_claim_name]
    driver = concept(scenario, "device_driver")["driver"]
    for name in names:
        claim = dra_resource(scenario, "ResourceClaim").get(name=name,
                                                            namespace=scenario.namespace)
        results = ((claim.to_dict().get("status") or {}).get("allocation") or {}).get(
            "devices", {}).get("results") or []
        for result in results:
            if result.get("driver") == driver:
                return {"driver": driver, "pool": result["pool"], "device": result["device"]}
    raise StepFailed(f"pod/{scenario.namespace}/{pod} has no claim allocated a device of "
                     f"{driver} (its claims: {', '.join(names) or 'none'})")


def taint_device(scenario: Scenario, pod: str, effect: str) -> None:
    """A DeviceTaintRule (cluster-scoped, removed when the scenario ends) selecting the device
    of the pod's claim by driver, pool and name, as an administrator takes a device out. Of a
    driver on real kubelets, whose nodes are read for what an eviction leaves prepared (device
    taints on the embedded cluster's own devices are features/kubernetes' feature)."""
    scenario.require(Capability.NODE_FILES)
    if effect not in TAINT_EFFECTS:
        raise StepFailed(f"a device taint's effect is NoSchedule or NoExecute, not '{effect}'")
    device = allocated_device(scenario, pod)
    name = f"{scenario.namespace}-{pod}"[:253]
    try:
        rules = dra_resource(scenario, "DeviceTaintRule")
    except ResourceNotFoundError:
        raise StepFailed(f"this cluster serves no DeviceTaintRule in "
                         f"{kube.dra_api_version(scenario.api)} (KEP-5055's rules are GA in "
                         "Kubernetes 1.37, off by default before)") from None
    writes.create(rules, {"apiVersion": rules.group_version, "kind": "DeviceTaintRule",
                          "metadata": {"name": name},
                          "spec": {"deviceSelector": device, "taint": {
                              "key": TAINT_KEY, "value": "true", "effect": effect}}}, None)
    scenario.on_cleanup(f"delete devicetaintrule/{name}",
                        lambda: writes.delete(rules, name, None, missing_ok=True))
    scenario.timeline.mark(f"devicetaintrule/{name}: device {device['pool']}/"
                           f"{device['device']} of {device['driver']} tainted {effect}")


@when("an administrator taints the device of pod/{pod:Name} {effect:w}")
def taint_device_of_pod(scenario: Scenario, pod: str, effect: str) -> None:
    taint_device(scenario, pod, effect)


@when("an administrator taints the device of a pod of {name:Name} {effect:w}")
def taint_device_of_workload(scenario: Scenario, name: str, effect: str) -> None:
    placed = placed_pods(scenario, name)
    if not placed:
        raise StepFailed(f"no pod of {name} is on a node yet")
    taint_device(scenario, placed[0], effect)


@then("every pod was bound only after its claims were allocated for its node",
      check="allocated_before_bind")
def allocated_before_bind(scenario: Scenario) -> None:
    scenario.judge(Judgement("allocated_before_bind", {"namespace": scenario.namespace}))


@then("no claim was allocated a device with a taint it does not tolerate",
      check="untainted_allocation")
def untainted_allocation(scenario: Scenario) -> None:
    """The taints a ResourceSlice lists on a device (NoSchedule, NoExecute), against the
    tolerations of the claim's request."""
    scenario.judge(Judgement("untainted_allocation", {"namespace": scenario.namespace}))


@then("within {within:d} seconds of a NoExecute taint every pod on the tainted device that "
      "does not tolerate it was being deleted", check="evicted_for_taint")
def evicted_for_taint(scenario: Scenario, within: int) -> None:
    scenario.judge(Judgement("evicted_for_taint", {"namespace": scenario.namespace,
                                                   "within": within}))


@then("no device was ever allocated to two claims at once", check="exclusive_devices")
def exclusive_devices(scenario: Scenario) -> None:
    scenario.judge(Judgement("exclusive_devices"))


def _prepare_log(scenario: Scenario) -> Path:
    driver = concept(scenario, "device_driver")
    implementation = implementation_of(scenario)
    if implementation is None:
        raise StepFailed("the driver's prepare log needs a started driver")
    return Path(fill(driver["prepare_log"], {"workdir": implementation.workdir}))


@then("the driver never prepared a device for two claims at once on a node",
      check="node_side_exclusive")
def node_side_exclusive(scenario: Scenario) -> None:
    """From what the nodes show when the profile says where (node_state), else from the
    driver's own prepare log."""
    if concept(scenario, "device_driver").get("node_state"):
        snapshots = scenario.recall("node state").snapshots()
        scenario.judge(Judgement("node_state_exclusive", {"node_state": snapshots,
                                                          "namespace": scenario.namespace}))
        return
    records = dra.read_prepare_log(_prepare_log(scenario))
    scenario.judge(Judgement("node_side_exclusive", {"prepare_log": records}))


@then("no claim was re-allocated or freed while in use", check="never_deallocated_in_use")
def never_deallocated_in_use(scenario: Scenario) -> None:
    scenario.judge(Judgement("never_deallocated_in_use"))


@then("nothing was allocated from the deleted node's devices",
      check="nothing_from_gone_slices")
def nothing_from_deleted_node(scenario: Scenario) -> None:
    scenario.judge(Judgement("nothing_from_gone_slices",
                             {"node": scenario.recall("deleted node")}))


def _listening(name: str, port: int) -> dict:
    """A listener container (it writes what it sees to its log as it starts, D13)."""
    container = workloads.listening(port)
    container["name"] = name
    return container


@given("a pod {name:Name} whose container {first:Name} uses a claimed device and whose "
       "container {second:Name} does not")
def pod_with_a_container_that_asks(scenario: Scenario, name: str, first: str,
                                   second: str) -> None:
    """The second container shares the pod, and with it the pod's claim, but its resources
    name no claim: it must see none of the devices (secure accelerator access)."""
    template = device_claim(scenario, "ResourceClaimTemplate", f"{name}-device")
    spec = claiming_pod_spec({"resourceClaimTemplateName": template},
                             {"containers": [_listening(first, 8080),
                                             _listening(second, 8081)]})
    create_pod(scenario, name, spec)


@given("a pod {name:Name} that uses no claim")
def pod_without_a_claim(scenario: Scenario, name: str) -> None:
    create_pod(scenario, name, {"containers": [_listening("main", 8080)],
                                "terminationGracePeriodSeconds": CLAIMING_GRACE_SECONDS})


def container_views(scenario: Scenario) -> list[dict]:
    """What each listener container of the scenario's pods wrote it sees (its log, read
    through the API server from its node's kubelet), with its pod, uid and node; one not
    running has no view, and says why. Only a listener says what it sees: the
    implementation's own pods in the namespace are not read."""
    corev1 = kube.core(scenario.api)
    views = []
    for pod in corev1.list_namespaced_pod(scenario.namespace).items:
        listeners = {c.name for c in pod.spec.containers if c.image == workloads.LISTENER_IMAGE}
        statuses = {s.name: s for s in pod.status.container_statuses or []}
        for name in sorted(listeners):
            status = statuses.get(name)
            view = {"pod": pod.metadata.name, "uid": pod.metadata.uid,
                    "container": name, "node": pod.spec.node_name}
            if status is None or status.state is None or status.state.running is None:
                waiting = status.state.waiting if status and status.state else None
                why = f" ({waiting.reason})" if waiting and waiting.reason else ""
                views.append({**view, "lines": [], "complete": False,
                              "error": f"it was not running{why}"})
                continue
            try:
                log = corev1.read_namespaced_pod_log(pod.metadata.name, scenario.namespace,
                                                     container=name)
            except kube.ApiException as exc:
                views.append({**view, "lines": [], "complete": False,
                              "error": f"its log could not be read ({exc.status} {exc.reason})"})
                continue
            lines, complete = dra.seen_lines(log)
            views.append({**view, "lines": lines, "complete": complete})
    return views


@then("every container of the scenario's pods sees exactly the devices of the claims it uses",
      check="sees_own_devices")
def sees_own_devices(scenario: Scenario) -> None:
    scenario.require(Capability.CONTAINERS)
    driver = concept(scenario, "device_driver")
    patterns = (driver.get("seen_in_container") or {}).get("patterns")
    if not patterns:
        raise StepFailed("judged from what a container sees: the profile's device_driver "
                         "concept needs seen_in_container (how a device shows in a container)")
    views = scenario.observe("container views", lambda: container_views(scenario))
    scenario.judge(Judgement("sees_own_devices", {
        "views": views, "driver": driver["driver"], "patterns": patterns,
        "namespace": scenario.namespace}))
