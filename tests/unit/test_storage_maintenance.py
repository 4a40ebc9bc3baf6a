"""'member 0 of the storage cluster data is in maintenance with its data moved': what the
application says of itself (app_state), once its rebalance is over; a profile that maps no
app_state has nothing to say it with."""

from __future__ import annotations

import pytest

from aftershock import phrases
from aftershock.concepts import NoConcept
from aftershock.properties.context import Context
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.state import State
from tests.unit.concept_maps import STORAGE

NS = "ns"
TEXT = "member 0 of the storage cluster data is in maintenance with its data moved"


def _condition(mapping: dict):
    phrase, values = phrases.match(phrases.CONDITIONS, TEXT)
    return phrase.build(Context(NS, "p", {"storage_cluster": mapping}), **values)


def _said(seq: int, maintenance: list[int], moved: list[int]) -> Entry:
    obj = {"metadata": {"name": "data", "namespace": NS, "resourceVersion": str(seq)},
           "members": [1, 2], "maintenance": maintenance, "moved": moved}
    return Entry(seq=seq, mono=float(seq), wall=1e9 + seq, kind=WATCH, resource="appstates",
                 namespace=NS, name="data", rv=str(seq), type="MODIFIED", object=obj)


def test_a_member_is_moved_once_the_application_says_its_rebalance_is_over():
    moved = _condition({**STORAGE, "app_state": ["probe"]})
    assert moved.resources == frozenset({"appstates"})
    state = State()
    assert moved.about(state) == 0 and not moved.holds(state)  # nothing said yet
    state.apply(_said(1, [0], []))  # in maintenance, its objects still moving
    assert moved.about(state) == 1 and not moved.holds(state)
    state.apply(_said(2, [0], [0]))
    assert moved.holds(state)


def test_without_app_state_nothing_says_when_the_data_moved():
    with pytest.raises(NoConcept, match="maps no app_state"):
        _condition(STORAGE)
