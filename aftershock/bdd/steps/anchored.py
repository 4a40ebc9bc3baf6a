"""Steps that anchor a fault on what the implementation sees or does (the faults `aftershock
explore` plans, written the same way in the scenarios it finds), and the wait that ends a
workload: the cluster quiet."""

from __future__ import annotations

from aftershock.bdd.steps import objects
from aftershock.bdd.steps.implementation import implementation_of
from aftershock.bdd.steps.watches import RESOURCE_WORDS
from aftershock.checks.differential import REPORTS, Flat, normal, perturbation_over
from aftershock.faults.anchors import EventAnchor, KillAfterWrite, Miss, Stall
from aftershock.kube.discovery import UnknownKind
from aftershock.machine.capabilities import Capability
from aftershock.scenario import Scenario, StepFailed, given, when
from aftershock.sut.in_cluster import InClusterImplementation
from aftershock.sut.observed import ObservedComponent, ObservedImplementation, ObservedInCluster
from aftershock.timeline.entry import QUIET, UNSETTLED, WATCH, Entry

EVENT_TYPES = ("ADDED", "MODIFIED", "DELETED")
VERBS = ("create", "update", "patch", "delete")


def resource_of(scenario: Scenario, word: str) -> str:
    """'pod' → pods; a concept's resource by its kind in lower case ('replicagroup'); any
    other kind the cluster serves (or the profile installs) by a word kubectl takes for it."""
    if word in RESOURCE_WORDS:
        return RESOURCE_WORDS[word]
    profile = scenario.facts.get("profile")
    for mapping in (getattr(profile, "concepts", None) or {}).values():
        resource = mapping.get("resource") if isinstance(mapping, dict) else None
        if resource and resource["kind"].lower() == word:
            return resource["plural"]
    try:
        return objects.catalog(scenario).resolve(word).plural
    except UnknownKind as exc:
        raise StepFailed(f"unknown watch '{word}': {exc}") from None


def observe(scenario: Scenario, faults) -> None:
    """The implementation restarts behind the observing proxy, armed with ``faults``; a
    built-in controller's component (the profile's watch_delay_target) does."""
    implementation = implementation_of(scenario)
    profile = scenario.facts["profile"]
    if isinstance(implementation, InClusterImplementation):
        _observe_in_cluster(scenario, implementation, faults)
        return
    if implementation is None and profile.watch_delay_target:
        scenario.require(Capability.COMPONENT_RESTART)
        workdir = (scenario.report_dir or scenario.cluster.paths.workdir) / "observed"
        scenario.inject(ObservedComponent(scenario.cluster, profile.watch_delay_target, faults,
                                          workdir, _marker(scenario)))
        return
    if implementation is None or getattr(implementation, "kubeconfig", None) is None:
        raise StepFailed("anchored faults need an implementation that runs as a process "
                         "(a profile with start:) or a built-in controller's component "
                         "(watch_delay_target:)")
    workdir = (scenario.report_dir or implementation.workdir) / "observed"
    scenario.inject(ObservedImplementation(implementation, faults, workdir, _marker(scenario)))


def _observe_in_cluster(scenario: Scenario, implementation: InClusterImplementation,
                        faults) -> None:
    """Behind a sidecar in its Deployment's pods. A node agent (a DaemonSet) has a pod on
    every node, each its own client, so no one n-th event anchors them all: it runs
    unobserved (explore then plans node faults for it), and an anchored fault is refused."""
    if implementation.spec.deployment is not None:
        scenario.require(Capability.LOAD_IMAGE)
        workdir = (scenario.report_dir or implementation.workdir) / "observed"
        scenario.inject(ObservedInCluster(implementation, faults, workdir, _marker(scenario)))
        return
    if faults:
        raise StepFailed(f"{implementation.profile.name} runs as a DaemonSet, a client on every "
                         "node: a fault anchored on the n-th event one client sees names none")
    scenario.timeline.mark(f"{implementation.profile.name} runs on every node (a DaemonSet): "
                           "its watches and writes are not observed")


def _marker(scenario: Scenario):
    """The moment an anchored fault fires, marked on the timeline (and in its picture) with
    the seconds it lasts (E3 tells a storm from the retries a perturbation causes by it)."""
    return lambda what, seconds: scenario.timeline.mark(f"fired: {what}", lasts=seconds)


def _anchor(scenario: Scenario, what: str, nth: int, type: str) -> EventAnchor:
    if type not in EVENT_TYPES:
        raise StepFailed(f"unknown event type '{type}': one of {', '.join(EVENT_TYPES)}")
    return EventAnchor(resource_of(scenario, what), type, nth, scenario.namespace)


@given("the {what:w} watch of the implementation stalls at its {nth:Ordinal} {type:w} event "
       "for {seconds:d} seconds")
def stalls_at(scenario: Scenario, what: str, nth: int, type: str, seconds: int) -> None:
    """From that event on, the watch is held (in order) for the seconds given: a stale view."""
    observe(scenario, [Stall(_anchor(scenario, what, nth, type), seconds)])


@given("the {what:w} watch of the implementation misses {seconds:d} seconds of events from its "
       "{nth:Ordinal} {type:w} event, then relists")
def misses_from(scenario: Scenario, what: str, seconds: int, nth: int, type: str) -> None:
    """From that event on, nothing of that resource reaches the implementation for the seconds
    given; then its watch gets 410 Gone and it re-lists: the states between are never seen."""
    observe(scenario, [Miss(_anchor(scenario, what, nth, type), seconds)])


@given("the implementation is killed and restarted right after its {nth:Ordinal} write")
def killed_after_write(scenario: Scenario, nth: int) -> None:
    observe(scenario, [KillAfterWrite(nth, namespace=scenario.namespace)])


@given("the implementation is killed and restarted right after its {nth:Ordinal} {what:w} "
       "{verb:w}")
def killed_after(scenario: Scenario, nth: int, what: str, verb: str) -> None:
    """SIGKILL right after the API server answered that write; started again at once."""
    if verb not in VERBS:
        raise StepFailed(f"unknown write '{verb}': one of {', '.join(VERBS)}")
    observe(scenario, [KillAfterWrite(nth, verb, resource_of(scenario, what),
                                      scenario.namespace)])


def last_change(entries: list[Entry], namespace: str, default: float) -> float:
    """When the recorder last saw an object of ``namespace`` change in what it says (its own
    clock: a wait for quiet is the recorder's to time): a heartbeat that only moves a timestamp
    (a record touched every second) is no change, nor is a Kubernetes Event (a report, not an
    object)."""
    seen: dict[tuple[str, str, str], Flat | None] = {}
    last = default
    for entry in entries:
        if entry.kind != WATCH or entry.namespace != namespace or entry.resource in REPORTS:
            continue
        now = None if entry.type == "DELETED" else normal(entry.object or {}, namespace,
                                                          resource=entry.resource)
        if entry.key not in seen or seen[entry.key] != now:
            last = entry.mono
        seen[entry.key] = now
    return last


def last_activity(scenario: Scenario) -> float:
    """When an object of the namespace last changed, or an anchored fault stopped perturbing
    the implementation if that was later: a stalled watch keeps the namespace still while the
    implementation is blind, and an end state judged then is not the one it settles on."""
    entries = scenario.timeline.entries
    return max(last_change(entries, scenario.namespace, scenario.timeline.started),
               perturbation_over(entries))


def wait_quiet(scenario: Scenario, seconds: float, limit: float = 60.0) -> bool:
    """Until no object of the namespace changed for ``seconds`` (woken by recorded events,
    else at the moment the quiet would be complete); False if that took more than ``limit``."""
    end = scenario.now + limit
    while True:
        quiet_at = last_activity(scenario) + seconds
        if quiet_at <= scenario.now:
            return True
        if scenario.now >= end:
            return False
        scenario.wait_until(_grown(scenario, len(scenario.timeline)),
                            min(quiet_at, end) - scenario.now)


def _grown(scenario: Scenario, seen: int):
    return lambda _: len(scenario.timeline) > seen


@when("the namespace is quiet for {seconds:d} seconds")
def namespace_quiet(scenario: Scenario, seconds: int) -> None:
    """Waits (at most a minute) until every anchored fault that fired is over and then nothing
    in the scenario's namespace changed for the seconds given; a namespace that never settles
    is marked, not failed."""
    if not wait_quiet(scenario, seconds):
        scenario.timeline.append(UNSETTLED, resource=QUIET, detail=f"namespace/"
                                 f"{scenario.namespace} was still changing after 60s: its end "
                                 "state is not the one it settles on")


@given("the implementation's watches and writes are observed")
def observed(scenario: Scenario) -> None:
    """The implementation restarts behind the observing proxy, which changes nothing: what an
    explore reference run does, so a plan differs from it by its fault alone."""
    observe(scenario, [])
