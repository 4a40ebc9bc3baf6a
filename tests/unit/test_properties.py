"""The property registry and its one rule: every verdict earned, over synthetic histories."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.cli.catalogue import markdown
from aftershock.errors import UserError
from aftershock.properties import Judgement
from aftershock.timeline.entry import (
    ANOMALY,
    AUDIT,
    AUDIT_SYNC,
    ERROR,
    GAP_END,
    GAP_START,
    MARK,
    WATCH,
    Entry,
)

REPO = Path(__file__).resolve().parents[2]
NS, APP = "ns", {"app": "web"}
MATRIX = [f"{family}{n}" for family, count in (("R", 6), ("G", 9), ("S", 6), ("N", 5),
                                               ("D", 7)) for n in range(1, count + 1)]


class History:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, at: float, kind: str, **fields) -> Entry:
        entry = Entry(seq=len(self.entries), mono=at, wall=1e9 + at, kind=kind, **fields)
        self.entries.append(entry)
        return entry

    def pod(self, at: float, name: str, kind: str = "ADDED", labels=None) -> Entry:
        obj = _pod(name, labels)
        return self.add(at, WATCH, resource="pods", namespace=NS, name=name, uid=f"uid-{name}",
                        rv=str(len(self.entries) + 1), type=kind, object=obj)

    def relist(self, start: float, end: float, changes: list[tuple[str, str]]) -> None:
        self.add(start, GAP_START, resource="pods", detail="410 Gone")
        self.add(end, GAP_END, resource="pods", detail="re-listed", extra={"changes": [
            {"type": kind, "object": _pod(name)} for kind, name in changes]})


def _pod(name: str, labels=None) -> dict:
    return {"metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
                         "labels": APP if labels is None else labels},
            "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}}


def _never(h: History, limit: int = 5):
    return properties.judge(["R1"], Judgement("never_more_than", {
        "namespace": NS, "selector": APP, "limit": limit}), h.entries)


def _deleted_by(h: History):
    return properties.judge(["R3"], Judgement("deleted_by", {
        "namespace": NS, "selector": APP, "actor": "the replicaset controller",
        "who": "the replicaset controller", "what": "web"}), h.entries)


def test_every_property_of_the_matrix_is_registered_with_a_statement_and_its_checks():
    registered = {p.id: p for p in properties.all_properties()}
    for id in MATRIX:
        assert id in registered, id
        assert registered[id].statement and registered[id].checks
        assert all(name in properties.CHECKS for name in registered[id].checks)


def test_a_step_may_name_only_registered_properties_its_check_judges():
    assert properties.problem(["R1"], "never_more_than") is None
    assert "unknown property 'R9'" in properties.problem(["R9"], "never_more_than")
    assert "G1 is not judged by never_more_than" in properties.problem(["G1"],
                                                                       "never_more_than")
    assert "judges nothing" in properties.problem(["R1"], None)


def test_a_relist_with_deletions_and_creations_never_shows_old_and_new_together():
    """Five pods; during a gap three are deleted and three others created. Applied one by one
    with the creations first (as the recorder did), eight pods would be live at once."""
    h = History()
    for i in range(5):
        h.pod(i, f"old-{i}")
    h.relist(10, 11, [("DELETED", f"old-{i}") for i in range(3)] +
             [("ADDED", f"new-{i}") for i in range(3)])
    verdict = _never(h)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "gap in the history of pods" in verdict.summary


def test_a_violation_proven_after_a_closed_gap_stands():
    h = History()
    h.pod(0, "a")
    h.relist(1, 2, [])
    for i in range(6):
        h.pod(3 + i, f"p{i}")
    assert _never(h).status == VIOLATED


def test_a_violation_spanning_a_gap_is_unknown():
    h = History()
    for i in range(5):
        h.pod(i, f"p{i}")
    h.relist(10, 11, [])
    h.pod(12, "p5")  # the witness runs from p1 (t=1) to p5: across the gap
    verdict = _never(h)
    assert verdict.status == UNKNOWN and "would have been violated" in verdict.summary


def test_nothing_to_judge_is_unknown_not_pass():
    """'No pod of web was deleted by the replicaset controller' over a history without a
    single pod of web used to pass."""
    h = History()
    h.pod(0, "db-0", labels={"app": "db"})
    h.add(1, AUDIT, resource="pods", namespace=NS, name="db-0", verb="delete",
          actor="system:serviceaccount:kube-system:replicaset-controller", code=200)
    verdict = _deleted_by(h)
    assert verdict.status == UNKNOWN and "nothing to judge" in verdict.summary
    never = _never(h)
    assert never.status == UNKNOWN
    parts = re.split(r"[:;] ", never.summary)
    assert len(parts) == len(set(parts)), never.summary  # the reason once, not twice


@pytest.mark.parametrize("kind", [ERROR, ANOMALY])
def test_a_recorder_error_or_anomaly_on_what_it_reads_is_unknown(kind):
    h = History()
    h.pod(0, "p0")
    h.add(1, kind, resource="pods", detail="watch broke")
    verdict = _never(h)
    assert verdict.status == UNKNOWN and f"recorder {kind} on pods" in verdict.summary
    other = History()
    other.pod(0, "p0")
    other.add(1, kind, resource="events", detail="watch broke")
    assert _never(other).status == PASS, "an error on a resource it does not read"


def test_a_list_that_failed_is_a_gap_that_never_closed():
    h = History()
    h.add(0, ERROR, resource="pods", detail="list failed: HTTP 500")
    h.add(0.1, GAP_START, resource="pods", detail="the list failed")
    h.pod(5, "p0")
    assert _never(h).status == UNKNOWN


def test_an_audit_log_that_had_not_caught_up_is_unknown():
    h = History()
    h.add(0, AUDIT, resource="pods", namespace=NS, name="p0", verb="create", code=201,
          actor="system:serviceaccount:kube-system:replicaset-controller")
    h.pod(0, "p0")
    h.add(1, AUDIT_SYNC, extra={"caught_up": False})
    assert _deleted_by(h).status == UNKNOWN
    h.add(2, AUDIT_SYNC, extra={"caught_up": True})
    assert _deleted_by(h).status == PASS
    h.add(3, MARK, detail="recording", extra={"recording": {"pods": "v1"}, "audit": False})
    assert "no audit log" in _deleted_by(h).summary


def test_a_resource_the_recorder_did_not_record_is_unknown():
    h = History()
    h.add(0, MARK, detail="recording", extra={"recording": {"nodes": "v1"}, "audit": True})
    h.pod(1, "p0")
    verdict = _never(h)
    assert verdict.status == UNKNOWN and "did not record pods" in verdict.summary


def test_property_judge_takes_its_check_in_the_params():
    h = History()
    h.pod(0, "p0")
    verdict = properties.get("R1").judge(h.entries, {
        "check": "never_more_than", "namespace": NS, "selector": APP, "limit": 5})
    assert verdict.status == PASS and verdict.property == "R1"


def test_the_catalogue_in_docs_is_current():
    wanted = markdown(REPO / "features")
    path = REPO / "docs" / "properties.md"
    assert path.read_text() == wanted, \
        "docs/properties.md is stale: aftershock properties --markdown > docs/properties.md"


FEATURE = """Feature: f
  {tag}
  Scenario: s
    Given a Deployment web with 2 replicas
    Then at no point did web have more than 2 live pods {label}
"""


@pytest.mark.parametrize(("tag", "label", "message"), [
    ("", "(R9)", "x.feature:5: unknown property 'R9'"),
    ("", "(G1)", "x.feature:5: property G1 is not judged by never_more_than"),
    ("@expect-violation:R77", "", "x.feature:3: @expect-violation:R77: unknown property"),
])
def test_a_feature_naming_a_wrong_property_is_refused_at_collection(tmp_path, tag, label,
                                                                    message):
    from aftershock.features import check_steps

    path = tmp_path / "x.feature"
    path.write_text(FEATURE.format(tag=tag, label=label))
    with pytest.raises(UserError) as refused:
        check_steps(path)
    assert message in str(refused.value).replace(str(tmp_path) + "/", "")


def test_two_faults_with_one_description_are_both_reverted():
    from aftershock.scenario import Scenario

    reverted = []

    class Same:
        description = "node/n1 cordoned"

        def __init__(self, name: str) -> None:
            self.name = name

        def apply(self) -> None:
            pass

        def revert(self) -> None:
            reverted.append(self.name)

    scenario = Scenario(cluster=None, api=None, namespace="ns")
    scenario.inject(Same("first"))
    scenario.inject(Same("second"))
    scenario.end_fault("node/n1 cordoned")
    assert reverted == ["second"]
    assert scenario.revert_faults() == []
    assert reverted == ["second", "first"], "keyed by description, the first stayed applied"
    assert scenario.active_faults() == []
