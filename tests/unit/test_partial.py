"""A partial manifest matched against an object (Chainsaw's rules, with list selectors)."""

from __future__ import annotations

import pytest
import yaml

from aftershock.kube.partial import PartialError, leaf_paths, matches, mismatches
from aftershock.kube.paths import Key, shown

POD = yaml.safe_load("""
metadata: {name: web-0, labels: {app: web, tier: front}}
spec:
  replicas: 2
  paused: false
  containers:
  - {name: app, image: nginx, ports: [{containerPort: 80}]}
  - {name: sidecar, image: envoy}
status:
  phase: Running
  conditions:
  - {type: Ready, status: "True"}
  - {type: PodScheduled, status: "True"}
""")


# A key with a list selector is written in block style: in a flow map ``[`` opens a list.
@pytest.mark.parametrize("partial", [
    "metadata: {labels: {app: web}}",  # a map: only the keys given
    "spec: {replicas: 2.0}",  # numbers as numbers
    "status:\n  conditions[type=Ready]: {status: 'True'}",  # an element by key
    "spec:\n  containers[1]: {image: envoy}",  # an element by index
    "spec: {containers: [{name: app}, {image: envoy}]}",  # a list: same length, in order
    "status: {allocation: null}",  # null: absent
    "metadata: {}",
    "status: {phase: {}}",  # an empty map: only that it is there, whatever its value
    "spec:\n  containers[name=app]: {ports: [{containerPort: 80}]}",
])
def test_a_partial_manifest_matches_by_the_keys_it_gives(partial):
    assert mismatches(yaml.safe_load(partial), POD) == []


@pytest.mark.parametrize(("partial", "says"), [
    ("metadata: {labels: {app: api}}", "metadata.labels.app: 'web', expected 'api'"),
    ("spec: {replicas: '2'}", "spec.replicas: 2, expected '2'"),  # no string for a number
    ("spec: {paused: 0}", "spec.paused: False, expected 0"),  # false is not 0
    ("status:\n  conditions[type=Ready]: {status: 'False'}",
     "status.conditions[type=Ready].status: 'True', expected 'False'"),
    ("status:\n  conditions[type=Gone]: {status: 'True'}",
     "status.conditions[type=Gone]: absent"),
    ("spec: {containers: [{name: app}]}", "spec.containers: 2 elements, expected 1"),
    ("spec: {containers: [{name: sidecar}, {name: app}]}",
     "spec.containers[0].name: 'app', expected 'sidecar'"),
    ("status: {phase: null}", "status.phase: a string 'Running', expected it absent or null"),
    ("status: {allocation: {}}", "status.allocation: absent"),
    ("spec: {containers: {name: app}}", "spec.containers: a list, expected a map"),
])
def test_every_field_that_does_not_match_is_named_by_its_path(partial, says):
    found = mismatches(yaml.safe_load(partial), POD)
    assert says in found[0], found


def test_every_mismatch_is_listed_not_only_the_first():
    found = mismatches({"metadata": {"labels": {"app": "api", "tier": "back"}}}, POD)
    assert len(found) == 2 and not matches({"metadata": {"name": "web-1"}}, POD)


def test_a_selector_that_cannot_be_read_is_refused_naming_it():
    with pytest.raises(PartialError, match=r"status.conditions\[type\]"):
        mismatches(yaml.safe_load("status:\n  conditions[type]: {status: 'True'}"), POD)
    with pytest.raises(PartialError, match="nest maps"):
        mismatches({"spec": {"containers[0].image": "nginx"}}, POD)


def test_the_leaf_paths_of_a_partial_manifest_are_what_a_schema_must_hold():
    expected = yaml.safe_load("status:\n  conditions[type=Ready]: {status: 'True'}\n"
                              "  phase: null\nspec:\n  containers: [{name: app}]\n")
    assert [shown(path) for path in leaf_paths(expected)] == [
        "status.conditions[type=Ready].status", "status.phase", "spec.containers[0].name"]


def test_a_key_with_dots_is_one_step_of_its_leaf_path():
    """A label or annotation key (app.kubernetes.io/name) is one map key: split at its dots,
    a schema check read it as fields 'app', 'kubernetes' under labels and refused the step."""
    expected = yaml.safe_load("metadata:\n  labels: {app.kubernetes.io/name: web}\n")
    assert leaf_paths(expected) == [[Key("metadata"), Key("labels"),
                                     Key("app.kubernetes.io/name")]]
    assert matches(expected, {"metadata": {"labels": {"app.kubernetes.io/name": "web"}}})
