"""A write an admission webhook refused is a finding (kueue-2: Kueue's pod webhook refused the
workload's pods, and explore, which stopped the plan there, counted an error): the audit log
keeps the API server's message of a refused request, and the check `admitted` fails on a
webhook's denial, never on a webhook that could not be called (its server down)."""

from __future__ import annotations

from aftershock import properties
from aftershock.checks import PASS, VIOLATED
from aftershock.properties import Judgement
from aftershock.timeline.audit import audit_fields
from aftershock.timeline.entry import AUDIT, Entry
from tests.verdict_corpus import keep

NS = "ns"
DENIAL = ('admission webhook "mpod.kb.io" denied the request: Namespace "ns" not found')
DOWN = ('Internal error occurred: failed calling webhook "mpod.kb.io": failed to call '
        'webhook: connection refused')


def _request(seq: int, code: int, message: str = "", verb: str = "create") -> Entry:
    event = {"verb": verb, "stage": "ResponseComplete", "user": {"username": "admin"},
             "objectRef": {"resource": "pods", "namespace": NS, "name": f"p{seq}",
                           "apiVersion": "v1"},
             "requestReceivedTimestamp": "2026-11-30T10:00:00.000000Z",
             "stageTimestamp": "2026-11-30T10:00:00.100000Z",
             "responseStatus": {"code": code, **({"message": message} if message else {})}}
    return Entry(seq, kind=AUDIT, **{k: v for k, v in audit_fields(event, 0.0).items()})


def _judge(entries: list[Entry]):
    return properties.judge(["admitted"], Judgement("admitted", {"namespace": NS}), entries)


def test_the_audit_log_keeps_why_a_request_was_refused_and_nothing_for_one_that_was_not():
    assert _request(0, 400, DENIAL).detail == DENIAL
    assert _request(1, 201).detail == ""


def test_a_webhook_that_denied_a_write_breaks_it_and_one_that_could_not_be_called_does_not():
    admitted = [_request(0, 201), _request(1, 500, DOWN), _request(2, 201, verb="delete")]
    assert _judge(admitted).status == PASS, _judge(admitted).explain()
    refused = [*admitted, _request(3, 400, DENIAL)]
    verdict = _judge(refused)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "1 of 4 writes" in verdict.summary and "mpod.kb.io" in verdict.summary
    assert [entry.seq for entry in verdict.witness] == [3]
    judgement = Judgement("admitted", {"namespace": NS})
    keep("a-write-a-webhook-denied", refused, judgement, ["admitted"], {"admitted": VIOLATED},
         "an error: explore stopped the plan at the refused step and judged nothing",
         "kueue-2's exploration, 2026-11-30")
    keep("a-webhook-that-could-not-be-called", admitted, judgement, ["admitted"],
         {"admitted": PASS}, "none: kept beside its denied twin (a webhook whose server is "
         "down is the setup's, not a denial)", "kueue-2's exploration, 2026-11-30")
