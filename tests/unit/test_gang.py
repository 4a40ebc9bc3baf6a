"""The gang operator's decisions, judged before anything is written (pure: no cluster)."""

from datetime import UTC, datetime, timedelta

import pytest
from kubernetes import client

from implementations.gang.decisions import (
    BREACH,
    GANG_LABEL,
    GROUP_LABEL,
    after_termination,
    breach_condition,
    by_group,
    format_time,
    group_status,
    parse_time,
    plan_pods,
    previous_groups,
    scheduled_zero,
    terminate_due,
)

NOW = datetime(2026, 11, 22, 5, 0, 0, 123456, tzinfo=UTC)
MIN, SIZE, TD = 3, 3, 5.0
VARIANTS = ("faulty", "correct")


def _pod(name, group=0, node="node-1", ready=True, deleting=False, phase="Running", age=0):
    labels = {GANG_LABEL: "g", GROUP_LABEL: str(group)} if group is not None else {GANG_LABEL: "g"}
    conditions = [client.V1PodCondition(type="Ready", status="True" if ready else "False")]
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, uid=f"uid-{name}", labels=labels,
                                     creation_timestamp=NOW - timedelta(seconds=age),
                                     deletion_timestamp=NOW if deleting else None),
        spec=client.V1PodSpec(containers=[], node_name=node),
        status=client.V1PodStatus(phase=phase, conditions=conditions))


def _pods(scheduled, pending=0):
    return ([_pod(f"s{i}", node=f"node-{i}") for i in range(scheduled)]
            + [_pod(f"p{i}", node=None, ready=False, phase="Pending") for i in range(pending)])


def _status(scheduled, previous, variant, now=NOW, pending=0):
    return group_status(0, _pods(scheduled, pending), previous, MIN, variant, now)


def _cond(group):
    cond = breach_condition(group)
    return cond["status"], cond["reason"]


def _healthy(variant, now=NOW - timedelta(minutes=1)):
    return _status(MIN, None, variant, now)


def test_time_round_trips_with_microseconds_in_utc():
    assert format_time(NOW) == "2026-11-22T05:00:00.123456Z"
    assert parse_time("2026-11-22T05:00:00.123456Z") == NOW
    assert parse_time("2026-11-22T05:00:00Z") == NOW.replace(microsecond=0)
    assert parse_time(None) < NOW and parse_time("soon") < NOW


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_status_shape(variant):
    group = _status(2, None, variant, pending=1)
    assert group == {"index": 0, "scheduled": 2, "ready": 2, "healthy": False, "conditions": [{
        "type": BREACH, "status": "False", "reason": "Starting",
        "message": "gang replica 0: 2 scheduled, minAvailable 3",
        "lastTransitionTime": "2026-11-22T05:00:00.123456Z"}]}
    assert _status(MIN, None, variant)["healthy"] is True
    assert _cond(_status(MIN, None, variant)) == ("False", "Healthy")


@pytest.mark.parametrize("scheduled", [0, 1, 2])
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_gang_never_healthy_is_starting_not_breached(variant, scheduled):
    group = _status(scheduled, None, variant, pending=SIZE - scheduled)
    assert _cond(group) == ("False", "Starting") and not group["healthy"]
    assert not terminate_due(group, TD, NOW + timedelta(hours=1))


@pytest.mark.parametrize("scheduled", [1, 2])
def test_correct_breaches_a_partial_regression(scheduled):
    group = _status(scheduled, _healthy("correct"), "correct", pending=SIZE - scheduled)
    assert _cond(group) == ("True", "BelowMinAvailable")
    assert group["healthy"] is True
    assert breach_condition(group)["lastTransitionTime"] == format_time(NOW)


@pytest.mark.parametrize("scheduled", [1, 2])
def test_faulty_suppresses_a_partial_regression_as_starting(scheduled):
    """The incident: a once-healthy gang at 0 < scheduled < minAvailable reads as starting."""
    group = _status(scheduled, _healthy("faulty"), "faulty", pending=SIZE - scheduled)
    assert _cond(group) == ("False", "Starting")
    assert group["healthy"] is True


@pytest.mark.parametrize("variant", VARIANTS)
def test_both_breach_a_drop_to_zero(variant):
    group = _status(0, _healthy(variant), variant, pending=SIZE)
    assert _cond(group) == ("True", "BelowMinAvailable")


def test_faulty_never_terminates_a_partial_regression():
    """Stuck: capacity withheld, the gang below minAvailable, no termination however long."""
    group = _healthy("faulty")
    for second in range(0, 600, 7):
        group = _status(2, group, "faulty", NOW + timedelta(seconds=second), pending=1)
        assert not terminate_due(group, TD, NOW + timedelta(seconds=second))


def test_correct_terminates_a_partial_regression_after_the_delay():
    group = _status(2, _healthy("correct"), "correct", pending=1)
    for second in (0.0, 1.0, 4.999):
        later = NOW + timedelta(seconds=second)
        group = _status(2, group, "correct", later, pending=1)
        assert not terminate_due(group, TD, later)
    assert terminate_due(group, TD, NOW + timedelta(seconds=TD))


@pytest.mark.parametrize("variant", VARIANTS)
def test_transition_time_moves_only_when_the_status_does(variant):
    healthy = _healthy(variant)
    since = breach_condition(healthy)["lastTransitionTime"]
    later = NOW + timedelta(seconds=3)
    again = _status(MIN, healthy, variant, later)
    assert breach_condition(again)["lastTransitionTime"] == since
    starting = _status(1, None, variant, NOW, pending=2)
    more = _status(2, starting, variant, later, pending=1)  # message changes, status does not
    assert breach_condition(more)["message"] != breach_condition(starting)["message"]
    assert breach_condition(more)["lastTransitionTime"] == format_time(NOW)
    breached = _status(0, healthy, variant, later, pending=SIZE)
    assert breach_condition(breached)["lastTransitionTime"] == format_time(later)


def test_a_breach_that_stays_keeps_its_transition_time():
    breached = _status(2, _healthy("correct"), "correct", pending=1)
    deeper = _status(1, breached, "correct", NOW + timedelta(seconds=2), pending=2)
    assert _cond(deeper) == ("True", "BelowMinAvailable")
    assert breach_condition(deeper)["lastTransitionTime"] == format_time(NOW)


@pytest.mark.parametrize("variant", VARIANTS)
def test_recovery_is_false_with_reason_recovered(variant):
    breached = _status(0, _healthy(variant), variant, pending=SIZE)
    later = NOW + timedelta(seconds=2)
    recovered = _status(MIN, breached, variant, later)
    assert _cond(recovered) == ("False", "Recovered")
    assert breach_condition(recovered)["lastTransitionTime"] == format_time(later)
    stays = _status(MIN, recovered, variant, later + timedelta(seconds=9))
    assert _cond(stays) == ("False", "Recovered")
    assert breach_condition(stays)["lastTransitionTime"] == format_time(later)


def test_no_termination_while_false_or_unknown():
    for status in ("False", "Unknown"):
        group = {"index": 0, "scheduled": 1, "conditions": [
            {"type": BREACH, "status": status, "lastTransitionTime": format_time(NOW)}]}
        assert not terminate_due(group, TD, NOW + timedelta(hours=1))
    assert not terminate_due({"index": 0, "scheduled": 1}, TD, NOW + timedelta(hours=1))


@pytest.mark.parametrize("variant", VARIANTS)
def test_one_termination_per_breach_episode(variant):
    """After a termination the replica starts over: while capacity stays withheld it never
    becomes healthy again, so it is never terminated again."""
    scheduled = 0 if variant == "faulty" else 2
    group = _status(scheduled, _healthy(variant), variant, pending=SIZE - scheduled)
    due = NOW + timedelta(seconds=TD)
    assert terminate_due(group, TD, due)
    reset = after_termination(group, due)
    assert reset["healthy"] is False and reset["scheduled"] == 0
    assert _cond(reset) == ("False", "Terminated")
    assert breach_condition(reset)["lastTransitionTime"] == format_time(due)
    group = reset
    for second in range(1, 600, 11):
        later = due + timedelta(seconds=second)
        group = _status(2, group, variant, later, pending=1)
        assert _cond(group) == ("False", "Starting")
        assert not terminate_due(group, TD, later)


def test_scheduled_zero_once_per_transition():
    assert scheduled_zero({"scheduled": 2}, {"scheduled": 0})
    assert not scheduled_zero({"scheduled": 0}, {"scheduled": 0})
    assert not scheduled_zero(None, {"scheduled": 0})
    assert not scheduled_zero({"scheduled": 2}, {"scheduled": 1})


def test_previous_groups_by_index():
    status = {"groups": [{"index": 1, "scheduled": 3}, {"scheduled": 2}, "junk"]}
    assert previous_groups(status) == {1: {"index": 1, "scheduled": 3}}
    assert previous_groups(None) == {}


def test_live_pods_by_group_and_strays():
    pods = [_pod("a", 0), _pod("b", 1), _pod("c", 1, deleting=True), _pod("d", 2),
            _pod("e", None)]
    members, strays = by_group(pods, 2)
    assert {g: [p.metadata.name for p in ps] for g, ps in members.items()} == {0: ["a"],
                                                                                1: ["b"]}
    assert [p.metadata.name for p in strays] == ["d", "e"]


def test_deleted_pods_are_replaced_counting_creations_in_flight():
    live = _pods(1)
    assert plan_pods(live, SIZE, 0) == (2, [])
    assert plan_pods(live, SIZE, 1) == (1, [])
    assert plan_pods(live, SIZE, 5) == (0, [])
    assert plan_pods(_pods(3), SIZE, 0) == (0, [])


def test_surplus_goes_unscheduled_first_then_newest():
    old, new = _pod("old", age=60), _pod("new", age=1)
    pending = _pod("pending", node=None, ready=False, phase="Pending", age=90)
    create, delete = plan_pods([old, new, pending, _pod("mid", age=30)], 2, 0)
    assert create == 0 and [p.metadata.name for p in delete] == ["pending", "new"]


def test_finished_pods_are_deleted_and_replaced_once_gone():
    failed = _pod("failed", phase="Failed", ready=False)
    create, delete = plan_pods([*_pods(2), failed], SIZE, 0)
    assert create == 0 and delete == [failed]
