"""One rule for an absent field (issue 43): Kubernetes omits a zero counter, so where the schema
types a field as a number its absence is 0; elsewhere an ordering on it is undecided. A list
selector that selects nothing is no pass. These fail on 86c0d82, where 'at no point had
readyReplicas < 1' passed over an outage that 'kept readyReplicas >= 1' called a violation."""

from __future__ import annotations

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from tests.unit.test_earned_violations import NS, History
from tests.verdict_corpus import keep


def judge(check: str, params: dict, history: list):
    return properties.judge([check], Judgement(check, params), history)


def _deployment(ready: int | None, conditions: tuple[str, ...] = ("Available",)) -> dict:
    status: dict = {"conditions": [{"type": kind, "status": "True"} for kind in conditions]}
    if ready is not None:
        status["readyReplicas"] = ready
    return {"metadata": {"name": "web", "namespace": NS, "uid": "uid-web"},
            "spec": {"replicas": 3}, "status": status}


WEB = {"resource": "deployments", "namespace": NS, "name": "web", "shown": "deployment/web"}


def _outage() -> History:
    """readyReplicas 3, then omitted (Kubernetes omits a zero counter: none ready), then 3."""
    history = History().watch(0, "deployments", _deployment(3), "ADDED")
    history.watch(1, "deployments", _deployment(None))
    return history.watch(2, "deployments", _deployment(3))


def test_an_omitted_zero_counter_is_zero_where_the_schema_types_it_as_a_number():
    """On 86c0d82 'at no point did deployment/web have status.readyReplicas < 1' PASSED over a
    total outage, while 'every change kept status.readyReplicas >= 1' was VIOLATED over the
    same history: the two steps disagreed."""
    for numeric in (True, None):
        never = judge("never_had", {"object": WEB, "comparison": "status.readyReplicas < 1",
                                    "numeric": numeric}, _outage())
        kept = judge("kept", {"object": WEB, "comparison": "status.readyReplicas >= 1",
                              "numeric": numeric}, _outage())
        assert never.status == kept.status, (never.explain(), kept.explain())
        expected = VIOLATED if numeric else UNKNOWN
        assert never.status == expected, never.explain()
        if numeric:
            params = {"object": WEB, "comparison": "status.readyReplicas < 1", "numeric": True}
            keep("an-omitted-zero-counter", _outage(), Judgement("never_had", params),
                 ["never_had"], {"never_had": VIOLATED}, PASS, "the review of issue 43, item 2")
    assert "it was absent: 0 for a number" in judge(
        "never_had", {"object": WEB, "comparison": "status.readyReplicas < 1", "numeric": True},
        _outage()).summary


def test_a_selector_that_selected_nothing_in_any_state_is_unknown_naming_what_was_there():
    """On 86c0d82 a misspelt value in a list selector passed for ever."""
    history = History().watch(0, "deployments", _deployment(3, ("Available", "Progressing")),
                              "ADDED")
    history.watch(1, "deployments", _deployment(2, ("Available", "Progressing")))
    params = {"object": WEB, "comparison": 'status.conditions[type=Availabel].status == "False"'}
    verdict = judge("never_had", params, history)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "status.conditions[type=Availabel] selected no element in any of its 2 recorded " \
           "states (type there: Available, Progressing)" in verdict.summary
    keep("a-selector-that-selected-nothing", history, Judgement("never_had", dict(params)),
         ["never_had"], {"never_had": UNKNOWN}, PASS, "the review of issue 43, item 2")
    params["comparison"] = 'status.conditions[type=Available].status == "False"'
    assert judge("never_had", params, history).status == PASS


def test_a_selector_key_the_items_do_not_have_is_refused_by_the_schema():
    from aftershock.kube import paths

    schema = {"type": "object", "properties": {"status": {"type": "object", "properties": {
        "conditions": {"type": "array", "items": {"type": "object", "properties": {
            "type": {"type": "string"}, "status": {"type": "string"}}}},
        "readyReplicas": {"type": "integer"}}}}}
    problem = paths.schema_problem(schema, "status.conditions[tpye=Ready].status")
    assert problem is not None and "no field 'tpye' to select one by" in problem
    assert paths.schema_problem(schema, "status.conditions[type=Ready].status") is None
