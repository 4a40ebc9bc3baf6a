"""A gang made with the implementation's default termination delay carries none of its own:
the field the profile maps is taken out of the manifest template's body."""

from __future__ import annotations

from aftershock.kube.paths import remove


def test_the_mapped_delay_is_taken_out_and_nothing_else():
    body = {"spec": {"replicas": 1, "template": {"terminationDelay": "1h", "cliques": []}}}
    assert remove(body, "spec.template.terminationDelay") == {
        "spec": {"replicas": 1, "template": {"cliques": []}}}


def test_a_path_not_in_the_body_leaves_it_as_it_was():
    body = {"spec": {"minMember": 3}}
    assert remove(body, "spec.absent.terminationDelay") == {"spec": {"minMember": 3}}
