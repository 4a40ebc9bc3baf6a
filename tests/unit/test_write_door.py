"""Every write the harness makes goes through one door (aftershock/door.py, and aftershock/writes.py
for the resources a profile maps): sent with fieldValidation=Strict, a refusal a harness error,
a patch read back. This fails on any create, patch or replace call anywhere else."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from aftershock import door

PACKAGE = Path(__file__).resolve().parents[2] / "aftershock"
DOORS = {PACKAGE / "door.py", PACKAGE / "writes.py"}
WRITE = re.compile(r"^(create|patch|replace)(_|$)")
# Calls named like writes that write nothing to a cluster.
NOT_WRITES = {"create_default_context", "create_connection", "create_cluster", "create_server"}
THROUGH = {"writes", "door", "pkimod"}  # the doors themselves, and the PKI module's create()


def writes_outside_the_door() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in DOORS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name, owner = node.func.attr, node.func.value
            via = owner.id if isinstance(owner, ast.Name) else ""
            # a dynamic resource's bare create/patch/replace takes a body (str.replace does not)
            bare = name in ("create", "patch", "replace")
            if bare and not any(k.arg == "body" for k in node.keywords):
                continue
            if WRITE.match(name) and name not in NOT_WRITES and via not in THROUGH:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {name}")
    return found


def test_no_write_goes_around_the_door():
    assert writes_outside_the_door() == []


def test_the_scan_finds_a_write_around_the_door(tmp_path, monkeypatch):
    """The test above can fail: a module that patches a node directly is found."""
    (tmp_path / "aftershock").mkdir()
    (tmp_path / "aftershock" / "rogue.py").write_text(
        "def cordon(core):\n    core.patch_node('n1', {'spec': {'unschedulable': True}})\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "aftershock")
    assert writes_outside_the_door() == ["aftershock/rogue.py:2: patch_node"]


def test_every_call_is_strict_and_a_refusal_is_a_harness_error():
    sent = {}

    def create_namespaced_secret(namespace, body, **kwargs):
        sent.update(kwargs)
        raise ApiException(status=400, reason="BadRequest")
    with pytest.raises(door.HarnessWriteFailed, match="HTTP 400"):
        door.call(create_namespaced_secret, "ns", {"metadata": {"name": "s"}})
    assert sent == {"field_validation": "Strict"}


def test_a_patch_must_read_back():
    def patch_node(name, body, **kwargs):
        return {"metadata": {"name": name}, "spec": {}}  # the API dropped it
    with pytest.raises(door.HarnessWriteFailed, match=r"\.spec\.unschedulable"):
        door.call(patch_node, "n1", {"spec": {"unschedulable": True}})


def test_what_reads_back():
    stored = {"status": {"conditions": [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-25T19:00:00+00:00"},
        {"type": "PodScheduled", "status": "True"}]}, "metadata": {"finalizers": ["a"]}}
    assert door.unmet({"status": {"conditions": [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-25T19:00:00Z"}]}},
        stored) is None  # a list element held by one stored element; times the server's
    assert door.unmet({"metadata": {"finalizers": None}}, stored) is None  # null removes
    assert door.unmet({"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
                      stored) == ".status.conditions[0]"
