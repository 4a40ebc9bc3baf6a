"""Dating a change by the request that made it (aftershock/history/dating.py), on small
histories as the recorder writes them: a change carries the second its write was stamped
with; the audit log has the request, to the microsecond."""

from __future__ import annotations

from aftershock.checks import PASS
from aftershock.history import History
from aftershock.properties import Judgement
from aftershock.properties.context import Context
from tests.unit.test_one_history import NS, Record, judge, second
from tests.verdict_corpus import keep

WRITER = "system:serviceaccount:ns:implementation"
CONTEXT = Context(NS, "t", {}, {}).to_json()


def _job(state: str) -> dict:
    return {"metadata": {"name": "job", "namespace": NS, "uid": "uid-job"},
            "data": {"state": state}}


def _received(entry, at: float) -> None:
    entry.extra["received"] = second(at).replace("Z", f".{round(at % 1 * 1e6):06d}Z")


def _loop(writes: int, every: float = 0.05) -> Record:
    """configmap/job made at 1, then written by its controller ``writes`` times, ready and busy
    in turn, ``every`` seconds apart: the stamps of one second are one."""
    h = Record()
    h.watch(1.005, "configmaps", _job("ready"), "ADDED", written=1.0)
    made = h.audit(1.002, "create", "job", WRITER, resource="configmaps", code=201,
                   uid="uid-job")
    _received(made, 1.0)
    for k in range(writes):
        at = 1.5 + k * every
        update = h.audit(at + 0.002, "update", "job", WRITER, resource="configmaps")
        _received(update, at)
        h.watch(at + 0.004, "configmaps", _job("busy" if k % 2 == 0 else "ready"),
                written=at)
    h.judged(1.5 + writes * every + 1)
    return h


def _spans(h: Record) -> list[tuple[float, float]]:
    (life,) = History(h).lives_of("configmaps", NS)
    return [(round(c.lo, 4), round(c.hi, 4)) for c in life.changes]


def test_a_state_written_in_a_loop_is_dated_write_by_write():
    """A thousand writes, 20 a second: every change but the first of its second stamps
    nothing certain, and each is dated by its own write all the same."""
    spans = _spans(_loop(1000))
    assert len(spans) == 1001
    for k, (lo, hi) in enumerate(spans[1:]):
        at = 1.5 + k * 0.05
        assert at - 1e-6 <= lo <= hi <= at + 0.002 + 1e-6, (k, lo, hi)


def test_a_change_either_of_two_writes_may_have_made_is_dated_between_them():
    """Two writes in one second, one change of that second: either write may have made it
    (the other changed nothing), so it is dated from the first's start to the second's end,
    no closer."""
    h = Record()
    h.watch(1.005, "configmaps", _job("ready"), "ADDED", written=1.0)
    _received(h.audit(1.002, "create", "job", WRITER, resource="configmaps", code=201,
                      uid="uid-job"), 1.0)
    for at in (2.1, 2.6):
        _received(h.audit(at + 0.002, "update", "job", WRITER, resource="configmaps"), at)
    h.watch(2.7, "configmaps", _job("busy"), written=2.6)
    h.judged(4.0)
    assert _spans(h)[1] == (2.1, 2.602)


def test_writes_whose_moments_overlap_date_their_changes_in_either_order():
    """The harness's patch and the controller's write overlap: which committed first is not
    known, so each of their two changes is dated by both; the loop before stays dated write by
    write."""
    h = _loop(40)
    h.pop()  # judged later, below
    at = 1.5 + 40 * 0.05
    _received(h.audit(at + 0.004, "patch", "job", "aftershock", resource="configmaps"), at)
    _received(h.audit(at + 0.003, "update", "job", WRITER, resource="configmaps"), at + 0.001)
    h.watch(at + 0.01, "configmaps", _job("busy"), written=at)
    h.watch(at + 0.011, "configmaps", _job("done"), written=at)
    h.judged(at + 2)
    spans = _spans(h)
    assert spans[-2:] == [(round(at, 4), round(at + 0.004, 4))] * 2
    assert spans[1] == (1.5, 1.502) and spans[40] == (round(1.5 + 39 * 0.05, 4),
                                                      round(1.5 + 39 * 0.05 + 0.002, 4))


def test_a_marked_pod_is_dated_by_the_deletion_that_marked_it_not_its_removal():
    """One delete marks the pod; what removed it after (the last finalizer going, the
    kubelet's delete answered 404) is no deletion that succeeded: the removal is not dated
    by it."""
    h = Record()
    pod = {"metadata": {"name": "p", "namespace": NS, "uid": "uid-p"}}
    h.watch(1.005, "pods", pod, "ADDED", written=1.0)
    _received(h.audit(1.002, "create", "p", WRITER, code=201, uid="uid-p"), 1.0)
    _received(h.audit(3.202, "delete", "p", "aftershock"), 3.2)
    marked = {"metadata": {**pod["metadata"], "deletionTimestamp": second(3.2)}}
    h.watch(3.21, "pods", marked)
    _received(h.audit(4.402, "delete", "p", "kwok-controller", code=404), 4.4)
    h.watch(4.41, "pods", dict(marked), "DELETED")
    h.judged(6.0)
    (life,) = History(h).lives_of("pods", NS)
    _, mark, removal = [(round(c.lo, 4), round(c.hi, 4)) for c in life.changes]
    assert mark == (3.2, 3.202)
    assert removal[0] == 3.2 and removal[1] > 4.402  # after the mark; when, not known


def test_a_pod_marked_by_one_of_two_deletions_that_overlap_is_dated_between_them():
    """The harness deletes web-a; the kubelet (kwok) answers the mark with a delete of its
    own before the harness's is answered: the two overlap, and the mark is dated from the
    earlier start to the earlier end, the removal from the later start to the later end. Left
    undated, the two pods' stretch ran on to the judgement, and 'for 3 seconds 1 pods of web
    are live' was UNKNOWN (make test, features/harness/faults.feature)."""
    h = Record()
    for name in ("web-a", "web-b"):
        pod = {"metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
                            "labels": {"app.kubernetes.io/name": "web"}},
               "status": {"phase": "Running"}}
        _received(h.audit(1.01, "create", name, WRITER, code=201, uid=f"uid-{name}"), 1.0)
        h.watch(1.02, "pods", pod, "ADDED", written=1.0)
    _received(h.audit(1.505, "delete", "web-a", "aftershock"), 1.497)
    _received(h.audit(1.5052, "delete", "web-a", "kwok-controller"), 1.502)
    marked = {"metadata": {**h[1].object["metadata"], "deletionTimestamp": second(1.5)},
              "status": {"phase": "Running"}}
    h.watch(1.51, "pods", marked)
    h.watch(1.511, "pods", dict(marked), "DELETED")
    h.judged(5.0)
    (life, _) = History(h).lives_of("pods", NS)
    _, mark, removal = [(round(c.lo, 4), round(c.hi, 4)) for c in life.changes]
    assert mark == (1.497, 1.505) and removal == (1.502, 1.5052)
    params = {"condition": "1 pods of web are live", "context": CONTEXT, "start": 1.52,
              "duration": 3, "now": 5.0}
    verdict = judge(["stays_for"], "stays_for", params, h)
    assert verdict.status == PASS, verdict.explain()
    keep("a-mark-by-one-of-two-deletions-that-overlap", h, Judgement("stays_for", params),
         ["stays_for"], {"stays_for": PASS},
         "stays_for: UNKNOWN: 1 pods of web are live did not hold in a state the API server "
         "wrote or ended within a second of the 3s it must last", "make test of stop 71 "
         "(features/harness/faults.feature, the controller manager stopped)")
