"""Steps about gang schedulers (the gang_scheduler concept): pod groups, queues and B1-B7."""

from __future__ import annotations

import time
from dataclasses import asdict
from decimal import Decimal

import yaml
from kubernetes.dynamic.exceptions import ForbiddenError
from kubernetes.utils import parse_quantity

from aftershock.bdd.steps.implementation import dynamic_resource, implementation_actor
from aftershock.bdd.steps.objects import apply as apply_manifests
from aftershock.concepts import NoConcept, concept
from aftershock.concepts.gang_scheduler import PodGroup, Queue
from aftershock.faults import nodes
from aftershock.kube import api as kube
from aftershock.kube import door, workloads, writes
from aftershock.machine import yamlsrc
from aftershock.machine.capabilities import Capability
from aftershock.profile.placeholders import fill
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.timeline.state import node_of

ADMITTED_WITHIN = 10.0  # seconds for a PriorityClass just made to be known to admission


def _manifest(scenario: Scenario, key: str, values: dict[str, object],
              mapping: dict | None = None) -> dict:
    mapping = mapping or concept(scenario, "gang_scheduler")
    path = scenario.facts["profile"].resolve(mapping[key])
    return yamlsrc.manifests(path, fill(path.read_text(), {
        "namespace": scenario.namespace, **values}))[0]


def _queue_part(scenario: Scenario) -> dict:
    part = concept(scenario, "gang_scheduler").get("queue")
    if part is None:
        raise StepFailed(f"profile {scenario.facts['profile'].name} maps no queue (the "
                         "concept part gang_scheduler.queue)")
    return part


def _make_group(scenario: Scenario, name: str, size: int, minimum: int, done: int = 0,
                after: int = 0, queue: str | None = None, millicpu: int = 0,
                claim: dict[str, str] | None = None, pinned: list[str] | None = None,
                group_claim: dict[str, str] | None = None) -> None:
    mapping = concept(scenario, "gang_scheduler")
    resource = mapping["resource"]
    if queue is None:
        queue = (mapping.get("queue") or {}).get("default", "")
    made_here = bool(mapping.get("manifest"))
    scenario.timeline.mark(("create " if made_here else "the pods of ")
                           + f"{resource['kind'].lower()}/{scenario.namespace}/{name}: "
                           f"{size} pods, minMember {minimum}"
                           + (f", queue {queue}" if queue else ""))
    if made_here:
        body = _manifest(scenario, "manifest", {"name": name, "min_member": minimum,
                                                "size": size, "queue": queue})
        fields: dict[str, object] = {mapping["min_member_path"]: minimum}
        if group_claim:  # read back: an API server whose gate is off drops it
            fields[mapping["claims"]["path"]] = [{"name": "device", **group_claim}]
        writes.create(dynamic_resource(scenario, resource), body, scenario.namespace,
                      fields=fields)
    elif minimum != size:
        raise StepFailed(f"profile {scenario.facts['profile'].name} makes no object for a "
                         "group (no gang_scheduler.manifest): the implementation makes it from "
                         f"the pods, with its size as its minimum; minMember {minimum} must be "
                         f"the group's size, {size}")
    pods = dynamic_resource(scenario, {"group": "", "version": "v1", "kind": "Pod"})
    for index in range(size):
        pod = _manifest(scenario, "pod_manifest", {
            "name": name, "pod": f"{name}-{index}", "scheduler_name": mapping["scheduler_name"],
            "queue": queue, "size": size, "min_member": minimum})
        if index < done:
            pod["metadata"].setdefault("annotations", {})[workloads.SUCCEED_AFTER] = f"{after}s"
        if claim:  # one device for its first container: a claim of its own, or the group's
            pod["spec"]["resourceClaims"] = [{"name": "device", **claim}]
            pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [
                {"name": "device"}]
        if millicpu:
            for container in pod["spec"]["containers"]:
                requests = container.setdefault("resources", {}).setdefault("requests", {})
                requests["cpu"] = f"{millicpu}m"
        if pinned:
            pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": pinned[index]}
        writes.apply(pods, pod, scenario.namespace)  # every field read back: a gated field
        # the API server drops (a pod's schedulingGroup without GenericWorkload) is an error


@given("a queue {queue:Name} limited to {millicpu:d}m CPU")
def a_queue(scenario: Scenario, queue: str, millicpu: int) -> None:
    """The scheduler's queue (cluster-wide where its kind is), removed when the scenario
    ends; its limit written in the unit the profile says (KAI: millicores)."""
    part = _queue_part(scenario)
    limit = Decimal(millicpu) / 1000 / parse_quantity(part.get("cpu_unit", "1"))
    path = scenario.facts["profile"].resolve(part["manifest"])
    text = fill(path.read_text(), {"namespace": scenario.namespace, "queue": queue,
                                   "cpu_limit": f"{limit.normalize():f}"})
    apply_manifests(scenario, text, str(path))


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d} in the queue "
       "{queue:Name}, each pod requesting {millicpu:d}m CPU")
def a_queued_pod_group(scenario: Scenario, name: str, size: int, minimum: int, queue: str,
                       millicpu: int) -> None:
    _queue_part(scenario)
    _make_group(scenario, name, size, minimum, queue=queue, millicpu=millicpu)


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d}")
def a_pod_group(scenario: Scenario, name: str, size: int, minimum: int) -> None:
    _make_group(scenario, name, size, minimum)


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d}, each pod claiming "
       "a device")
def a_claiming_pod_group(scenario: Scenario, name: str, size: int, minimum: int) -> None:
    """Each pod claims one device of those 'every node publishes a ResourceSlice' publishes,
    by a ResourceClaimTemplate of the group's (a DeviceClass of that driver, the scenario's):
    the scheduler must allocate a pod's claim on the node it binds it to."""
    template = f"{name}-device"
    _claim_objects(scenario, name, "ResourceClaimTemplate", template,
                   {"spec": {"devices": _one_device(scenario)}})
    _make_group(scenario, name, size, minimum, claim={"resourceClaimTemplateName": template})


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d}, sharing one claim "
       "of a device")
def a_sharing_pod_group(scenario: Scenario, name: str, size: int, minimum: int) -> None:
    """Every pod names one ResourceClaim of the group's, for one device of those 'every node
    publishes a ResourceSlice' publishes (kubernetes#137617): the scheduler must allocate it
    once, on a node it then binds every pod of the group to."""
    claim = _shared_claim(scenario, name)
    _make_group(scenario, name, size, minimum, claim=claim)


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d}, sharing one claim "
       "of a device, each pod held to a node of its own")
def a_sharing_pod_group_apart(scenario: Scenario, name: str, size: int, minimum: int) -> None:
    """As 'sharing one claim of a device', each pod with a node selector for another node (by
    name: pod 0 the first). A node-local device cannot be shared across nodes: such a group is
    never bound whole, and no pod of it should be bound (kubernetes#140087: a pod of the group
    reused the claim's pending allocation on a node where its device is not, and was bound
    there)."""
    nodes = sorted(n.metadata.name for n in kube.core(scenario.api).list_node().items)
    if len(nodes) < size:
        raise StepFailed(f"{size} pods each on a node of its own need {size} nodes; the "
                         f"cluster has {len(nodes)}")
    claim = _shared_claim(scenario, name)
    _make_group(scenario, name, size, minimum, claim=claim, pinned=nodes[:size])


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d}, sharing one claim "
       "of a device reserved for the group")
def a_group_claiming_pod_group(scenario: Scenario, name: str, size: int, minimum: int) -> None:
    """As 'sharing one claim of a device', the claim named by the group's object too (KEP-5729:
    a PodGroup's spec.resourceClaims, each pod's entry matching it exactly), so the scheduler
    reserves it for the group instead of for each pod."""
    if not concept(scenario, "gang_scheduler").get("claims"):
        raise NoConcept(f"profile {scenario.facts['profile'].name} does not provide the "
                        "concept 'gang_scheduler.claims'")
    claim = _shared_claim(scenario, name)
    _make_group(scenario, name, size, minimum, claim=claim, group_claim=claim)


def _shared_claim(scenario: Scenario, group: str) -> dict[str, str]:
    """The group's one ResourceClaim, made; how a pod (or the group's object) names it."""
    claim = f"{group}-device"
    _claim_objects(scenario, group, "ResourceClaim", claim, {"devices": _one_device(scenario)})
    return {"resourceClaimName": claim}


def _one_device(scenario: Scenario) -> dict:
    """A request for one device of the DeviceClass the scenario's published devices are in."""
    if scenario.facts.get("published slices") is None:
        raise StepFailed("no earlier step published devices for the pods to claim ('every "
                         "node publishes a ResourceSlice')")
    return {"requests": [{"name": "device", "exactly": {
        "deviceClassName": f"{scenario.namespace}-device"}}]}


def _claim_objects(scenario: Scenario, group: str, kind: str, name: str, spec: dict) -> None:
    """The DeviceClass of the published devices' driver, and the group's claim object."""
    driver = scenario.facts["published slices"]
    api_version = kube.dra_api_version(scenario.api)
    apply_manifests(scenario, yaml.safe_dump_all([
        {"apiVersion": api_version, "kind": "DeviceClass",
         "metadata": {"name": f"{scenario.namespace}-device"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}},
        {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": spec}]),
        f"the claims of pod group {group}")


@given("a pod group {name:Name} of {size:d} pods with minMember {minimum:d}, {done:d} of which "
       "succeed {after:d} seconds after they run")
def a_completing_pod_group(scenario: Scenario, name: str, size: int, minimum: int, done: int,
                           after: int) -> None:
    """Pods that finish: the embedded cluster's kwok turns a Running pod annotated
    aftershock.io/succeed-after Succeeded that long after."""
    if done > size:
        raise StepFailed(f"{done} of {size} pods cannot succeed")
    _make_group(scenario, name, size, minimum, done, after)


@when("I delete {count:d} bound pods of the pod group {name:Name}")
def delete_bound(scenario: Scenario, count: int, name: str) -> None:
    group = PodGroup.of(scenario, name)
    bound = sorted(group.bound(scenario.timeline.state()), key=lambda p: p["metadata"]["name"])
    if len(bound) < count:
        raise StepFailed(f"{group.ref} has {len(bound)} bound pods, not {count}")
    corev1 = kube.core(scenario.api)
    for pod in bound[:count]:
        scenario.timeline.mark(f"delete pod/{scenario.namespace}/{pod['metadata']['name']}")
        door.delete(corev1.delete_namespaced_pod, pod["metadata"]["name"], scenario.namespace)


@when("I cordon every node no pod of the pod group {name:Name} is bound to")
def withhold_free_nodes(scenario: Scenario, name: str) -> None:
    """Uncordoned when the scenario ends: only the group's nodes take a new pod."""
    scenario.require(Capability.DESTRUCTIVE)
    group = PodGroup.of(scenario, name)
    used = {node_of(p) for p in group.bound(scenario.timeline.state())}
    for node in sorted(n.metadata.name for n in kube.core(scenario.api).list_node().items):
        if node not in used and f"node/{node} cordoned" not in scenario.active_faults():
            scenario.inject(nodes.Cordon(scenario.api, node))


@when("a pod {pod:Name} of a higher priority than the pod group {name:Name} is created")
def a_preemptor(scenario: Scenario, pod: str, name: str) -> None:
    """From the profile's gang_scheduler.preemption.pod_manifest, in a PriorityClass of value
    1000000 made for it (the group's pods have none: 0), removed when the scenario ends."""
    mapping = concept(scenario, "gang_scheduler")
    part = mapping.get("preemption")
    if part is None:
        raise StepFailed(f"profile {scenario.facts['profile'].name} maps no preemption (the "
                         "concept part gang_scheduler.preemption)")
    PodGroup.of(scenario, name)
    priority_class = f"aftershock-higher-{scenario.namespace}"[:63]
    apply_manifests(scenario, yaml.safe_dump({
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": priority_class}, "value": 1000000,
        "description": f"a pod of {scenario.namespace} that may preempt"}), "the step")
    body = _manifest(scenario, "pod_manifest", {
        "pod": pod, "scheduler_name": mapping["scheduler_name"],
        "priority_class": priority_class}, part)
    scenario.timeline.mark(f"create pod/{scenario.namespace}/{pod} in priority class "
                           f"{priority_class}")
    pods = dynamic_resource(scenario, {"group": "", "version": "v1", "kind": "Pod"})
    deadline = time.monotonic() + ADMITTED_WITHIN
    while True:
        try:
            writes.apply(pods, body, scenario.namespace)
            return
        except ForbiddenError as exc:
            # the API server's priority admission reads classes from its informer, which
            # may not have the one just made: it says so, and the same request passes later
            if "no PriorityClass" not in str(exc) or time.monotonic() > deadline:
                raise
        scenario.wait_until(lambda state: False, 0.2)


@when("{replicas:d} single pods are created")
def single_pods(scenario: Scenario, replicas: int) -> None:
    """Pods of no group for the gang scheduler, single-0 and on, from the profile's
    gang_scheduler.single.pod_manifest: each competes with the groups for room."""
    mapping = concept(scenario, "gang_scheduler")
    part = mapping.get("single")
    if part is None:
        raise StepFailed(f"profile {scenario.facts['profile'].name} maps no single pods (the "
                         "concept part gang_scheduler.single)")
    scenario.timeline.mark(f"create {replicas} single pods")
    pods = dynamic_resource(scenario, {"group": "", "version": "v1", "kind": "Pod"})
    for index in range(replicas):
        body = _manifest(scenario, "pod_manifest", {
            "pod": f"single-{index}", "scheduler_name": mapping["scheduler_name"]}, part)
        writes.apply(pods, body, scenario.namespace)


@when("a node no pod of the pod group {name:Name} is bound to fails")
def fail_a_free_node(scenario: Scenario, name: str) -> None:
    """The first node by name that holds no pod of the group: its kubelet stops (a node
    failure, reverted when the scenario ends); "the failed node" from then on."""
    scenario.require(Capability.NODE_FAILURE)
    group = PodGroup.of(scenario, name)
    used = {node_of(p) for p in group.bound(scenario.timeline.state())}
    free = sorted(n.metadata.name for n in kube.core(scenario.api).list_node().items
                  if n.metadata.name not in used)
    if not free:
        raise StepFailed(f"every node holds a pod of {group.ref}")
    scenario.remember("failed node", free[0])
    scenario.inject(nodes.NodeFailure(scenario.cluster, free[0]))


@when("I delete the pod group {name:Name}")
def delete_group(scenario: Scenario, name: str) -> None:
    """Its pods, then its object."""
    group = PodGroup.of(scenario, name)
    corev1 = kube.core(scenario.api)
    for pod in group.pods(scenario.timeline.state()):
        if not pod["metadata"].get("deletionTimestamp"):
            door.delete(corev1.delete_namespaced_pod, pod["metadata"]["name"],
                        scenario.namespace, missing_ok=True)
    resource = concept(scenario, "gang_scheduler")["resource"]
    scenario.timeline.mark(f"delete {group.ref}")
    made_here = bool(concept(scenario, "gang_scheduler").get("manifest"))
    # an object the implementation makes may not be there yet, or already gone
    writes.delete(dynamic_resource(scenario, resource), name, scenario.namespace,
                  missing_ok=not made_here)


def _group(scenario: Scenario, name: str) -> dict:
    return asdict(PodGroup.of(scenario, name))


@then("the gang scheduler bound the pod group {name:Name} all or nothing within {window:d} "
      "seconds", check="all_or_nothing")
def all_or_nothing(scenario: Scenario, name: str, window: int) -> None:
    scenario.judge(Judgement("all_or_nothing", {"group": _group(scenario, name),
                                                "window": window}))


@then("once the gang scheduler evicted a pod of the pod group {name:Name} for pod "
      "{preemptor:Name}, that pod was bound within {within:d} seconds",
      check="preemption_paid_off")
def preemption_paid_off(scenario: Scenario, name: str, preemptor: str, within: int) -> None:
    scenario.judge(Judgement("preemption_paid_off", {
        "group": _group(scenario, name), "preemptor": preemptor,
        "actor": implementation_actor(scenario), "within": within}))


@then("the gang scheduler bound the pod group {name:Name} within {within:d} seconds whenever "
      "the nodes had room for it", check="bound_when_room")
def bound_when_room(scenario: Scenario, name: str, within: int) -> None:
    scenario.judge(Judgement("bound_when_room", {"group": _group(scenario, name),
                                                 "within": within}))


@then("no claim of an unbound pod of the pod group {name:Name} stayed allocated for more than "
      "{within:d} seconds while the group was below its minimum", check="holds_no_device")
def holds_no_device(scenario: Scenario, name: str, within: int) -> None:
    scenario.judge(Judgement("holds_no_device", {"group": _group(scenario, name),
                                                 "within": within}))


@then("the gang scheduler bound no pod of the pod group {name:Name} onto a cordoned, tainted "
      "or NotReady node", check="bound_onto_fit_nodes")
def onto_fit_nodes(scenario: Scenario, name: str) -> None:
    scenario.judge(Judgement("bound_onto_fit_nodes", {"group": _group(scenario, name),
                                                      "grace": 2.0}))


@then("once the gang scheduler evicted a pod of the pod group {name:Name}, the whole group was "
      "gone within {window:d} seconds", check="evicted_whole")
def evicted_whole(scenario: Scenario, name: str, window: int) -> None:
    scenario.judge(Judgement("evicted_whole", {"group": _group(scenario, name),
                                               "actor": implementation_actor(scenario),
                                               "window": window}))


@then("the gang scheduler evicted no pod of the pod group {name:Name} while it kept its "
      "minimum", check="kept_not_evicted")
def kept_not_evicted(scenario: Scenario, name: str) -> None:
    scenario.judge(Judgement("kept_not_evicted", {"group": _group(scenario, name),
                                                  "actor": implementation_actor(scenario)}))



@then("the pods the gang scheduler bound through the queue {queue:Name} never requested more "
      "CPU than its limit", check="within_queue_limit")
def within_queue_limit(scenario: Scenario, queue: str) -> None:
    _queue_part(scenario)
    scenario.judge(Judgement("within_queue_limit",
                             {"queue": asdict(Queue.of(scenario, queue))}))
