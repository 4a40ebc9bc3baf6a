"""Then steps: properties judged over the recorded history, event by event."""

from __future__ import annotations

from aftershock import checks, phrases, workloads
from aftershock.checks import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.scenario import Scenario, StepFailed, then
from aftershock.timeline.entry import WATCH


def _condition(scenario: Scenario, text: str) -> phrases.Condition:
    try:
        return phrases.build_condition(text, scenario)
    except phrases.PhraseError as exc:
        raise StepFailed(str(exc)) from None


def _event(scenario: Scenario, text: str) -> checks.Event:
    try:
        return phrases.build_event(text, scenario)
    except phrases.PhraseError as exc:
        raise StepFailed(str(exc)) from None


@then("within {seconds:d} seconds {condition}", phrases={"condition": "condition"})
def within(scenario: Scenario, seconds: int, condition: str) -> None:
    """Returns as soon as a recorded event makes the condition true."""
    wanted = _condition(scenario, condition)
    start = scenario.now
    scenario.wait_until(wanted.holds, seconds)
    scenario.judge(checks.eventually(scenario.history(), wanted.holds, wanted.description,
                                     start=start, within=seconds, now=scenario.now,
                                     resources=wanted.resources))


@then("for {seconds:d} seconds {condition} holds", phrases={"condition": "condition"})
def holds_for(scenario: Scenario, seconds: int, condition: str) -> None:
    wanted = _condition(scenario, condition)
    start = scenario.now
    end = start + seconds
    # Returns early if the condition breaks: the verdict is then already decided.
    scenario.wait_until(lambda state: not wanted.holds(state) or scenario.now >= end, seconds)
    scenario.judge(checks.stays_for(scenario.history(), wanted.holds, wanted.description,
                                    start=start, duration=seconds, now=scenario.now))


@then("at no point did {name:Name} have more than {count:d} live pods")
def never_more_than(scenario: Scenario, name: str, count: int) -> None:
    scenario.judge(checks.never_more_than(
        scenario.history(), count, namespace=scenario.namespace,
        selector=workloads.selector_labels(name), what=f"live pods of {name}"))


def _pod_names(scenario: Scenario, name: str) -> set[str]:
    labels = workloads.selector_labels(name)
    return {e.name for e in scenario.timeline.entries
            if e.kind == WATCH and e.resource == "pods" and e.namespace == scenario.namespace
            and all((((e.object or {}).get("metadata") or {}).get("labels") or {}).get(k) == v
                    for k, v in labels.items())}


def _attribution(scenario: Scenario, prop: str) -> list | None:
    if scenario.recorder is None or not scenario.recorder.has_audit:
        scenario.judge(Verdict(prop, UNKNOWN, "this cluster gives no audit log to attribute "
                               "actions to actors"))
        return None
    scenario.recorder.sync_audit()
    return scenario.timeline.entries


@then("no pod of {name:Name} was deleted by {actor}")
def none_deleted_by(scenario: Scenario, name: str, actor: str) -> None:
    entries = _attribution(scenario, "deleted_by")
    if entries is None:
        return
    is_actor = checks.actor_matches(actor)
    deleting = checks.pod_deleted(scenario.namespace, _pod_names(scenario, name))
    guilty = [e for e in entries if e.kind == "audit" and deleting(e) and is_actor(e.actor)]
    origin = entries[0].mono if entries else 0.0
    if guilty:
        scenario.judge(Verdict("deleted_by", VIOLATED, f"{actor} deleted or evicted "
                               f"{len(guilty)} pods of {name}", guilty, origin))
    else:
        scenario.judge(Verdict("deleted_by", PASS, f"{actor} deleted no pod of {name}"))


@then("exactly {count:d} pods of {name:Name} were created by {actor}")
def created_by(scenario: Scenario, count: int, name: str, actor: str) -> None:
    entries = _attribution(scenario, "created_by")
    if entries is None:
        return
    is_actor = checks.actor_matches(actor)
    creating = checks.pod_created(scenario.namespace, workloads.selector_labels(name))
    made = [e for e in entries if e.kind == "audit" and creating(e) and is_actor(e.actor)]
    origin = entries[0].mono if entries else 0.0
    status = PASS if len(made) == count else VIOLATED
    scenario.judge(Verdict("created_by", status, f"{actor} created {len(made)} pods of {name} "
                           f"(expected exactly {count})", made if status != PASS else [],
                           origin))


@then("{first} happened before {second}", phrases={"first": "event", "second": "event"})
def happened_before(scenario: Scenario, first: str, second: str) -> None:
    scenario.judge(checks.happened_before(scenario.history(), _event(scenario, first),
                                          _event(scenario, second)))


@then("{later} happened no earlier than {seconds:d} seconds after {earlier}",
      phrases={"later": "event", "earlier": "event"})
def no_earlier_than(scenario: Scenario, later: str, seconds: int, earlier: str) -> None:
    scenario.judge(checks.no_earlier_than(scenario.history(), _event(scenario, later),
                                          _event(scenario, earlier), delay=seconds))


@then("{condition} held at every recorded event", phrases={"condition": "condition"})
def held_throughout(scenario: Scenario, condition: str) -> None:
    wanted = _condition(scenario, condition)
    scenario.judge(checks.always(scenario.history(), wanted.holds, wanted.description,
                                 resources=set(wanted.resources)))


@then("every change of condition {type:w} of {kind:w}/{name:Name} moved its "
      "lastTransitionTime")
def honest_transition_times(scenario: Scenario, type: str, kind: str, name: str) -> None:
    resource = phrases.resource_of(kind)
    namespace = "" if resource in phrases.CLUSTER_SCOPED else scenario.namespace
    scenario.judge(checks.honest_transitions(scenario.history(), resource, namespace, name,
                                             type))
