"""What the implementation made outside its namespace is read from the audit log by its
identity: its stored creates of cluster-scoped objects, in order, each once; nothing of the
harness's, nothing namespaced, nothing refused."""

import json

from aftershock.sut.made import Made, audit_size, made_by

ACTOR = "system:serviceaccount:scn:implementation"


def _event(user=ACTOR, verb="create", code=201, stage="ResponseComplete", **ref):
    return {"kind": "Event", "stage": stage, "verb": verb, "user": {"username": user},
            "objectRef": {"apiVersion": "v1", **ref}, "responseStatus": {"code": code}}


WEBHOOK = dict(apiGroup="admissionregistration.k8s.io", resource="validatingwebhookconfigurations",
               name="kyverno-resource-validating-webhook-cfg")


def test_its_creates_of_cluster_scoped_objects_in_order_each_once(tmp_path):
    log = tmp_path / "audit.log"
    lines = [_event(resource="nodes", name="kwok-a"),
             _event(**WEBHOOK, stage="RequestReceived"),
             _event(**WEBHOOK),
             _event(resource="pods", namespace="scn", name="p"),  # its namespace's: not here
             _event(user="system:admin", resource="priorityclasses",
                    apiGroup="scheduling.k8s.io", name="harness"),  # not its own
             _event(resource="nodes", name="refused", code=409),
             _event(verb="update", resource="nodes", name="kwok-a"),
             _event(resource="nodes", name="kwok-a")]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"cut short')
    made = made_by(log, ACTOR)
    assert made == [Made("", "v1", "nodes", "kwok-a"),
                    Made("admissionregistration.k8s.io", "v1",
                         "validatingwebhookconfigurations",
                         "kyverno-resource-validating-webhook-cfg")]
    assert str(made[1]) == ("validatingwebhookconfigurations/kyverno-resource-validating-"
                            "webhook-cfg")


def test_what_it_made_before_its_install_is_not_read(tmp_path):
    log = tmp_path / "audit.log"
    log.write_text(json.dumps(_event(resource="nodes", name="earlier")) + "\n")
    offset = audit_size(log)
    with log.open("a") as more:
        more.write(json.dumps(_event(resource="nodes", name="later")) + "\n")
    assert [m.name for m in made_by(log, ACTOR, offset)] == ["later"]
    assert audit_size(None) == 0
