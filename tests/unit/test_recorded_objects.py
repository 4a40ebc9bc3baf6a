"""What the recorder keeps of an object: no managedFields, and no Secret value."""

from __future__ import annotations

import json

from aftershock.timeline.recorder import _trimmed
from aftershock.timeline.resources import DEFAULT_RESOURCES

SECRET = {"apiVersion": "v1", "type": "Opaque",
          "metadata": {"name": "tls", "namespace": "ns", "resourceVersion": "7",
                       "managedFields": [{"manager": "op", "time": "2026-11-25T10:00:00Z"}]},
          "data": {"tls.key": "c2VjcmV0LWtleQ=="}, "stringData": {"password": "hunter2"}}


def test_a_secret_is_recorded_without_its_values_but_a_change_still_shows():
    kept = _trimmed(SECRET, "secrets")
    text = json.dumps(kept)
    assert "c2VjcmV0LWtleQ==" not in text and "hunter2" not in text
    assert set(kept["data"]) == {"tls.key"} and set(kept["stringData"]) == {"password"}
    assert "managedFields" not in kept["metadata"]
    changed = _trimmed({**SECRET, "data": {"tls.key": "b3RoZXI="}}, "secrets")
    assert changed["data"]["tls.key"] != kept["data"]["tls.key"]
    assert _trimmed(SECRET, "secrets") == kept  # the same value, the same digest


def test_other_kinds_keep_their_data():
    config = {"metadata": {"name": "c"}, "data": {"key": "value"}}
    assert _trimmed(config, "configmaps")["data"] == {"key": "value"}


def test_what_operators_make_beside_their_pods_is_watched():
    """E1 and E2 judge the kinds an implementation creates; one nobody watched made them
    unknown on every plan (kuberay's Services)."""
    watched = {resource.name for resource in DEFAULT_RESOURCES}
    assert {"services", "configmaps", "secrets"} <= watched
