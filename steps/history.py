"""Then steps: properties judged over the recorded history, event by event."""

from __future__ import annotations

from aftershock import checks, phrases, workloads
from aftershock.checks import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.scenario import Scenario, StepFailed, then
from aftershock.timeline.entry import WATCH
from aftershock.timeline.state import selects


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


def pod_names(scenario: Scenario, labels: dict[str, str]) -> set[str]:
    """Every pod of the scenario's namespace with these labels, seen at any time."""
    return {e.name for e in scenario.timeline.entries
            if e.kind == WATCH and e.resource == "pods" and e.namespace == scenario.namespace
            and selects(labels, e.object or {})}


def _attribution(scenario: Scenario, prop: str) -> list | None:
    if scenario.recorder is None or not scenario.recorder.has_audit:
        scenario.judge(Verdict(prop, UNKNOWN, "this cluster gives no audit log to attribute "
                               "actions to actors"))
        return None
    scenario.recorder.sync_audit()
    return scenario.timeline.entries


def judge_deleted_none(scenario: Scenario, labels: dict[str, str], is_actor, who: str,
                       what: str) -> None:
    """No pod with ``labels`` was deleted or evicted by an actor ``is_actor`` accepts."""
    entries = _attribution(scenario, "deleted_by")
    if entries is None:
        return
    deleting = checks.pod_deleted(scenario.namespace, pod_names(scenario, labels))
    guilty = [e for e in entries if e.kind == "audit" and deleting(e) and is_actor(e.actor)]
    scenario.judge(Verdict("deleted_by", VIOLATED if guilty else PASS,
                           f"{who} deleted or evicted {len(guilty)} pods of {what}", guilty,
                           entries[0].mono if entries else 0.0))


def judge_created(scenario: Scenario, labels: dict[str, str], count: int, is_actor, who: str,
                  what: str) -> None:
    """Exactly ``count`` pods with ``labels`` were created by an actor ``is_actor`` accepts."""
    entries = _attribution(scenario, "created_by")
    if entries is None:
        return
    creating = checks.pod_created(scenario.namespace, labels)
    made = [e for e in entries if e.kind == "audit" and creating(e) and is_actor(e.actor)]
    status = PASS if len(made) == count else VIOLATED
    scenario.judge(Verdict("created_by", status, f"{who} created {len(made)} pods of {what} "
                           f"(expected exactly {count})", made if status != PASS else [],
                           entries[0].mono if entries else 0.0))


@then("no pod of {name:Name} was deleted by {actor}")
def none_deleted_by(scenario: Scenario, name: str, actor: str) -> None:
    judge_deleted_none(scenario, workloads.selector_labels(name), checks.actor_matches(actor),
                       actor, name)


@then("exactly {count:d} pods of {name:Name} were created by {actor}")
def created_by(scenario: Scenario, count: int, name: str, actor: str) -> None:
    judge_created(scenario, workloads.selector_labels(name), count,
                  checks.actor_matches(actor), actor, name)


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
