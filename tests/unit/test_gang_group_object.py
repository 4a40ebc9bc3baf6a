"""A gang implementation that makes a group's object itself (Kueue's Workload, from the pods'
group name and total count) has no manifest for it: the group's minimum is its size, and a
step that asks for another minimum is refused before any pod is made."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from aftershock.bdd.steps.gang_scheduler import a_pod_group
from aftershock.profile.load import load_profile
from aftershock.scenario import StepFailed

ROOT = Path(__file__).resolve().parents[2]


def _scenario(profile: str) -> SimpleNamespace:
    loaded = load_profile(ROOT / profile)
    marks: list[str] = []
    return SimpleNamespace(facts={"profile": loaded}, namespace="ns",
                           concept=lambda name: loaded.concept(name),
                           timeline=SimpleNamespace(mark=marks.append), marks=marks)


def test_a_minimum_below_the_size_is_refused_where_the_implementation_makes_the_group():
    scenario = _scenario("profiles/thirdparty/kueue-gang.yaml")
    with pytest.raises(StepFailed, match="minMember 2 must be the group's size, 3"):
        a_pod_group(scenario, "g", 3, 2)
    assert scenario.marks == ["the pods of workload/ns/g: 3 pods, minMember 2"]


def test_the_kueue_pods_name_their_group_and_its_size():
    from aftershock.bdd.steps.gang_scheduler import _manifest

    scenario = _scenario("profiles/thirdparty/kueue-gang.yaml")
    pod = _manifest(scenario, "pod_manifest", {"name": "g", "pod": "g-0", "size": 3,
                                                "min_member": 3,
                                                "scheduler_name": "default-scheduler"})
    assert pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] == "g"
    assert pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] == "3"
