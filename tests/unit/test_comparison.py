"""A field compared with a value, as the generic authoring steps write it."""

from __future__ import annotations

import pytest

from aftershock.kube.comparison import Comparison, ComparisonError

CLUSTER = {"spec": {"workerGroupSpecs": [{"groupName": "head", "replicas": 1},
                                         {"groupName": "workers", "replicas": 3}],
                    "suspend": False},
           "status": {"state": "ready", "readyWorkerReplicas": 3, "version": "10"}}


@pytest.mark.parametrize(("text", "holds"), [
    ("status.readyWorkerReplicas > 2", True),
    ("status.readyWorkerReplicas > 3", False),
    ("status.readyWorkerReplicas >= 3", True),
    ("status.readyWorkerReplicas < 3.5", True),
    ("status.readyWorkerReplicas == 3.0", True),
    ("spec.workerGroupSpecs[groupName=workers].replicas >= 1", True),
    ("spec.workerGroupSpecs[0].replicas != 1", False),
    ("status.state == ready", True),
    ('status.state == "ready"', True),
    ("status.state != failed", True),
    ("status.version == 10", False),  # the string "10" is not the number 10
    ('status.version == "10"', True),
    ("status.version > 9", False),  # no ordering between a string and a number
    ("spec.suspend == false", True),
    ("spec.suspend == 0", False),  # false is not 0
    ("status.allocation absent", True),
    ("status.allocation exists", False),
    ("status.state exists", True),
    ("status.allocation > 0", False),  # an absent field is no number
    ("status.allocation == null", True),
])
def test_a_comparison_holds_as_its_words_say(text, holds):
    assert Comparison.parse(text).holds(CLUSTER) is holds


def test_no_object_holds_nothing():
    assert Comparison.parse("status.allocation absent").holds(None) is False


@pytest.mark.parametrize(("text", "says"), [
    ("status.readyWorkerReplicas", "expected <path> <op> <value>"),
    ("status.ready ~ 3", "expected <path> <op> <value>"),
    ("spec.groups[name].x >= 1", "expected [0] or [field=value]"),
    ("spec..x == 1", "cannot read ''"),
    ("spec.x == {a: 1}", "not a map"),
    ("spec.x == [1, 2]", "not a list"),
    ("spec.x == 'unclosed", "not a YAML scalar"),
])
def test_a_malformed_comparison_says_what_was_expected(text, says):
    with pytest.raises(ComparisonError, match=None) as refused:
        Comparison.parse(text)
    assert says in str(refused.value), str(refused.value)


def test_a_comparison_is_written_back_as_its_step_wrote_it_and_negated_for_a_witness():
    assert Comparison.parse("status.state   ==  ready").text == "status.state == ready"
    assert Comparison.parse('status.version == "10"').text == 'status.version == "10"'
    assert Comparison.parse("spec.replicas >= 1").negated() == "spec.replicas < 1"
    assert Comparison.parse("status.allocation exists").negated() == "status.allocation absent"
