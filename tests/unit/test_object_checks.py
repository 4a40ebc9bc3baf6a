"""The generic checks over one object (never_had, kept, matches_within, matches_for,
changed_at_most): each fails on a history that breaks it (for the last two, a status written
in a loop), passes on one that keeps it, and is UNKNOWN where a gap hides what it speaks of or
where the object was never recorded."""

from __future__ import annotations

import pytest

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.properties.context import Context
from aftershock.timeline.entry import GAP_END, GAP_START, WATCH, Entry
from tests.verdict_corpus import keep

NS = "ns"
WEB = {"resource": "rayclusters", "namespace": NS, "name": "web", "shown": "raycluster/web"}


class History(list):
    def at(self, mono: float, kind: str = WATCH, **fields) -> History:
        self.append(Entry(len(self), mono, 1e9 + mono, kind, rv=str(100 + len(self)),
                          **fields))
        return self

    def cluster(self, mono: float, ready: int | None, state: str = "ready",
                type: str = "MODIFIED") -> History:
        return self.at(mono, resource="rayclusters", namespace=NS, name="web", uid="u-web",
                       type=type, object=raycluster(ready, state))

    def gap(self, start: float, end: float, changes: list[dict]) -> History:
        self.at(start, GAP_START, resource="rayclusters", detail="410 Gone")
        return self.at(end, GAP_END, resource="rayclusters", extra={"changes": changes})


def raycluster(ready: int | None, state: str = "ready") -> dict:
    status: dict = {"state": state}
    if ready is not None:
        status["readyWorkerReplicas"] = ready
    return {"metadata": {"name": "web", "namespace": NS, "uid": "u-web"},
            "spec": {"workerGroupSpecs": [{"groupName": "workers", "replicas": 3}]},
            "status": status}


def judge(check: str, params: dict, history: list[Entry]):
    return properties.judge([check], Judgement(check, params), history)


NEVER = {"object": WEB, "comparison": "status.readyWorkerReplicas > 5"}
KEPT = {"object": WEB, "comparison": "spec.workerGroupSpecs[groupName=workers].replicas >= 1"}


def test_at_no_point_passes_over_every_recorded_state_and_fails_at_the_one_that_breaks_it():
    history = History().cluster(0, 0, type="ADDED").cluster(1, 3).cluster(2, 5)
    history.at(3, "mark", detail="end")
    verdict = judge("never_had", NEVER, history)
    assert verdict.status == PASS and "over 3 recorded states" in verdict.summary
    history = History().cluster(0, 0, type="ADDED").cluster(1, 6).cluster(2, 5)
    history.at(3, "mark", detail="end")
    verdict = judge("never_had", NEVER, history)
    assert verdict.status == VIOLATED, verdict.explain()
    assert verdict.summary == "raycluster/web had status.readyWorkerReplicas > 5 (it was 6)"
    assert [entry.mono for entry in verdict.witness] == [1]


def test_a_state_hidden_in_a_gap_makes_at_no_point_unknown_not_pass():
    """Between two polls Chainsaw would miss it; here a gap on the kind says so."""
    history = History().cluster(0, 0, type="ADDED")
    history.gap(1, 4, [{"type": "MODIFIED", "object": raycluster(3)}])
    history.at(5, "mark", detail="end")
    verdict = judge("never_had", NEVER, history)
    assert verdict.status == UNKNOWN and "gap" in verdict.summary, verdict.explain()


def test_every_change_kept_fails_on_the_change_that_broke_it_and_is_unknown_over_a_gap():
    history = History().cluster(0, 0, type="ADDED").cluster(1, 2)
    history.at(2, "mark", detail="end")
    assert judge("kept", KEPT, history).status == PASS
    broken = raycluster(2)
    broken["spec"]["workerGroupSpecs"][0]["replicas"] = 0
    history = History().cluster(0, 0, type="ADDED")
    history.at(1, resource="rayclusters", namespace=NS, name="web", uid="u-web",
               type="MODIFIED", object=broken)
    history.at(2, "mark", detail="end")
    verdict = judge("kept", KEPT, history)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "had spec.workerGroupSpecs[groupName=workers].replicas < 1 (it was 0)" in \
        verdict.summary
    gapped = History().cluster(0, 0, type="ADDED")
    gapped.gap(1, 4, [{"type": "MODIFIED", "object": raycluster(3)}])
    gapped.at(5, "mark", detail="end")
    assert judge("kept", KEPT, gapped).status == UNKNOWN


@pytest.mark.parametrize("check", ["never_had", "kept"])
def test_an_object_never_recorded_is_unknown(check):
    history = History().at(0, resource="pods", namespace=NS, name="other", uid="u",
                           type="ADDED", object={"metadata": {"name": "other"}})
    history.at(1, "mark", detail="end")
    params = NEVER if check == "never_had" else KEPT
    verdict = judge(check, params, history)
    assert verdict.status == UNKNOWN and "never recorded" in verdict.summary, verdict.explain()


MATCHES = {"object": WEB, "expected": {"status": {"state": "ready", "readyWorkerReplicas": 3}},
           "start": 0.5, "within": 5, "now": 10}


def test_matches_within_passes_once_matched_and_fails_naming_what_did_not_match():
    history = History().cluster(0, 0, "pending", type="ADDED").cluster(2, 3)
    history.at(10, "mark", detail="end")
    verdict = judge("matches_within", MATCHES, history)
    assert verdict.status == PASS, verdict.explain()
    history = History().cluster(0, 0, "pending", type="ADDED").cluster(2, 2, "ready")
    history.at(10, "mark", detail="end")
    verdict = judge("matches_within", MATCHES, history)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "did not match within 5s: status.readyWorkerReplicas: 2, expected 3" in \
        verdict.summary


def test_matches_within_over_a_gap_is_unknown():
    history = History().cluster(0, 0, "pending", type="ADDED")
    history.gap(1, 9, [{"type": "MODIFIED", "object": raycluster(2)}])
    history.at(10, "mark", detail="end")
    verdict = judge("matches_within", MATCHES, history)
    assert verdict.status == UNKNOWN, verdict.explain()


def test_is_gone_fails_while_the_object_stays_and_is_unknown_over_a_gap():
    """"within 30 seconds raycluster/web is gone" (eventually, with the kind as discovery
    found it, a scenario fact)."""
    context = Context(NS, None, {}, {"kinds": {"raycluster": {
        "resource": "rayclusters", "namespaced": True}}}).to_json()
    params = {"condition": "raycluster/web is gone", "context": context, "start": 0.5,
              "within": 5, "now": 10}
    history = History().cluster(0, 0, type="ADDED").cluster(2, 1)
    history.at(10, "mark", detail="end")
    verdict = judge("eventually", params, history)
    assert verdict.status == VIOLATED, verdict.explain()
    history = History().cluster(0, 0, type="ADDED")
    history.at(2, resource="rayclusters", namespace=NS, name="web", uid="u-web", type="DELETED",
               object=raycluster(0))
    history.at(10, "mark", detail="end")
    assert judge("eventually", params, history).status == PASS
    gapped = History().cluster(0, 0, type="ADDED")
    gapped.gap(1, 9, [{"type": "DELETED", "object": raycluster(0)}])
    gapped.at(10, "mark", detail="end")
    assert judge("eventually", params, gapped).status == UNKNOWN


HELD = {"object": WEB, "expected": {"status": {"state": "ready"}}, "start": 0.5,
        "duration": 5, "now": 10}
CALM = {"object": WEB, "limit": 3, "start": 0.5, "within": 5, "now": 10}


def _flapping(history: History, every: float = 0.05, until: float = 5.0) -> History:
    """A status written in a loop: ready, failed, ready, ... 20 times a second."""
    at, state = 1.0, "failed"
    while at < until:
        history.cluster(at, 3, state)
        at, state = at + every, ("ready" if state == "failed" else "failed")
    return history


def test_matches_for_holds_at_every_change_and_breaks_on_a_flap_between_polls():
    history = History().cluster(0, 3, type="ADDED").cluster(2, 2).cluster(4, 3)
    history.at(10, "mark", detail="end")
    assert judge("matches_for", HELD, history).status == PASS
    flapping = _flapping(History().cluster(0, 3, type="ADDED"))
    flapping.at(10, "mark", detail="end")
    verdict = judge("matches_for", HELD, flapping)
    assert verdict.status == VIOLATED, verdict.explain()
    assert verdict.summary == ("raycluster/web matches stopped holding after 0.500s: "
                               "status.state: 'failed', expected 'ready'")
    assert [entry.mono for entry in verdict.witness] == [1.0]


def test_matches_for_over_a_gap_is_unknown_and_never_recorded_is_unknown():
    gapped = History().cluster(0, 3, type="ADDED")
    gapped.gap(1, 4, [{"type": "MODIFIED", "object": raycluster(3)}])
    gapped.at(10, "mark", detail="end")
    verdict = judge("matches_for", HELD, gapped)
    assert verdict.status == UNKNOWN and "gap" in verdict.summary, verdict.explain()
    other = History().at(0, resource="rayclusters", namespace=NS, name="other", uid="u",
                         type="ADDED", object={"metadata": {"name": "other"}})
    other.at(10, "mark", detail="end")
    assert judge("matches_for", HELD, other).status in (UNKNOWN, VIOLATED)


def test_changed_at_most_counts_every_recorded_change_and_catches_a_write_loop():
    calm = History().cluster(0, 3, type="ADDED").cluster(2, 2).cluster(4, 3)
    calm.at(10, "mark", detail="end")
    verdict = judge("changed_at_most", CALM, calm)
    assert verdict.status == PASS and "changed 2 times within 5s" in verdict.summary
    loop = _flapping(History().cluster(0, 3, type="ADDED"))
    loop.at(10, "mark", detail="end")
    verdict = judge("changed_at_most", CALM, loop)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "changed 81 times within 5s, more than 3" in verdict.summary
    assert len(verdict.witness) == 4


def test_changed_at_most_over_a_gap_is_unknown_and_before_its_end_is_unknown():
    gapped = History().cluster(0, 3, type="ADDED").cluster(2, 2)
    gapped.gap(3, 4, [{"type": "MODIFIED", "object": raycluster(3)}])
    gapped.at(10, "mark", detail="end")
    verdict = judge("changed_at_most", CALM, gapped)
    assert verdict.status == UNKNOWN and "gap" in verdict.summary, verdict.explain()
    early = History().cluster(0, 3, type="ADDED").cluster(2, 2)
    verdict = judge("changed_at_most", {**CALM, "now": 3}, early)
    assert verdict.status == UNKNOWN and "observed only" in verdict.summary


BUSY = {"object": WEB, "comparison": "status.state == failed"}


def test_from_now_on_judges_from_its_own_moment_and_fails_on_a_flap_after_it():
    """A flap before the step is history; one after it breaks "from now on ... never has"."""
    flapped_before = _flapping(History().cluster(0, 3, type="ADDED"), until=2.0)
    flapped_before.cluster(2.5, 3, "ready").at(10, "mark", detail="end")
    verdict = judge("never_has_from", {**BUSY, "start": 3, "now": 10}, flapped_before)
    assert verdict.status == PASS, verdict.explain()
    assert verdict.window == (3, 10)
    verdict = judge("never_had", BUSY, flapped_before)
    assert verdict.status == VIOLATED  # the whole history's check sees the earlier flap
    flapping = _flapping(History().cluster(0, 3, type="ADDED"))
    flapping.at(10, "mark", detail="end")
    verdict = judge("never_has_from", {**BUSY, "start": 3, "now": 10}, flapping)
    assert verdict.status == VIOLATED, verdict.explain()
    assert 2.9 < verdict.witness[0].mono < 3.1 and "from +3.000s" in verdict.summary


def test_from_now_on_counts_the_state_the_object_had_at_its_start():
    history = History().cluster(0, 3, "failed", type="ADDED").at(10, "mark", detail="end")
    verdict = judge("never_has_from", {**BUSY, "start": 3, "now": 10}, history)
    assert verdict.status == VIOLATED and verdict.witness[0].mono == 0


def test_until_ends_the_scope_at_the_first_state_its_condition_held():
    done = {"object": WEB, "comparison": "status.readyWorkerReplicas == 0"}
    history = History().cluster(0, 3, type="ADDED").cluster(4, 0).cluster(5, 0, "failed")
    history.at(10, "mark", detail="end")
    params = {**BUSY, "start": 1, "now": 10, "until": done}
    verdict = judge("never_has_from", params, history)
    assert verdict.status == PASS and verdict.window == (1, 4), verdict.explain()
    assert "until raycluster/web had status.readyWorkerReplicas == 0" in verdict.summary
    early = History().cluster(0, 3, type="ADDED").cluster(2, 3, "failed").cluster(4, 0)
    early.at(10, "mark", detail="end")
    assert judge("never_has_from", params, early).status == VIOLATED


def test_from_now_on_over_a_gap_is_unknown_and_a_gap_before_it_is_not_its_business():
    gapped = History().cluster(0, 3, type="ADDED")
    gapped.gap(4, 5, [{"type": "MODIFIED", "object": raycluster(3)}])
    gapped.at(10, "mark", detail="end")
    verdict = judge("never_has_from", {**BUSY, "start": 3, "now": 10}, gapped)
    assert verdict.status == UNKNOWN and "gap" in verdict.summary, verdict.explain()
    assert judge("never_has_from", {**BUSY, "start": 6, "now": 10}, gapped).status == PASS


POD = {"resource": "pods", "namespace": NS, "name": "x", "shown": "pod/x"}
CLAIM = {"resource": "resourceclaims", "namespace": NS, "name": "y",
         "shown": "resourceclaim/y"}
RESERVED = {"object": CLAIM, "comparison": "status.reservedFor[name=x] exists",
            "while": {"object": POD, "comparison": "status.phase == Succeeded"}}


def _pod(h: History, at: float, phase: str) -> History:
    return h.at(at, resource="pods", namespace=NS, name="x", uid="u-x", type="MODIFIED",
                object={"metadata": {"name": "x", "namespace": NS}, "status": {"phase": phase}})


def _claim(h: History, at: float, reserved: bool) -> History:
    status = {"reservedFor": [{"name": "x", "resource": "pods"}]} if reserved else {}
    return h.at(at, resource="resourceclaims", namespace=NS, name="y", uid="u-y",
                type="MODIFIED", object={"metadata": {"name": "y", "namespace": NS},
                                         "status": status})


def test_while_a_pod_is_done_its_claim_is_never_written_reserved_for_it():
    """The claim still reserved when the pod finishes is cleaned up a moment later: not a
    violation. Written reserved again while the pod is Succeeded (a stale cache) is."""
    kept = _claim(_pod(History(), 0, "Running"), 0.5, True)
    _claim(_pod(kept, 2, "Succeeded"), 2.2, False).at(5, "mark", detail="end")
    verdict = judge("never_while", RESERVED, kept)
    assert verdict.status == PASS, verdict.explain()
    stale = _claim(_pod(History(), 0, "Running"), 0.5, True)
    _claim(_claim(_pod(stale, 2, "Succeeded"), 2.2, False), 3, True).at(5, "mark", detail="end")
    verdict = judge("never_while", RESERVED, stale)
    assert verdict.status == VIOLATED, verdict.explain()
    assert [e.mono for e in verdict.witness] == [2, 3]
    assert "while pod/x had status.phase == Succeeded" in verdict.summary


def test_while_a_condition_that_never_held_or_a_gap_is_unknown():
    running = _claim(_pod(History(), 0, "Running"), 0.5, True).at(5, "mark", detail="end")
    verdict = judge("never_while", RESERVED, running)
    assert verdict.status == UNKNOWN and "never had status.phase == Succeeded" in verdict.summary
    gapped = _claim(_pod(History(), 0, "Succeeded"), 0.5, False)
    gapped.at(1, GAP_START, resource="resourceclaims", detail="410 Gone")
    gapped.at(2, GAP_END, resource="resourceclaims", extra={"changes": []})
    gapped.at(5, "mark", detail="end")
    verdict = judge("never_while", RESERVED, gapped)
    assert verdict.status == UNKNOWN and "gap" in verdict.summary, verdict.explain()


def test_a_scope_that_ends_when_a_step_begins_reads_nothing_from_then():
    history = History().cluster(0, 3, type="ADDED").cluster(2, 3).cluster(5, 3, "failed")
    history.at(10, "mark", detail="end")
    params = {**BUSY, "start": 1, "now": 10, "end": 4, "ended_by": "the step 'I patch' began"}
    verdict = judge("never_has_from", params, history)
    assert verdict.status == PASS and verdict.window == (1, 4), verdict.explain()
    assert "until the step 'I patch' began (+4.000s)" in verdict.summary
    assert judge("never_has_from", {**params, "end": 6}, history).status == VIOLATED


def test_until_a_later_step_must_name_one_the_scenario_has():
    from aftershock.bdd.steps.objects import _later_step
    from aftershock.errors import StepFailed

    _later_step("patch configmap/job", ["1 seconds pass", "I patch configmap/job:"])
    with pytest.raises(StepFailed, match="no later step of this scenario begins with"):
        _later_step("patch configmap/jbo", ["I patch configmap/job:"])


def test_matches_for_names_the_state_of_an_object_made_in_the_second_its_window_began():
    """An object whose creation may be either side of the window's start (stamped in that
    second, seen after it) did not match in either case: the summary says both, never only
    "not there" (opentelemetry-1's pod, made with no sidecar as its Then began, was first
    reported "not there")."""
    made = _made_as_it_began("failed")
    verdict = judge("matches_for", HELD, made)
    assert verdict.status == VIOLATED, verdict.explain()
    assert verdict.summary.endswith("raycluster/web was not there, or was just made with "
                                    "status.state: 'failed', expected 'ready'"), verdict.summary
    keep("matches-for-an-object-made-as-its-window-began", made, Judgement("matches_for", HELD),
         ["matches_for"], {"matches_for": VIOLATED},
         "violated, its reason only 'raycluster/web was not there'",
         "opentelemetry-1's runs, 2026-11-30")
    # its twin, made matching: whether it was there at the start is not known either way
    matching = _made_as_it_began("ready")
    assert judge("matches_for", HELD, matching).status == UNKNOWN
    keep("matches-for-an-object-made-matching-as-its-window-began", matching,
         Judgement("matches_for", HELD), ["matches_for"], {"matches_for": UNKNOWN},
         "none: kept beside its violated twin (opentelemetry-1's patched runs were so)",
         "opentelemetry-1's runs, 2026-11-30")


def _made_as_it_began(state: str) -> History:
    """raycluster/web made in the second HELD's window begins (stamped then, seen after)."""
    made = History().at(0.7, resource="rayclusters", namespace=NS, name="web", uid="u-web",
                        type="ADDED", object=raycluster(3, state),
                        extra={"written": "2001-09-09T01:46:40Z"})
    return made.at(10, "mark", detail="end")
