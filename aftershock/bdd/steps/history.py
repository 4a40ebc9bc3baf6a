"""Then steps: properties judged over the recorded history, event by event. Each asks the
property registry to judge a check with plain-data parameters; the step's trailing "(R1)"
names the properties it judges."""

from __future__ import annotations

from aftershock import checks, phrases
from aftershock.checks import attribution
from aftershock.kube import workloads
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, then


def condition_of(scenario: Scenario, text: str) -> phrases.Condition:
    try:
        return phrases.build_condition(text, scenario.context())
    except (phrases.PhraseError, LookupError) as exc:
        raise StepFailed(str(exc)) from None


def event_of(scenario: Scenario, text: str) -> checks.Event:
    try:
        return phrases.build_event(text, scenario.context())
    except (phrases.PhraseError, LookupError) as exc:
        raise StepFailed(str(exc)) from None


def eventually(scenario: Scenario, text: str, seconds: float, start: float | None = None):
    """Wait (on recorded events, never polling) until the condition holds or ``seconds`` have
    passed since ``start``, then judge it."""
    wanted = condition_of(scenario, text)
    start = scenario.now if start is None else start
    scenario.wait_until(wanted.holds, max(0.0, start + seconds - scenario.now))
    scenario.judge(Judgement("eventually", {
        "condition": text, "context": scenario.context().to_json(), "start": start,
        "within": seconds, "now": scenario.now}))


@then("within {seconds:d} seconds {condition}", phrases={"condition": "condition"},
      check="eventually")
def within(scenario: Scenario, seconds: int, condition: str) -> None:
    """Returns as soon as a recorded event makes the condition true."""
    eventually(scenario, condition, seconds)


def stays(scenario: Scenario, text: str, seconds: float) -> None:
    wanted = condition_of(scenario, text)
    start = scenario.now
    end = start + seconds
    # Returns early if the condition breaks: the verdict is then already decided.
    scenario.wait_until(lambda state: not wanted.holds(state) or scenario.now >= end, seconds)
    scenario.judge(Judgement("stays_for", {
        "condition": text, "context": scenario.context().to_json(), "start": start,
        "duration": seconds, "now": scenario.now}))


@then("for {seconds:d} seconds {condition} holds", phrases={"condition": "condition"},
      check="stays_for")
def holds_for(scenario: Scenario, seconds: int, condition: str) -> None:
    stays(scenario, condition, seconds)


def never_more(scenario: Scenario, selector: dict[str, str], count: int, what: str) -> None:
    scenario.judge(Judgement("never_more_than", {
        "namespace": scenario.namespace, "selector": selector, "limit": count, "what": what}))


@then("at no point did {name:Name} have more than {count:d} live pods",
      check="never_more_than")
def never_more_than(scenario: Scenario, name: str, count: int) -> None:
    never_more(scenario, workloads.selector_labels(name), count, f"live pods of {name}")


def judge_deleted_none(scenario: Scenario, labels: dict[str, str], actor: str, who: str,
                       what: str, exact: bool = False) -> None:
    """No pod with ``labels`` was deleted or evicted by ``actor`` (a username when ``exact``,
    else words such as 'the replicaset controller')."""
    scenario.judge(Judgement("deleted_by", {
        "namespace": scenario.namespace, "selector": labels, "actor": actor, "exact": exact,
        "who": who, "what": what}))


def judge_deleted_count(scenario: Scenario, labels: dict[str, str], count: int, actor: str,
                        who: str, what: str) -> None:
    """Exactly ``count`` pods with ``labels`` were deleted or evicted by ``actor``."""
    scenario.judge(Judgement("deleted_count", {
        "namespace": scenario.namespace, "selector": labels, "count": count, "actor": actor,
        "exact": True, "who": who, "what": what}))


def judge_created(scenario: Scenario, labels: dict[str, str], count: int, actor: str,
                  who: str, what: str, exact: bool = False) -> None:
    """Exactly ``count`` pods with ``labels`` were created by ``actor``."""
    scenario.judge(Judgement("created_by", {
        "namespace": scenario.namespace, "selector": labels, "count": count, "actor": actor,
        "exact": exact, "who": who, "what": what}))


def username(scenario: Scenario, actor: str) -> str:
    """The username the audit log records for the actor a step names: the implementation's
    own identity for "the implementation", a named component's, a controller's service
    account, or a username with the scenario's namespace filled in."""
    return attribution.username(actor, scenario.implementation_identity, scenario.namespace)


@then("no pod of {name:Name} was deleted by {actor}", check="deleted_by")
def none_deleted_by(scenario: Scenario, name: str, actor: str) -> None:
    judge_deleted_none(scenario, workloads.selector_labels(name), username(scenario, actor),
                       actor, name, exact=True)


@then("exactly {count:d} pods of {name:Name} were created by {actor}", check="created_by")
def created_by(scenario: Scenario, count: int, name: str, actor: str) -> None:
    judge_created(scenario, workloads.selector_labels(name), count, username(scenario, actor),
                  actor, name, exact=True)


@then("no write in the namespace was refused by an admission webhook", check="admitted")
def admitted(scenario: Scenario) -> None:
    """Every write made in the namespace (the steps', the implementation's) was admitted or
    refused for its own reasons, never denied by a webhook that answered."""
    scenario.judge(Judgement("admitted", {"namespace": scenario.namespace}))


@then("{first} happened before {second}", phrases={"first": "event", "second": "event"},
      check="happened_before")
def happened_before(scenario: Scenario, first: str, second: str) -> None:
    event_of(scenario, first), event_of(scenario, second)
    scenario.judge(Judgement("happened_before", {
        "first": first, "second": second, "context": scenario.context().to_json()}))


@then("{later} happened no earlier than {seconds:d} seconds after {earlier}",
      phrases={"later": "event", "earlier": "event"}, check="no_earlier_than")
def no_earlier_than(scenario: Scenario, later: str, seconds: int, earlier: str) -> None:
    event_of(scenario, later), event_of(scenario, earlier)
    scenario.judge(Judgement("no_earlier_than", {
        "event": later, "after": earlier, "delay": seconds,
        "context": scenario.context().to_json()}))


@then("{condition} held at every recorded event", phrases={"condition": "condition"},
      check="always")
def held_throughout(scenario: Scenario, condition: str) -> None:
    always(scenario, condition)


def always(scenario: Scenario, text: str) -> None:
    condition_of(scenario, text)
    scenario.judge(Judgement("always", {"condition": text,
                                        "context": scenario.context().to_json()}))


@then("every change of condition {type:w} of {kind:w}/{name:Name} moved its "
      "lastTransitionTime", check="honest_transition")
def honest_transition_times(scenario: Scenario, type: str, kind: str, name: str) -> None:
    resource = phrases.resource_of(kind)
    namespace = "" if resource in phrases.CLUSTER_SCOPED else scenario.namespace
    scenario.judge(Judgement("honest_transition", {
        "resource": resource, "namespace": namespace, "name": name, "condition": type}))
