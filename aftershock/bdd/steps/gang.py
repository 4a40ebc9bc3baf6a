"""Steps about gang workloads (the gang concept): capacity shaping and G1-G9."""

from __future__ import annotations

from dataclasses import asdict

from aftershock.bdd.steps.history import judge_deleted_none
from aftershock.bdd.steps.implementation import (
    concept_body,
    dynamic_resource,
    implementation_actor,
)
from aftershock.concepts import concept
from aftershock.concepts.gang import Gang
from aftershock.faults import nodes
from aftershock.kube import api as kube
from aftershock.kube import door, paths, writes
from aftershock.machine.capabilities import Capability
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, given, then, when


@given("a gang {name:Name} of {groups:d} groups of {size:d} pods with minAvailable {minimum:d} "
       "and a termination delay of {delay:d} seconds")
def a_gang(scenario: Scenario, name: str, groups: int, size: int, minimum: int,
           delay: int) -> None:
    mapping = concept(scenario, "gang")
    resource = mapping["resource"]
    duration = mapping.get("termination_delay_format") == "duration"
    wanted = {mapping["groups_path"]: groups, mapping["replicas_path"]: size,
              mapping["min_available_path"]: minimum,
              mapping["termination_delay_path"]: f"{delay}s" if duration else delay}
    scenario.timeline.mark(f"create {resource['kind'].lower()}/{scenario.namespace}/{name}: "
                           f"{groups}x{size} pods, minAvailable {minimum}, delay {delay}s")
    writes.create(dynamic_resource(scenario, resource), concept_body(scenario, mapping, name),
                  scenario.namespace, fields=wanted)
    scenario.remember(f"gang {name} termination delay", delay)


@given("a gang {name:Name} of {groups:d} groups of {size:d} pods with minAvailable {minimum:d} "
       "and the implementation's default termination delay")
def a_gang_as_documented(scenario: Scenario, name: str, groups: int, size: int,
                         minimum: int) -> None:
    """The gang with no termination delay of its own: the implementation's default (its
    webhook's or its controller's) holds, as a user who sets none gets it; judges read the
    delay from the stored object."""
    mapping = concept(scenario, "gang")
    resource = mapping["resource"]
    wanted = {mapping["groups_path"]: groups, mapping["replicas_path"]: size,
              mapping["min_available_path"]: minimum}
    body = concept_body(scenario, mapping, name)
    if mapping.get("termination_delay_path"):
        paths.remove(body, mapping["termination_delay_path"])
    scenario.timeline.mark(f"create {resource['kind'].lower()}/{scenario.namespace}/{name}: "
                           f"{groups}x{size} pods, minAvailable {minimum}, default delay")
    writes.create(dynamic_resource(scenario, resource), body, scenario.namespace, fields=wanted)


def _cordon(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.DESTRUCTIVE)
    if f"node/{node} cordoned" not in scenario.active_faults():
        scenario.inject(nodes.Cordon(scenario.api, node))


@when("I cordon every node no pod of the gang {name:Name} runs on")
def withhold_capacity(scenario: Scenario, name: str) -> None:
    state = scenario.timeline.state()
    used = {p["spec"].get("nodeName") for p in Gang.of(scenario, name).live_pods(state)}
    for node in kube.core(scenario.api).list_node().items:
        if node.metadata.name not in used:
            _cordon(scenario, node.metadata.name)


@when("I cordon every node")
def cordon_all(scenario: Scenario) -> None:
    for node in kube.core(scenario.api).list_node().items:
        _cordon(scenario, node.metadata.name)


@when("I take away the nodes of {count:d} pods of group {group:d} of the gang {name:Name}")
def take_nodes(scenario: Scenario, count: int, group: int, name: str) -> None:
    """Cordon the nodes of ``count`` scheduled pods of the group and delete those pods: with no
    spare capacity their replacements stay Pending."""
    gang = Gang.of(scenario, name)
    pods = sorted((p for p in gang.live_pods(scenario.timeline.state(), group)
                   if p["spec"].get("nodeName")), key=lambda p: p["metadata"]["name"])
    if len(pods) < count:
        raise StepFailed(f"group {group} of gang {name} has {len(pods)} scheduled pods, "
                         f"not {count}")
    corev1 = kube.core(scenario.api)
    for pod in pods[:count]:
        _cordon(scenario, pod["spec"]["nodeName"])
        scenario.timeline.mark(f"delete pod/{scenario.namespace}/{pod['metadata']['name']}")
        door.delete(corev1.delete_namespaced_pod, pod["metadata"]["name"], scenario.namespace)


@when("I uncordon every node")
def uncordon_all(scenario: Scenario) -> None:
    for fault in [f for f in scenario.active_faults() if f.endswith(" cordoned")]:
        scenario.end_fault(fault)


def _delay(scenario: Scenario, name: str) -> float:
    return float(scenario.recall(f"gang {name} termination delay"))


def _known_delay(scenario: Scenario, name: str) -> float | None:
    """The delay a step gave the gang; else the judge reads it from the gang's object."""
    known = scenario.facts.get(f"gang {name} termination delay")
    return float(known) if known is not None else None


@then("group {group:d} of the gang {name:Name} was terminated within {latency:d} seconds once "
      "its breach had lasted its termination delay", check="termination_timed")
def terminated_in_time(scenario: Scenario, group: int, name: str, latency: int) -> None:
    """Every time the group's breach stayed True for the delay (G2: late is judged here, early
    by the step below)."""
    scenario.judge(Judgement("termination_timed", {
        "gang": asdict(Gang.of(scenario, name)), "group": group,
        "delay": _delay(scenario, name), "latency": latency,
        "actor": implementation_actor(scenario)}))


@then("no replica of the gang {name:Name} was recycled before its breach had lasted its "
      "termination delay", check="recycled_after_delay")
def recycled_after_delay(scenario: Scenario, name: str) -> None:
    """Every recycle began while the replica was breached, at least the delay after (G3)."""
    scenario.judge(Judgement("recycled_after_delay", {
        "gang": asdict(Gang.of(scenario, name)), "delay": _delay(scenario, name),
        "actor": implementation_actor(scenario)}))


@then("every regression of the gang {name:Name} below minAvailable was breached within "
      "{latency:d} seconds", check="regression_detected")
def regressions_breached(scenario: Scenario, name: str, latency: int) -> None:
    scenario.judge(Judgement("regression_detected", {
        "gang": asdict(Gang.of(scenario, name)), "latency": latency, "now": scenario.now}))


@then("the gang {name:Name} was terminated at most {count:d} times",
      check="at_most_terminations")
def terminated_at_most(scenario: Scenario, name: str, count: int) -> None:
    scenario.judge(Judgement("at_most_terminations", {
        "gang": asdict(Gang.of(scenario, name)), "limit": count,
        "actor": implementation_actor(scenario), "delay": _known_delay(scenario, name)}))


@then("the implementation deleted no pod of group {group:d} of the gang {name:Name}",
      check="deleted_by")
def group_untouched(scenario: Scenario, group: int, name: str) -> None:
    actor = implementation_actor(scenario)
    judge_deleted_none(scenario, Gang.of(scenario, name).selector(group), actor, actor,
                       f"group {group} of gang {name}", exact=True)


@then("at no point did group {group:d} of the gang {name:Name} have more than {count:d} live "
      "pods", check="group_never_more_than")
def group_never_more_than(scenario: Scenario, group: int, name: str, count: int) -> None:
    scenario.judge(Judgement("group_never_more_than", {
        "gang": asdict(Gang.of(scenario, name)), "group": group, "limit": count,
        "actor": implementation_actor(scenario), "delay": _known_delay(scenario, name)}))


@then("group {group:d} of the gang {name:Name} got one warning per drop to zero scheduled pods",
      check="one_warning_per_drop")
def warned_per_drop(scenario: Scenario, group: int, name: str) -> None:
    scenario.judge(Judgement("one_warning_per_drop", {
        "gang": asdict(Gang.of(scenario, name)), "group": group}))
