"""Paths that real CRDs need: list elements by index and by key, for reading, creating and
scaling (a JSON patch against the object as it is), checked against the CRD's schema."""

import pytest

from aftershock.kube import paths

RAY = {"spec": {"workerGroupSpecs": [{"groupName": "small", "replicas": 1},
                                     {"groupName": "workers", "replicas": 3}]}}


def test_reading_by_key_and_by_index():
    assert paths.get(RAY, "spec.workerGroupSpecs[groupName=workers].replicas") == 3
    assert paths.get(RAY, "spec.workerGroupSpecs[0].replicas") == 1
    assert paths.get(RAY, "spec.workerGroupSpecs[groupName=none].replicas") is None
    assert paths.get(RAY, "spec.workerGroupSpecs[5].replicas") is None


def test_setting_makes_maps_and_keyed_elements_on_the_way():
    body: dict = {}
    paths.put(body, "spec.workerGroupSpecs[groupName=workers].replicas", 5)
    paths.put(body, "spec.headGroupSpec.rayStartParams", {})
    assert body == {"spec": {"workerGroupSpecs": [{"groupName": "workers", "replicas": 5}],
                             "headGroupSpec": {"rayStartParams": {}}}}
    with pytest.raises(paths.PathError, match="no element 3"):
        paths.put({"spec": {"jobs": []}}, "spec.jobs[3].replicas", 1)


def test_a_scale_is_a_json_patch_that_pins_the_element_it_changes():
    assert paths.patch(RAY, "spec.workerGroupSpecs[groupName=workers].replicas", 5) == [
        {"op": "test", "path": "/spec/workerGroupSpecs/1/groupName", "value": "workers"},
        {"op": "replace", "path": "/spec/workerGroupSpecs/1/replicas", "value": 5}]
    assert paths.patch({"spec": {}}, "spec.replicas", 2) == [
        {"op": "add", "path": "/spec/replicas", "value": 2}]


@pytest.mark.parametrize("wrong", ["spec..replicas", "spec.groups[x].replicas",
                                   "spec.groups[0", ""])
def test_a_path_that_cannot_be_read_is_refused(wrong):
    with pytest.raises(paths.PathError):
        paths.parse(wrong)


SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "replicas": {"type": "integer"},
    "workerGroupSpecs": {"type": "array", "items": {"type": "object", "properties": {
        "groupName": {"type": "string"}, "replicas": {"type": "integer"}}}},
    "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}


def test_the_schema_says_which_paths_it_can_address():
    assert paths.schema_problem(SCHEMA, "spec.workerGroupSpecs[groupName=w].replicas") is None
    assert paths.schema_problem(SCHEMA, "spec.template.anything.at.all") is None
    assert "no field 'workerGroupSpecs[0]'" not in (
        paths.schema_problem(SCHEMA, "spec.workerGroupSpecs[0].replicas") or "")
    assert "no field 'size'" in paths.schema_problem(SCHEMA, "spec.size")
    assert "'spec.replicas' is not a list" in paths.schema_problem(SCHEMA, "spec.replicas[0]")
