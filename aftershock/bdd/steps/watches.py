"""Steps that delay a watch: of a control-plane component (behind a proxy it is restarted
with) or of the implementation under test."""

from __future__ import annotations

from aftershock.bdd.steps.implementation import delay_implementation
from aftershock.bdd.steps.nodes import component_name
from aftershock.faults.component_delay import DelayedWatch, SlowWrites
from aftershock.faults.watchdelay import Rule
from aftershock.machine.capabilities import Capability
from aftershock.scenario import Scenario, StepFailed, when

RESOURCE_WORDS = {"pod": "pods", "node": "nodes", "lease": "leases", "replicaset": "replicasets",
                  "deployment": "deployments", "statefulset": "statefulsets", "job": "jobs",
                  "event": "events", "persistentvolumeclaim": "persistentvolumeclaims",
                  "resourceclaim": "resourceclaims"}


def _delay_fault(scenario: Scenario, component: str, rules):
    scenario.require(Capability.WATCH_DELAY_FOR_COMPONENTS)
    name = component_name(component)
    workdir = (scenario.report_dir or scenario.cluster.paths.workdir) / "proxy"
    return DelayedWatch(scenario.cluster, name, rules, workdir)


def _proxied(scenario: Scenario, component: str) -> DelayedWatch:
    """The component behind its proxy for the rest of the scenario (restarted there once)."""
    key = f"proxy of {component_name(component)}"
    if key not in scenario.facts:
        fault = _delay_fault(scenario, component, [])
        scenario.inject(fault)
        scenario.remember(key, fault)
    return scenario.recall(key)


def _resource(what: str) -> str:
    if what not in RESOURCE_WORDS:
        raise StepFailed(f"unknown watch '{what}': one of {', '.join(RESOURCE_WORDS)}")
    return RESOURCE_WORDS[what]


def _rule(what: str, seconds: float):
    return Rule(delay=seconds, resource=_resource(what))


@when("the {what:w} watch of the {component} is delayed by {seconds:d} seconds")
def delay_watch(scenario: Scenario, what: str, component: str, seconds: int) -> None:
    if component.strip() == "implementation":
        return delay_implementation(scenario, _rule(what, seconds))
    scenario.inject(_delay_fault(scenario, component, [_rule(what, seconds)]))
    return None


@when("for {duration:d} seconds the {what:w} watch of the {component} is delayed by "
      "{seconds:d} seconds")
def delay_watch_for(scenario: Scenario, duration: int, what: str, component: str,
                    seconds: int) -> None:
    fault = _delay_fault(scenario, component, [_rule(what, seconds)])
    scenario.schedule(fault, start_after=0, duration=duration)


@when("after {offset:d} seconds, for {duration:d} seconds the {what:w} watch of the "
      "{component} is delayed by {seconds:d} seconds")
def delay_watch_later(scenario: Scenario, offset: int, duration: int, what: str,
                      component: str, seconds: int) -> None:
    fault = _delay_fault(scenario, component, [_rule(what, seconds)])
    scenario.schedule(fault, start_after=offset, duration=duration)


@when("the {what:w} writes of the {component} are delayed by {milliseconds:d} milliseconds")
def delay_writes(scenario: Scenario, what: str, component: str, milliseconds: int) -> None:
    """Each write of that resource the component makes (a create, update, patch or delete,
    its status too) waits that long before it reaches the API server, until the scenario ends
    (puts the component behind a proxy first, a restart, if no earlier step did)."""
    resource = _resource(what)
    scenario.inject(SlowWrites(_proxied(scenario, component), resource, milliseconds / 1000))
