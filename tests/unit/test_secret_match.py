"""A partial manifest of a Secret's values matches the history's form of that Secret: the
recorder keeps a digest of each value (nothing secret reaches a history or a report), and the
step's block is compared in the same form."""

from aftershock.kube import partial
from aftershock.timeline.recorder import recorded_form

SECRET = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
          "metadata": {"name": "db-creds", "namespace": "ns"},
          "data": {"password": "czNjcjN0", "user": "YWRtaW4="}}


def test_a_secrets_value_named_in_a_block_matches_its_recorded_digest():
    recorded = recorded_form(SECRET, "secrets")
    assert recorded["data"]["password"].startswith("sha256:")
    assert partial.matches(recorded_form({"data": {"password": "czNjcjN0"}}, "secrets"),
                           recorded)


def test_another_value_does_not_match_and_the_block_keeps_no_value():
    recorded = recorded_form(SECRET, "secrets")
    other = recorded_form({"data": {"password": "b3RoZXI="}}, "secrets")
    assert not partial.matches(other, recorded)
    assert "b3RoZXI=" not in str(other)


def test_a_block_of_another_kind_is_compared_as_written():
    block = {"data": {"password": "czNjcjN0"}}
    assert recorded_form(block, "configmaps") == block
