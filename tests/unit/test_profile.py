"""Profiles: a typo or a wrong type is one message with file:line, field and expectation."""

import pytest

from aftershock.errors import UserError
from aftershock.sut.profile import load_profile

GOOD = """name: demo
start:
  command: ["python", "-m", "demo", "--kubeconfig", "{kubeconfig}"]
  ready:
    log: started
concepts:
  replica_group:
    resource: {group: aftershock.io, version: v1, plural: replicagroups, kind: ReplicaGroup}
    replicas_path: spec.replicas
    pod_selector: {aftershock.io/group: "{name}"}
"""


def _write(tmp_path, text):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def test_a_good_profile_loads(tmp_path):
    profile = load_profile(_write(tmp_path, GOOD))
    assert profile.name == "demo" and profile.start.ready_log == "started"
    assert profile.concept("replica_group")["replicas_path"] == "spec.replicas"
    assert profile.concept("storage_cluster") is None


@pytest.mark.parametrize(("old", "new", "line", "fragment"), [
    ("  command:", "  comand:", 3,
     "unknown field 'start.comand' (did you mean 'command'?)"),
    ("    replicas_path: spec.replicas\n", "", 7, "field 'concepts.replica_group.replicas_path' "
     "is required: a dotted path like spec.replicas"),
    ('  command: ["python", "-m", "demo", "--kubeconfig", "{kubeconfig}"]', "  command: python",
     3, "field 'start.command' must be a list of strings (the command and its arguments)"),
    ("    log: started", "    log: 3", 5, "field 'start.ready.log' must be a string, got int 3"),
    ("  replica_group:", "  replica_groop:", 7, "(did you mean 'replica_group'?)"),
])
def test_profile_errors_name_file_line_field_and_expectation(tmp_path, old, new, line,
                                                             fragment):
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(UserError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message
