"""Wrong verdicts the metamorphic fuzz (tests/unit/test_metamorphic.py) found, each as a small
history written from the one it shrank to, saved in the corpus with its true status."""

from __future__ import annotations

from aftershock.checks import VIOLATED
from aftershock.history import History
from aftershock.properties import Judgement
from tests.unit.test_earned_violations import History as Written
from tests.unit.test_earned_violations import claim, pod
from tests.unit.test_judges_fuzz import CONTEXT
from tests.unit.test_one_history import Record, judge, second
from tests.verdict_corpus import keep

FOUND = "the metamorphic fuzz of issue 64, relation ({})"


def test_a_claim_absent_at_a_binding_is_proven_by_the_record_up_to_it():
    """web-0 is bound at +1s while its claim does not exist (made at +3s); the watch of claims
    breaks at +6s and is never re-listed. That the claim did not exist at the binding needs the
    record of claims whole up to the binding, not to the end: it was UNKNOWN, and a gap over
    the binding (which leaves it unjudged) let a later violation through as VIOLATED."""
    history = Written()
    history.watch(1, "pods", pod("web-0", "n1", claim="c"), "ADDED")
    history.watch(3, "resourceclaims", claim("c", ["web-0"]), "ADDED")
    history.at(6, "gap-start", resource="resourceclaims", detail="410 Gone")
    history.at(9, "mark", detail="judged")
    params = {"namespace": "ns"}
    verdict = judge(["D1"], "allocated_before_bind", params, history)
    assert verdict.status == VIOLATED and "did not exist yet" in verdict.summary, \
        verdict.explain()
    keep("d1-an-absent-claim-and-a-later-gap", history, Judgement("allocated_before_bind", params),
         ["D1"], {"D1": VIOLATED},
         "D1: UNKNOWN: a gap in the history of resourceclaims that never closed (410 Gone), "
         "at +2.000s (it would have been violated); pod/ns/web-0 was bound to node/n1 while "
         "resourceclaim/ns/c did not exist yet", FOUND.format("e"))


def _web(name: str, uid: str, deleting: bool = False) -> dict:
    meta: dict = {"name": name, "namespace": "ns", "uid": uid,
                  "labels": {"app": "web", "app.kubernetes.io/name": "web"}}
    if deleting:
        meta["deletionTimestamp"] = second(0)
    return {"metadata": meta, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}


def _lost_earlier_life() -> Record:
    """web-1 lived and died under another uid inside a gap on pods, before the web-1 the re-list
    found was made (the audit log has its create, by uid); both web pods are deleted later."""
    h = Record()
    h.watch(1.05, "pods", _web("web-0", "uid-web-0"), "ADDED", written=1.0)
    h.audit(1.0, "create", "web-0", "ctl", code=201, uid="uid-web-0")
    h.gap(2.0, "pods")
    h.audit(3.0, "create", "web-1", "other", code=201, uid="uid-web-1-x")
    h.audit(3.1, "delete", "web-1", "other")
    h.audit(3.5, "create", "web-1", "ctl", code=201, uid="uid-web-1")
    h.relist(6.0, "pods", [{"type": "ADDED", "object": _web("web-1", "uid-web-1")}], rv=110)
    for name, at in (("web-0", 8.0), ("web-1", 9.0)):
        h.audit(at, "delete", name, "ctl")
        h.watch(at + 0.05, "pods", _web(name, f"uid-{name}", deleting=True))
        h.watch(at + 0.1, "pods", _web(name, f"uid-{name}", deleting=True), "DELETED")
    h.judged(12.0)
    return h


def test_a_deletion_before_a_lifes_create_is_not_joined_to_it():
    """The delete at +3.1s named web-1 but no uid. The web-1 the re-list found was made by the
    create the log has at +3.5s, by its uid: the delete acted on an earlier life the gap lost,
    not on it. Joined to it, it dated web-1's going into the gap, and two marks after the gap
    counted as 'UNKNOWN: it would have been violated'."""
    h = _lost_earlier_life()
    model = History(h)
    (web1,) = model.lives_of("pods", "ns", "web-1")
    joined = [a for a in model.actions if a.life is web1 and a.deletes]
    assert [round(a.hi, 1) for a in joined] == [9.0]
    params = {"event": "a pod of the replica group web was marked for deletion", "count": 1,
              "context": CONTEXT}
    verdict = judge(["R4"], "exactly", params, h)
    assert verdict.status == VIOLATED and "2 times" in verdict.summary, verdict.explain()
    keep("a-deletion-before-a-lifes-create", h, Judgement("exactly", params), ["R4"],
         {"R4": VIOLATED}, "R4: UNKNOWN: a gap in the history of pods (410 Gone), at "
         "+-0.050s (it would have been violated); a pod of replica group web was marked for "
         "deletion: 2 times, expected exactly 1", FOUND.format("c"))



def _a_life_the_gap_lost() -> Record:
    """web-2 is made and deleted by ctl at +8.5s, after an unrelated web-2 came and went; a
    later web-2 is made at +14.2s (the log has its create, by uid), the pod watch breaks at
    +15.2s for good, and the garbage collector deletes that later web-2 at +19.3s."""
    h = Record()
    unrelated = {"metadata": {"name": "web-2", "namespace": "ns", "uid": "uid-web-2-x",
                              "labels": {"app": "unrelated"}}, "status": {"phase": "Running"}}
    h.audit(7.7, "create", "web-2", "ctl", code=201, uid="uid-web-2-x")
    h.watch(7.75, "pods", unrelated, "ADDED", written=7.0)
    h.audit(7.8, "delete", "web-2", "ctl")
    h.watch(7.85, "pods", dict(unrelated), "DELETED")
    h.audit(8.49, "create", "web-2", "ctl", code=201, uid="uid-web-2")
    h.audit(8.55, "delete", "web-2", "ctl")
    h.watch(8.6, "pods", _web("web-2", "uid-web-2"), "ADDED", written=8.0)
    h.watch(8.65, "pods", _web("web-2", "uid-web-2"), "DELETED")
    h.audit(14.2, "create", "web-2", "gc", code=201, uid="uid-web-2-later")
    h.gap(15.2, "pods")
    h.audit(19.3, "delete", "web-2", "gc")
    h.judged(25.0)
    return h


def test_a_request_after_a_create_the_record_lost_is_joined_to_no_recorded_life():
    """The delete at +19.3s named web-2 but no uid; the web-2 the record has last could have
    been going then (its removal undated, until the dating joined a request to it), and it was
    joined to it: its removal was dated into the gap, and ctl's delete at +8.5s to none. A
    life the log made and the record lost (the web-2 of +14.2s) may be the one a later request
    acted on: such a request is joined to no recorded life."""
    h = _a_life_the_gap_lost()
    model = History(h)
    web2 = [life for life in model.lives_of("pods", "ns", "web-2") if life.uid == "uid-web-2"]
    joined = [round(a.hi, 3) for a in model.actions if a.deletes and a.life is web2[0]]
    assert joined == [8.55]
