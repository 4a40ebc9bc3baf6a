"""Checks over synthetic timelines: event-precise, gaps make 'unknown' (through the registry's
one rule), minimal witnesses."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from aftershock import checks, properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.properties.rule import settle
from aftershock.timeline.entry import AUDIT, GAP_END, GAP_START, WATCH, Entry
from aftershock.timeline.state import State

NS, APP = "ns", {"app": "web"}


class History:
    """Builds entries one at a time on a fake recorder clock (seconds)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def _add(self, at: float, kind: str, **fields) -> Entry:
        entry = Entry(seq=len(self.entries), mono=at, wall=1e9 + at, kind=kind, **fields)
        self.entries.append(entry)
        return entry

    def pod(self, at: float, name: str, kind: str = "ADDED", *, phase: str = "Running",
            deleting: bool = False, labels: dict | None = None, written: float | None = None,
            rv: int | None = None) -> Entry:
        """``written``: when the API server wrote it (its managedFields, whole seconds)."""
        meta = {"name": name, "namespace": NS, "uid": f"uid-{name}",
                "labels": APP if labels is None else labels}
        if deleting:
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        obj = {"metadata": meta, "spec": {"nodeName": "node-1"}, "status": {"phase": phase}}
        extra = {} if written is None else {"written": datetime.fromtimestamp(
            1e9 + written, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        return self._add(at, WATCH, resource="pods", namespace=NS, name=name,
                         uid=meta["uid"], rv=str(rv or len(self.entries) + 1), type=kind,
                         object=obj, extra=extra)

    def gap(self, at: float, resource: str = "pods") -> None:
        self._add(at, GAP_START, resource=resource, detail="410 Gone")
        self._add(at + 0.1, GAP_END, resource=resource, detail="re-listed")

    def audit(self, at: float, verb: str, name: str, actor: str, sub: str = "",
              labels: dict | None = None) -> Entry:
        return self._add(at, AUDIT, resource="pods", namespace=NS, name=name, verb=verb,
                         actor=actor, subresource=sub, code=201 if verb == "create" else 200,
                         extra={"labels": labels or {}})


def _never(history: History, limit: int = 3):
    return properties.judge(["R1"], Judgement("never_more_than", {
        "namespace": NS, "selector": APP, "limit": limit}), history.entries)


def _settled(verdict, history: History):
    return settle(verdict, properties.History(history.entries))


def test_never_more_than_passes_when_the_count_stays_within():
    h = History()
    for i in range(3):
        h.pod(i, f"p{i}")
    h.pod(4, "p0", "MODIFIED", deleting=True)
    h.pod(5, "p3")
    verdict = _never(h)
    assert verdict.status == PASS, verdict.explain()


def test_a_violation_lasting_a_single_event_is_caught():
    h = History()
    for i in range(3):
        h.pod(i, f"p{i}")
    h.pod(10, "p3")  # four live for exactly one event…
    h.pod(10.001, "p0", "MODIFIED", deleting=True)  # …then back to three
    verdict = _never(h)
    assert verdict.status == VIOLATED
    assert "4 live pods at once, more than 3" in verdict.summary
    assert [e.name for e in verdict.witness] == ["p0", "p1", "p2", "p3"]


def test_terminating_and_unselected_pods_are_not_live_members():
    h = History()
    for i in range(3):
        h.pod(i, f"p{i}")
    h.pod(4, "other", labels={"app": "db"})
    h.pod(5, "p9", deleting=True)
    assert _never(h).status == PASS


def test_witness_is_the_shortest_stretch_that_proves_the_excess():
    h = History()
    h.pod(0, "old")
    h.pod(1, "a")
    h.pod(50, "b")  # three live, limit 2: stretch old..b is 50 s
    h.pod(51, "old", "DELETED")
    h.pod(52, "c")  # three live again: a..c is 51 s, b..c would need a third
    h.pod(53, "a", "DELETED")
    h.pod(54, "d")  # b, c, d: a stretch of 4 s — the shortest
    verdict = _never(h, limit=2)
    assert verdict.status == VIOLATED
    assert [e.name for e in verdict.witness] == ["b", "c", "d"]
    assert verdict.witness[-1].mono - verdict.witness[0].mono == 4


def test_a_gap_makes_a_passing_check_unknown_but_not_a_violation():
    h = History()
    h.pod(0, "p0")
    h.gap(1)
    h.pod(2, "p1")
    assert _never(h).status == UNKNOWN
    h.pod(3, "p2")
    h.pod(4, "p3")
    h.pod(5, "p4")
    assert _never(h).status == VIOLATED, "a violation outside the gap is still a violation"


def test_a_gap_in_another_resource_does_not_matter():
    h = History()
    h.pod(0, "p0")
    h.gap(1, resource="nodes")
    assert _never(h).status == PASS


def _running(count: int):
    def holds(state: State) -> bool:
        pods = [p for p in state.live_pods(NS, APP) if p["status"]["phase"] == "Running"]
        return len(pods) == count
    return holds


def test_always_reports_the_entry_that_broke_it():
    h = History()
    h.pod(0, "p0")
    h.pod(1, "p1")
    broke = h.pod(2, "p1", "MODIFIED", phase="Failed")
    verdict = checks.always(h.entries, lambda s: all(
        p["status"]["phase"] == "Running" for p in s.live_pods(NS, APP)), "all pods Running")
    assert verdict.status == VIOLATED and verdict.witness == [broke]


def test_eventually_is_event_precise_and_needs_enough_history():
    h = History()
    h.pod(0, "p0", phase="Pending")
    made_it = h.pod(7.5, "p0", "MODIFIED")
    within = checks.eventually(h.entries, _running(1), "1 Running", start=0, within=10, now=20)
    assert within.status == PASS and within.witness == [made_it]
    late = checks.eventually(h.entries, _running(1), "1 Running", start=0, within=5, now=20)
    assert late.status == VIOLATED
    unseen = checks.eventually(h.entries[:1], _running(1), "1 Running", 0, within=5, now=3)
    assert unseen.status == UNKNOWN


def test_eventually_witnesses_its_own_namespace_not_another_scenarios_teardown():
    h = History()
    judged = h.pod(0, "p0", phase="Pending")
    other = h.pod(4, "elsewhere", "DELETED")
    other.namespace = "an-earlier-scenario"
    late = checks.eventually(h.entries, _running(1), "1 Running", start=0, within=5, now=20,
                             namespace=NS)
    assert late.status == VIOLATED and late.witness == [judged]


def test_stays_for_fails_at_the_first_change():
    h = History()
    h.pod(0, "p0")
    h.pod(3, "p1")
    verdict = checks.stays_for(h.entries, _running(1), "1 Running", start=1, duration=5, now=9)
    assert verdict.status == VIOLATED and verdict.witness[0].name == "p1"
    ok = checks.stays_for(h.entries[:1], _running(1), "1 Running", start=1, duration=5, now=9)
    assert ok.status == PASS
    early = checks.stays_for(h.entries[:1], _running(1), "1 Running", start=1, duration=5, now=2)
    assert early.status == UNKNOWN


def _created(name: str):
    return checks.Event(f"pod/{NS}/{name} was created",
                        lambda c, s: c.name == name and c.type == "ADDED")


def test_happened_before_in_both_orders():
    h = History()
    h.pod(0, "a")
    h.pod(1, "b")
    assert checks.happened_before(h.entries, _created("a"), _created("b")).status == PASS
    wrong = checks.happened_before(h.entries, _created("b"), _created("a"))
    assert wrong.status == VIOLATED and "happened before" in wrong.summary
    missing = checks.happened_before(h.entries, _created("a"), _created("zzz"))
    assert missing.status == VIOLATED and "never happened" in missing.summary


def test_no_earlier_than_measures_from_the_latest_trigger_on_the_clusters_clock():
    h = History()
    h.pod(0, "trigger", written=0)
    h.pod(4, "reaction", written=4)
    assert checks.no_earlier_than(h.entries, _created("reaction"), _created("trigger"),
                                  delay=2.5).status == PASS
    verdict = checks.no_earlier_than(h.entries, _created("reaction"), _created("trigger"),
                                     delay=6)
    assert verdict.status == VIOLATED
    assert [e.name for e in verdict.witness] == ["trigger", "reaction"]
    # written within a second or two of each other: whether 4 s passed is not known
    close = History()
    close.pod(0, "trigger", written=0)
    close.pod(4, "reaction", written=2)
    assert checks.no_earlier_than(close.entries, _created("reaction"), _created("trigger"),
                                  delay=2).status == UNKNOWN


def test_no_earlier_than_orders_by_etcd_not_by_which_watch_delivered_first():
    """make test under load: the pod watch delivered a ReplicaSet's pod before the deployment
    watch delivered the Deployment written before it, and "the Deployment exists before its
    pods" (no earlier than 0 s) was VIOLATED."""
    h = History()
    h.pod(0, "reaction", rv=20, written=0)  # delivered first, written second
    h.pod(0.3, "trigger", rv=10, written=0)
    assert checks.no_earlier_than(h.entries, _created("reaction"), _created("trigger"),
                                  delay=0).status == PASS
    assert checks.no_earlier_than(h.entries, _created("trigger"), _created("reaction"),
                                  delay=0).status == VIOLATED


def test_became_true_counts_transitions_only():
    h = History()
    h.pod(0, "p0")
    h.pod(1, "p0", "MODIFIED")
    h.pod(2, "p0", "MODIFIED", phase="Failed")
    h.pod(3, "p0", "MODIFIED")
    became = checks.became_true(_running(1), "one Running")
    assert [c.entry.mono for c in checks.occurrences(h.entries, became)] == [0, 3]


@pytest.mark.parametrize(("text", "user", "expected"), [
    ("the replicaset controller", "system:serviceaccount:kube-system:replicaset-controller", True),
    ("the replicaset controller", "system:serviceaccount:kube-system:job-controller", False),
    ("the harness", "aftershock", True),
    ("the scheduler", "system:kube-scheduler", True),
    ("kwok-controller", "kwok-controller", True),
])
def test_actor_names(text, user, expected):
    assert checks.actor_matches(text)(user) is expected


def test_creates_and_deletions_are_counted_by_the_audit_log():
    h = History()
    rs = "system:serviceaccount:kube-system:replicaset-controller"
    h.audit(0, "create", "p0", rs, labels=APP)
    h.audit(1, "create", "p1", rs, labels=APP)
    h.audit(2, "create", "x", rs, labels={"app": "db"})
    h.pod(2.1, "p0")
    h.pod(2.2, "p1")
    h.audit(3, "create", "p0", "aftershock", sub="eviction")
    h.audit(4, "delete", "p1", rs)
    made = checks.created_by(h.entries, NS, APP, 2, checks.actor_matches(rs), "rs", "web")
    assert made.status == PASS
    evicted = checks.deleted_count(h.entries, NS, APP, 1, checks.actor_matches("aftershock"),
                                   "aftershock", "web")
    assert evicted.status == PASS and [e.name for e in evicted.witness] == ["p0"]


def _node(h: History, at: float, status: str, stamp: str, lag: float = 0.0) -> Entry:
    """The node as written at ``at`` on the API server's clock, recorded ``lag`` later."""
    obj = {"metadata": {"name": "n1"}, "status": {"conditions": [
        {"type": "Ready", "status": status, "lastTransitionTime": stamp}]}}
    return h._add(at + lag, WATCH, resource="nodes", name="n1", type="MODIFIED", object=obj,
                  extra={"written": _stamp(at)})


def _stamp(at: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(1e9 + at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_honest_transitions_pass_when_times_move_with_the_status():
    h = History()
    _node(h, 0, "True", _stamp(0))
    _node(h, 5, "True", _stamp(0))
    _node(h, 10, "False", _stamp(10))
    assert checks.honest_transitions(h.entries, "nodes", "", "n1", "Ready").status == PASS


def test_the_recorders_lag_is_not_charged_to_the_transition_time():
    """Written at 10 with a stamp of 10, recorded 5 s later: honest (the recorder's arrival
    time used to be taken for the cluster's, and this was 'not when it changed')."""
    h = History()
    _node(h, 0, "True", _stamp(0))
    _node(h, 10, "False", _stamp(10), lag=5)
    assert checks.honest_transitions(h.entries, "nodes", "", "n1", "Ready").status == PASS


@pytest.mark.parametrize(("status", "stamp", "why"), [
    ("False", _stamp(0), "status changed but lastTransitionTime stayed"),
    ("True", _stamp(10), "lastTransitionTime moved without a status change"),
    ("False", _stamp(100), "is not when it changed"),
])
def test_dishonest_transition_times_are_caught(status, stamp, why):
    h = History()
    first_seen = _node(h, 0, "True", _stamp(0))
    broke = _node(h, 10, status, stamp)
    verdict = checks.honest_transitions(h.entries, "nodes", "", "n1", "Ready")
    assert verdict.status == VIOLATED and why in verdict.summary
    assert verdict.witness == [first_seen, broke]


def test_exactly_counts_each_deletion_once_and_shows_the_surplus():
    from aftershock.phrases.objects import Deletion

    history = History()
    for name in ("a", "b", "c"):
        history.pod(0.0, name)
    history.pod(1.0, "a", "MODIFIED", deleting=True)
    history.pod(1.1, "a", "MODIFIED", deleting=True)  # still the same deletion
    history.pod(1.2, "b", "MODIFIED", deleting=True)
    marked = Deletion("a pod was marked for deletion", lambda e, _s: e.resource == "pods",
                      frozenset({"pods"}))
    assert checks.exactly(history.entries, marked, 2).status == PASS
    history.pod(2.0, "c", "DELETED")
    verdict = checks.exactly(history.entries, marked, 2)
    assert verdict.status == VIOLATED and "3 times, expected exactly 2" in verdict.summary
    assert [e.name for e in verdict.witness] == ["a", "b", "c"]
    assert checks.exactly(history.entries, marked, 4).status == VIOLATED
    history.gap(3.0)
    assert _settled(checks.exactly(history.entries, marked, 3), history).status == UNKNOWN


def test_happened_before_orders_two_watch_streams_by_resource_version():
    """The recorder may receive a pod's ADDED before its Deployment's (two streams); the
    resourceVersions (etcd revisions) say which was created first."""
    from aftershock.checks.temporal import Event, happened_before
    from aftershock.timeline.entry import WATCH, Entry

    pod = Entry(0, 1.0, 0.0, WATCH, "pods", "ns", "web-1", rv="1068", type="ADDED", object={})
    deployment = Entry(1, 1.0, 0.0, WATCH, "deployments", "ns", "web", rv="1064", type="ADDED",
                       object={})
    is_deployment = Event("deployment/web created", lambda e, _: e.resource == "deployments")
    is_pod = Event("a pod of web created", lambda e, _: e.resource == "pods")
    assert happened_before([pod, deployment], is_deployment, is_pod).status == "pass"
    assert happened_before([pod, deployment], is_pod, is_deployment).status == "violated"


def test_deleted_count_wants_exactly_that_many_deletions_by_that_actor():
    chaos = "system:serviceaccount:chaos-mesh:chaos-controller-manager"
    h = History()
    h.pod(0, "p0")
    h.pod(0, "p1")

    def count(n: int):
        return checks.deleted_count(h.entries, NS, APP, n, checks.actor_matches(chaos),
                                    "Chaos Mesh", "web")

    # an actor the audit log never shows: what it did is not known (words naming nobody)
    assert count(1).status == UNKNOWN and "no request by Chaos Mesh" in count(1).summary
    h.audit(2, "patch", "p1", chaos)
    assert count(1).status == VIOLATED and count(1).by_absence  # nothing killed yet
    h.audit(3, "delete", "p0", "aftershock")  # someone else's deletion does not count
    assert count(1).status == VIOLATED
    h.audit(4, "delete", "p1", chaos)
    assert count(1).status == PASS and count(1).witness[0].name == "p1"
    assert count(0).status == VIOLATED
    # a second delete of the pod it already deleted (a force delete after the mark) is still
    # one pod: it used to count requests, "2 of the 2 pods"
    h.audit(5, "delete", "p1", chaos)
    assert count(1).status == PASS and "1 of the 2 pods" in count(1).summary


def test_a_watch_behind_a_catch_up_does_not_bring_back_what_the_list_found_gone():
    """A catch-up's list found pod/ns/gone deleted while the pod watch was held back; the
    watch then delivers its older events. They must not bring the pod back into the state a
    wait asks (CI: a wait's record showed a pod the cluster had not had for seconds); a later
    life of the name, past the list, is applied."""
    pod = {"metadata": {"name": "gone", "namespace": "ns"}}
    state = State()
    state.apply(Entry(0, 0.0, 0.0, WATCH, resource="pods", namespace="ns", name="gone",
                      rv="10", type="ADDED", object=pod))
    state.apply(Entry(1, 1.0, 1.0, GAP_END, resource="pods", rv="20",
                      extra={"changes": [{"type": "DELETED", "object": pod}]}))
    state.apply(Entry(2, 2.0, 2.0, WATCH, resource="pods", namespace="ns", name="gone",
                      rv="12", type="MODIFIED", object=pod))
    assert state.get("pods", "ns", "gone") is None
    state.apply(Entry(3, 3.0, 3.0, WATCH, resource="pods", namespace="ns", name="gone",
                      rv="25", type="ADDED", object=pod))
    assert state.get("pods", "ns", "gone") is not None
