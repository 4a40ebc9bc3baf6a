"""The node manager's decisions, judged before anything is written (pure: no cluster)."""

from datetime import UTC, datetime, timedelta

import pytest

from implementations.noderecords.__main__ import (
    Assign,
    Record,
    Refuse,
    Release,
    Touch,
    format_time,
    parse_time,
    plan,
    refusal_episodes,
    to_record,
)

NOW = datetime(2026, 11, 22, 4, 30, 1, 123456, tzinfo=UTC)
STALENESS, POLL, SLOTS = 5.0, 1.0, 3
VARIANTS = ("faulty", "correct")


def _record(slot, node, age=0.0):
    return Record(name=f"slot-{slot}", node=node, slot=slot,
                  touched_at=NOW - timedelta(seconds=age), uid=f"uid-{slot}",
                  resource_version=str(100 + slot))


def _plan(records, nodes, variant, now=NOW):
    return plan(records, nodes, now, staleness=STALENESS, poll=POLL, slots=SLOTS,
                variant=variant)


def _released(actions):
    return [a.record.slot for a in actions if isinstance(a, Release)]


def _of(kind, actions):
    return [a for a in actions if isinstance(a, kind)]


def test_time_round_trips_with_microseconds_in_utc():
    assert format_time(NOW) == "2026-11-22T04:30:01.123456Z"
    assert parse_time("2026-11-22T04:30:01.123456Z") == NOW
    assert parse_time(None) < NOW and parse_time("yesterday") < NOW


def test_record_read_from_the_api_object():
    record = to_record({"metadata": {"name": "slot-0", "uid": "u", "resourceVersion": "7"},
                        "spec": {"node": "node-1", "slot": 0,
                                 "touchedAt": "2026-11-22T04:30:01.123456Z"}})
    assert record == Record("slot-0", "node-1", 0, NOW, "u", "7")


def test_every_node_gets_the_lowest_free_slot_by_name():
    for variant in VARIANTS:
        actions = _plan([_record(1, "node-2")], ["node-3", "node-1", "node-2"], variant)
        assert _of(Assign, actions) == [Assign("node-1", 0), Assign("node-3", 2)]


def test_correct_reclaims_slot_0_of_a_vanished_node():
    actions = _plan([_record(0, "gone", age=6), _record(1, "node-2")], ["node-2"], "correct")
    assert _released(actions) == [0]


def test_faulty_never_reclaims_slot_0():
    """The incident: `if record_slot and stale` reads slot 0 as "no slot"."""
    for age in (6, 60, 6000):
        actions = _plan([_record(0, "gone", age=age), _record(1, "node-2")], ["node-2"],
                        "faulty")
        assert _released(actions) == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_highest_slot_of_a_vanished_node_is_reclaimed_by_both(variant):
    actions = _plan([_record(1, "node-2"), _record(2, "gone", age=6)], ["node-2"], variant)
    assert _released(actions) == [2]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_fresh_record_of_a_vanished_node_is_kept_until_stale(variant):
    for slot in (1, 2):
        assert _released(_plan([_record(slot, "gone", age=4.9)], [], variant)) == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_record_of_a_live_node_is_never_reclaimed_but_touched(variant):
    records = [_record(0, "node-1", age=600), _record(1, "node-2", age=600)]
    actions = _plan(records, ["node-1", "node-2"], variant)
    assert _released(actions) == []
    assert [a.record.slot for a in _of(Touch, actions)] == [0, 1]


def test_only_records_older_than_the_poll_period_are_touched():
    actions = _plan([_record(0, "node-1", age=0.5), _record(1, "node-2", age=1.5)],
                    ["node-1", "node-2"], "correct")
    assert _of(Touch, actions) == [Touch(_record(1, "node-2", age=1.5))]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_node_is_refused_when_every_slot_is_held(variant):
    records = [_record(0, "node-1"), _record(1, "node-2"), _record(2, "node-3")]
    actions = _plan(records, ["node-1", "node-2", "node-3", "node-4"], variant)
    assert _of(Refuse, actions) == [Refuse("node-4")]
    assert _of(Assign, actions) == []


def test_correct_gives_the_reclaimed_slot_0_to_the_refused_node():
    records = [_record(0, "node-1", age=3), _record(1, "node-2"), _record(2, "node-3")]
    nodes = ["node-2", "node-3", "node-4"]
    before = _plan(records, nodes, "correct")
    assert _of(Refuse, before) == [Refuse("node-4")] and _released(before) == []
    after = _plan(records, nodes, "correct", now=NOW + timedelta(seconds=3))
    assert _released(after) == [0]
    assert _of(Assign, after) == [Assign("node-4", 0)] and _of(Refuse, after) == []


def test_faulty_keeps_refusing_while_a_vanished_node_holds_slot_0():
    records = [_record(0, "node-1", age=600), _record(1, "node-2"), _record(2, "node-3")]
    actions = _plan(records, ["node-2", "node-3", "node-4"], "faulty")
    assert _released(actions) == []
    assert _of(Refuse, actions) == [Refuse("node-4")] and _of(Assign, actions) == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_node_with_two_records_keeps_the_lowest_slot(variant):
    records = [_record(2, "node-1"), _record(0, "node-1"), _record(1, "node-2")]
    actions = _plan(records, ["node-1", "node-2", "node-3"], variant)
    assert _released(actions) == [2]
    assert _of(Assign, actions) == [Assign("node-3", 2)]


def test_one_refusal_event_per_episode():
    refused = [Refuse("node-4")]
    report, episodes = refusal_episodes(set(), refused)
    assert report == {"node-4"}
    report, episodes = refusal_episodes(episodes, refused)
    assert report == set()
    report, episodes = refusal_episodes(episodes, [Assign("node-4", 0)])
    assert report == set() and episodes == {"node-4"}  # until the record is seen
    report, episodes = refusal_episodes(episodes, [])
    assert episodes == set()
    report, episodes = refusal_episodes(episodes, refused)
    assert report == {"node-4"}
