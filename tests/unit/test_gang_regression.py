"""G1 over a whole history (regression_detected): each case fails on the bug it guards, the
incident's gang operator that reports no breach while 0 < scheduled < minAvailable."""

from __future__ import annotations

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.timeline.entry import WATCH, Entry

NS = "ns"
GANG = {"resource": {"group": "x.io", "version": "v1", "plural": "gangs", "kind": "Gang"},
        "groups_path": "spec.groups", "min_available_path": "spec.minAvailable",
        "group_status_path": "status.groups", "group_label": "group",
        "pod_selector": {"gang": "{name}"}, "breach_condition": "Breached",
        "healthy_reasons": ["Healthy"]}
LATENCY = 10


class History:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, at: float, resource: str, name: str, obj: dict | None,
            type: str = "ADDED") -> None:
        self.entries.append(Entry(seq=len(self.entries), mono=at, wall=1.9e9 + at, kind=WATCH,
                                  resource=resource, namespace=NS, name=name,
                                  uid=f"uid-{name}", rv=str(len(self.entries) + 1), type=type,
                                  object=obj))

    def gang(self, at: float, breached: str | None = None, reason: str = "") -> None:
        status = {"groups": [{"index": 0, "conditions": [
            {"type": "Breached", "status": breached, "reason": reason}]}]} if breached else {}
        self.add(at, "gangs", "train", {"metadata": {"name": "train"},
                                        "spec": {"groups": 1, "minAvailable": 3},
                                        "status": status}, "MODIFIED" if at else "ADDED")

    def pod(self, at: float, name: str, node: str | None, type: str = "ADDED") -> None:
        obj = {"metadata": {"name": name, "labels": {"gang": "train", "group": "0"}},
               "spec": {"nodeName": node} if node else {}}
        self.add(at, "pods", name, obj, type)

    def healthy(self) -> None:
        self.gang(0)
        for index in range(3):
            self.pod(1, f"p{index}", f"n{index}")

    def judge(self, now: float):
        judgement = Judgement("regression_detected",
                              {"gang": {"name": "train", "namespace": NS, "mapping": GANG},
                               "latency": LATENCY, "now": now})
        return properties.judge(["G1"], judgement, self.entries)


def _lose_one(history: History, at: float = 2) -> None:
    history.pod(at, "p0", "n0", "DELETED")
    history.pod(at + 0.1, "p3", None)  # its replacement: nowhere to go


def test_a_partial_regression_never_breached_is_a_violation():
    history = History()
    history.healthy()
    _lose_one(history)
    history.gang(25)  # something later: the regression lasted 23 s
    verdict = history.judge(now=26)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "never turned True" in verdict.summary
    # the change that began it, and the gang as last recorded in the window (its condition)
    assert [e.name for e in verdict.witness] == ["train", "p0"]


def test_a_regression_still_running_at_the_judgement_is_judged_by_the_recorder_clock():
    history = History()
    history.healthy()
    _lose_one(history)
    assert history.judge(now=20).status == VIOLATED
    assert history.judge(now=5).status == UNKNOWN  # not yet lasted L: nothing to judge


def test_a_regression_breached_in_time_passes():
    history = History()
    history.healthy()
    _lose_one(history)
    history.gang(3, breached="True")
    verdict = history.judge(now=30)
    assert verdict.status == PASS and verdict.subjects == 1, verdict.explain()


def test_a_breach_later_than_the_bound_is_a_violation():
    history = History()
    history.healthy()
    _lose_one(history)
    history.gang(13, breached="True")
    assert history.judge(now=30).status == VIOLATED


def test_a_short_regression_and_a_startup_are_not_judged():
    history = History()
    history.gang(0)
    history.pod(1, "p0", "n0")
    history.pod(1, "p1", "n1")  # 2 of 3 for 30 s: starting, never healthy
    assert history.judge(now=30).status == UNKNOWN
    history.pod(31, "p2", "n2")
    _lose_one(history, at=32)
    history.pod(33, "p3", "n3", "MODIFIED")  # scheduled again after 1 s
    verdict = history.judge(now=60)
    assert verdict.status == UNKNOWN and "nothing to judge" in verdict.summary


def test_a_replica_whose_pods_were_all_replaced_starts_over():
    history = History()
    history.healthy()
    _lose_one(history)
    history.gang(3, breached="True")
    for index in (1, 2):  # terminated: every pod it was healthy with is gone
        history.pod(8, f"p{index}", f"n{index}", "DELETED")
    history.pod(8.1, "p3", None, "DELETED")
    history.gang(8.2, breached="False")
    history.pod(9, "p4", "n1")
    history.pod(9, "p5", "n2")  # 2 of 3 again, as after a start: not a regression
    verdict = history.judge(now=40)
    assert verdict.status == PASS and verdict.subjects == 1, verdict.explain()


def test_a_regression_after_a_healthy_moment_too_short_to_be_seen_is_not_judged():
    # explore's false positive: the last pod was scheduled 40 ms before the drain evicted
    # another; a level-triggered operator never saw the replica healthy (G5: still starting)
    history = History()
    history.gang(0)
    history.pod(1, "p0", "n0")
    history.pod(1, "p1", "n1")
    history.pod(2, "p2", "n2")
    _lose_one(history, at=2.04)
    verdict = history.judge(now=30)
    assert verdict.status == UNKNOWN and "nothing to judge" in verdict.summary, verdict.explain()


def test_a_regression_after_a_healthy_second_is_judged():
    history = History()
    history.gang(0)
    history.pod(1, "p0", "n0")
    history.pod(1, "p1", "n1")
    history.pod(2, "p2", "n2")
    _lose_one(history, at=3.5)
    verdict = history.judge(now=30)
    assert verdict.status == VIOLATED, verdict.explain()


def test_a_short_healthy_moment_the_implementation_said_it_saw_is_judged():
    # the incident's operator on explore's workload: the drain came 0.14 s after the replica
    # became healthy, but its status had already said Healthy; then it called the loss startup
    history = History()
    history.gang(0)
    history.pod(1, "p0", "n0")
    history.pod(1, "p1", "n1")
    history.pod(2, "p2", "n2")
    history.gang(2.05, breached="False", reason="Healthy")
    _lose_one(history, at=2.14)
    history.gang(2.2, breached="False", reason="Starting")
    verdict = history.judge(now=30)
    assert verdict.status == VIOLATED, verdict.explain()


def test_a_healthy_status_left_from_an_earlier_stretch_proves_nothing():
    # all pods replaced while the status still says Healthy; the new pods are healthy 0.1 s
    history = History()
    history.healthy()
    history.gang(1.5, breached="False", reason="Healthy")
    for index in range(3):
        history.pod(5, f"p{index}", f"n{index}", "DELETED")
    for index in (4, 5, 6):
        history.pod(8, f"p{index}", f"n{index}")
    history.pod(8.1, "p4", "n4", "DELETED")
    verdict = history.judge(now=40)
    assert verdict.status == UNKNOWN, verdict.explain()
