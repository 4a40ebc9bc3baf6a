"""`aftershock explore`'s pure logic, without a cluster: the differential oracles (E1-E3) over
synthetic histories, fields that vary masked; plans anchored on reference traces and pruned;
workloads and options refused with file:line; a finding written as a scenario."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.checks import differential as diff
from aftershock.cli.explore import budget_seconds, plan_kinds, table
from aftershock.errors import UserError
from aftershock.explore import oracles, plans, trace
from aftershock.explore.workload import RUNNING, load, with_block
from aftershock.properties import Judgement
from aftershock.timeline.entry import AUDIT, AUDIT_SYNC, MARK, WATCH, Entry
from tests.verdict_corpus import keep

NS = "ns-1"
ACTOR = "system:serviceaccount:ns-1:impl"


class History:
    def __init__(self, namespace: str = NS) -> None:
        self.entries: list[Entry] = []
        self.namespace = namespace

    def add(self, at: float, kind: str, **fields) -> Entry:
        entry = Entry(seq=len(self.entries), mono=at, wall=1e9 + at, kind=kind, **fields)
        self.entries.append(entry)
        return entry

    def pod(self, at: float, name: str, phase: str = "Running", node: str = "node-1",
            kind: str = "ADDED") -> None:
        obj = {"metadata": {"name": name, "namespace": self.namespace, "uid": f"u-{name}",
                            "creationTimestamp": f"2026-11-23T10:00:0{int(at) % 10}Z",
                            "labels": {"group": "web"}},
               "spec": {"nodeName": node}, "status": {"phase": phase}}
        self.add(at, WATCH, resource="pods", namespace=self.namespace, name=name,
                 uid=f"u-{name}", rv=str(len(self.entries) + 1), type=kind, object=obj)

    def write(self, at: float, verb: str, name: str, code: int = 201,
              actor: str = ACTOR) -> None:
        self.add(at, AUDIT, resource="pods", namespace=self.namespace, name=name, verb=verb,
                 actor=actor, code=code, uid=f"u-{name}" if verb == "create" else "")

    def synced(self, at: float) -> None:
        self.add(at, AUDIT_SYNC, extra={"caught_up": True})


def _run(names: list[str], namespace: str = NS, node: str = "node-1") -> History:
    h = History(namespace)
    for index, name in enumerate(names):
        h.write(index + 0.5, "create", name, actor=f"system:serviceaccount:{namespace}:impl")
        h.pod(index + 1.0, name, node=node)
    h.synced(len(names) + 1.0)
    return h


def _learned(*runs: History) -> oracles.Reference:
    return oracles.learn([(h.entries, h.namespace, f"system:serviceaccount:{h.namespace}:impl")
                          for h in runs])


def test_fields_that_vary_between_reference_runs_are_masked_and_the_rest_compared():
    reference = _learned(_run(["web-a", "web-b"], "r1"), _run(["web-x", "web-y"], "r2"))
    assert "metadata.name" in reference.masks["pods"]
    assert "status.phase" not in reference.masks["pods"]
    assert reference.counts == {"pods create": [2, 2]}
    # The references agreed on the node by chance: where the scheduler put a pod is no output
    # of the implementation, and is never compared.
    elsewhere = _run(["web-p", "web-q"], node="node-2")
    judged = properties.judge(["E1"], Judgement("end_state_as_reference", {
        "namespace": NS, "reference": reference.objects, "masks": reference.masks}),
        elsewhere.entries)
    assert judged.status == PASS, judged.summary


def test_e1_compares_only_what_the_implementation_created():
    """An implementation in the cluster has a pod of its own beside the ones it makes, and a
    plan's sidecar changes that pod's spec: not the implementation's output."""
    def with_own_pod(h: History, args: str) -> History:
        h.pod(0.1, "operator-7d9f", node="node-2")
        h.entries[-1].object["spec"]["args"] = [args]
        return h

    reference = _learned(with_own_pod(_run(["web-a", "web-b"], "r1"), "observe"),
                         with_own_pod(_run(["web-x", "web-y"], "r2"), "observe"))
    plan = with_own_pod(_run(["web-p", "web-q"]), "--anchors stall")
    params = {"namespace": NS, "reference": reference.objects, "masks": reference.masks,
              "actor": ACTOR}
    assert properties.judge(["E1"], Judgement("end_state_as_reference", params),
                            plan.entries).status == PASS
    unfiltered = {k: v for k, v in params.items() if k != "actor"}
    assert properties.judge(["E1"], Judgement("end_state_as_reference", unfiltered),
                            plan.entries).status == VIOLATED  # as it was: the sidecar's args
    # Any other kind's create is audited without its response: named by its request alone
    service = {"metadata": {"name": "web", "namespace": NS, "uid": "u-svc"},
               "spec": {"ports": [{"port": 80}]}}
    plan.add(9.0, AUDIT, resource="services", namespace=NS, name="web", verb="create",
             actor=ACTOR, code=201)
    plan.add(9.1, WATCH, resource="services", namespace=NS, name="web", uid="u-svc", rv="99",
             type="ADDED", object=service)
    ends = diff.end_objects(plan.entries, NS, ["pods", "services"], ACTOR)
    assert [o["metadata"]["name"] for o in ends["services"]] == ["web"]
    assert sorted(o["metadata"]["name"] for o in ends["pods"]) == ["web-p", "web-q"]


def test_a_different_end_state_is_a_violation_that_names_the_field():
    reference = _learned(_run(["web-a", "web-b"], "r1"), _run(["web-x", "web-y"], "r2"))
    other = _run(["web-p", "web-q"])
    other.pod(9.0, "web-q", phase="Pending", kind="MODIFIED")
    judged = properties.judge(["E1"], Judgement("end_state_as_reference", {
        "namespace": NS, "reference": reference.objects, "masks": reference.masks}),
        other.entries)
    assert judged.status == VIOLATED
    assert "status.phase" in judged.summary and "Pending" in judged.summary
    more = _run(["web-p", "web-q", "web-r"])
    assert properties.judge(["E1"], Judgement("end_state_as_reference", {
        "namespace": NS, "reference": reference.objects, "masks": reference.masks}),
        more.entries).status == VIOLATED


def _status_by(h: History, actor: str) -> History:
    for name in ("web-a", "web-b", "web-x", "web-y", "web-p", "web-q"):
        h.add(0.8, AUDIT, resource="pods", namespace=h.namespace, name=name, verb="patch",
              subresource="status", actor=actor, code=200)
    return h


def test_a_status_only_others_wrote_is_masked_and_one_the_implementation_wrote_is_judged():
    """A Deployment's status is the deployment controller's: where another actor wrote a kind's
    status subresource in the reference runs and the implementation never did, E1 judges the
    rest of the object (held out: sample-controller's Deployments ended with another
    status.observedGeneration after a perturbation made it write more)."""
    kubelet = "system:node:node-1"
    reference = _learned(_status_by(_run(["web-a", "web-b"], "r1"), kubelet),
                         _status_by(_run(["web-x", "web-y"], "r2"), kubelet))
    assert "status" in reference.masks["pods"]
    other = _status_by(_run(["web-p", "web-q"]), kubelet)
    other.pod(9.0, "web-q", phase="Pending", kind="MODIFIED")
    params = {"namespace": NS, "reference": reference.objects, "masks": reference.masks}
    assert properties.judge(["E1"], Judgement("end_state_as_reference", params),
                            other.entries).status == PASS
    mine = "system:serviceaccount:{}:impl"
    reference = _learned(_status_by(_status_by(_run(["web-a", "web-b"], "r1"), kubelet),
                                    mine.format("r1")),
                         _status_by(_run(["web-x", "web-y"], "r2"), kubelet))
    assert "status" not in reference.masks["pods"]
    params = {"namespace": NS, "reference": reference.objects, "masks": reference.masks}
    assert properties.judge(["E1"], Judgement("end_state_as_reference", params),
                            other.entries).status == VIOLATED


def test_creates_beyond_the_reference_range_violate_e2_and_within_it_pass():
    expected = {"pods create": [2, 3]}
    params = {"actor": ACTOR, "namespace": NS, "expected": expected}
    assert properties.judge(["E2"], Judgement("writes_as_reference", params),
                            _run(["a", "b", "c"]).entries).status == PASS
    churn = _run(["a", "b", "c", "d"])
    churn.write(9.0, "delete", "d", code=200)
    churn.synced(9.5)
    judged = properties.judge(["E2"], Judgement("writes_as_reference", params), churn.entries)
    assert judged.status == VIOLATED
    assert "4 pods create (reference: 2..3)" in judged.summary
    assert "1 pods delete (reference: 0)" in judged.summary


def test_e2_over_an_audit_log_that_had_not_caught_up_is_unknown():
    h = _run(["a", "b"])
    h.add(9.0, AUDIT_SYNC, extra={"caught_up": False})
    judged = properties.judge(["E2"], Judgement("writes_as_reference", {
        "actor": ACTOR, "namespace": NS, "expected": {"pods create": [2, 2]}}), h.entries)
    assert judged.status == UNKNOWN


def test_refused_writes_in_a_loop_are_an_error_storm():
    h = _run(["a"])
    for index in range(15):
        h.write(3.0 + index * 0.1, "create", f"x{index}", code=422)
    h.synced(9.0)
    storm = properties.judge(["E3"], Judgement("no_error_storm", {"actor": ACTOR,
                                                                 "limit": 10}), h.entries)
    assert storm.status == VIOLATED and len(storm.witness) == 15
    spread = _run(["a"])
    for index in range(15):
        spread.write(3.0 + index * 11, "create", f"x{index}", code=422)
    spread.synced(200.0)
    assert properties.judge(["E3"], Judgement("no_error_storm", {"actor": ACTOR, "limit": 10}),
                            spread.entries).status == PASS


def test_deletes_of_objects_already_gone_are_no_error_storm():
    """AIStore's operator deletes its PodDisruptionBudget and a Certificate if they exist at
    every reconcile: 46 answers of 404 within 10 s broke E3 after a drain. A delete answered 404
    found the object gone, which is what it asked for; any other refused delete still counts."""
    def storm(code: int) -> str:
        h = _run(["a"])
        for index in range(46):
            h.write(3.0 + index * 0.2, "delete", "data-target", code=code)
        h.synced(20.0)
        return properties.judge(["E3"], Judgement("no_error_storm", {
            "actor": ACTOR, "namespace": NS, "limit": 42}), h.entries).status

    assert storm(404) == PASS
    assert storm(409) == VIOLATED and storm(403) == VIOLATED


def test_retries_while_a_perturbation_lasts_are_no_storm_unless_they_never_back_off():
    from aftershock.timeline.entry import MARK

    def run(during: int, later: int = 0) -> str:
        h = _run(["a"])
        h.add(2.5, MARK, detail="fired: stall at the 2nd ADDED pods event for 10s",
              extra={"lasts": 10.0})
        for index in range(during):
            h.write(3.0 + index * 0.05, "create", f"x{index}", code=409)
        for index in range(later):  # still refused once the view is current again
            h.write(15.0 + index * 0.1, "create", f"y{index}", code=409)
        h.synced(60.0)
        return properties.judge(["E3"], Judgement("no_error_storm", {
            "actor": ACTOR, "namespace": NS, "limit": 10}), h.entries).status

    assert run(24) == PASS  # retries backing off while the view is stale
    assert run(24, later=11) == VIOLATED  # they go on after it was lifted (and its grace)
    assert run(101) == VIOLATED  # 101 refusals in 5 s: a loop with no backoff


def _trace(events: list[tuple[float, str, str]], writes: list[tuple[float, str, str]]):
    out = trace.Trace()
    seen: dict = {}
    for at, resource, type in events:
        seen[(resource, type)] = seen.get((resource, type), 0) + 1
        out.events.append(trace.Event(at, resource, type, "x", seen[(resource, type)]))
    kinds: dict = {}
    for at, resource, verb in writes:
        kinds[(resource, verb)] = kinds.get((resource, verb), 0) + 1
        out.writes.append(trace.Write(at, resource, verb, len(out.writes) + 1,
                                      kinds[(resource, verb)]))
    return out


def _workload(tmp_path: Path) -> object:
    path = tmp_path / "w.steps"
    path.write_text("Given a cluster with 3 nodes\nAnd a replica group web with 3 replicas\n"
                    "When I scale the replica group web to 5\n")
    return load(path)


def test_plans_are_anchored_on_events_every_reference_saw_and_acted_on(tmp_path):
    workload = _workload(tmp_path)
    events = [(1.0, "pods", "ADDED"), (1.1, "pods", "ADDED"), (5.0, "pods", "MODIFIED"),
              (9.0, "pods", "MODIFIED")]
    writes = [(1.2, "pods", "create"), (5.5, "pods", "create")]
    one = _trace(events, writes)
    two = _trace([*events, (9.5, "pods", "MODIFIED")], writes)
    made = plans.generate(workload, [one, two], ["node-1"], {}, seed=1)
    stale = sorted(p.anchor for p in made.plans if p.kind == "stale")
    # ADDED#2 is answered by the same write as ADDED#1; MODIFIED#2 by none; MODIFIED#3 is not
    # seen by every reference run.
    assert stale == ["pods-ADDED#1", "pods-MODIFIED#1"]
    assert made.pruned == {"the same write answers the anchor before it": 1,
                           "never acted on": 1, "not seen in every reference run": 1}
    kills = sorted(p.step for p in made.plans if p.kind == "intermediate")
    assert kills == ["Given the implementation is killed and restarted right after its 1st "
                     "pod create", "Given the implementation is killed and restarted right "
                     "after its 2nd pod create"]
    assert {p.kind for p in made.plans[:4]} == set(plans.KINDS)  # interleaved by kind
    again = plans.generate(workload, [one, two], ["node-1"], {}, seed=1)
    assert [p.step for p in again.plans] == [p.step for p in made.plans]


def test_every_generated_plan_step_is_a_known_step(tmp_path):
    from aftershock.grammar import match_step

    workload = _workload(tmp_path)
    one = _trace([(1.0, "replicagroups", "MODIFIED")], [(1.2, "pods", "create")])
    made = plans.generate(workload, [one], ["node-1"], {"replicagroups": "replicagroup"})
    assert made.plans
    for plan in made.plans:
        assert match_step(plan.step.split(" ", 1)[1]) is not None, plan.step


def test_a_workload_gets_the_implementation_started_after_its_cluster_step(tmp_path):
    workload = _workload(tmp_path)
    assert [s.text for s in workload.steps][:2] == ["a cluster with 3 nodes", RUNNING]
    assert workload.started == 1 and workload.actions() == [2, 3]
    assert oracles.labelled([s.text for s in workload.steps]) == [
        "Then at no point did the replica group web have more than 5 live pods (R1)",
        "Then within 30 seconds the replica group web has 5 live pods (R5)"]


def test_after_a_node_deleted_undrained_r5_waits_for_the_clusters_pod_collector(tmp_path):
    """Held out: prometheus-operator rolls its StatefulSet when scaled; the pod on a node
    deleted without a drain stays terminating until kube-controller-manager's pod garbage
    collector deletes it (40-60 s), and no implementation can replace it before: 6 of 63 plans
    broke R5's 30 s."""
    steps = [s.text for s in _workload(tmp_path).steps]
    drained = oracles.labelled([*steps, "I drain node node-1 deleting emptyDir data"])
    assert "Then within 30 seconds the replica group web has 5 live pods (R5)" in drained
    gone = oracles.labelled([*steps, "I delete node node-1 without draining it"])
    assert "Then within 90 seconds the replica group web has 5 live pods (R5)" in gone


def _refused(tmp_path: Path, text: str) -> tuple[Path, str]:
    """A workload of ``text`` loaded: its path and the one-line refusal it gets."""
    path = tmp_path / "w.steps"
    path.write_text(text)
    with pytest.raises(UserError) as refused:
        load(path)
    return path, str(refused.value)


def test_an_unknown_step_in_a_workload_names_file_line_and_the_closest_step(tmp_path):
    path, message = _refused(tmp_path, "# a comment\nGiven a cluster with 3 nodes\nWhen I scael "
                                       "the replica group web to 5\n")
    assert f"{path}:3:" in message and "I scale the replica group <name> to <replicas>" in \
        message


def test_budgets_are_durations_and_bounded():
    assert budget_seconds("30m") == 1800 and budget_seconds("90s") == 90
    assert budget_seconds("1h") == 3600 and budget_seconds("45") == 45
    for bad in ("3x", "0s", "25h", "-1m"):
        with pytest.raises(UserError, match="--budget"):
            budget_seconds(bad)


def test_kinds_of_plan_are_named_from_the_four_in_explores_order():
    assert plan_kinds("node, stale") == ("stale", "node")
    for bad in ("stal", "", "stale,crash"):
        with pytest.raises(argparse.ArgumentTypeError, match="stale, intermediate, unobserved"):
            plan_kinds(bad)


def test_the_summary_of_an_exploration_that_ran_no_plan_says_so():
    """--plan-only runs no plan: its summary printed "mean Nones" before."""
    summary = {"plans_run": 0, "plans_generated": 123, "pruned": 4, "findings": 0, "bugs": 0,
               "flaky": 0, "errors": 0, "first_bug_after": None, "elapsed": 51.5,
               "seconds_per_plan": {"mean": None, "p50": None, "max": None},
               "plans_per_minute": None, "by_kind": {}, "list": []}
    lines = table(summary)
    assert lines[1] == "time per plan: no plan run; 51.5s in all"
    summary |= {"seconds_per_plan": {"mean": 9.5, "p50": 9.0, "max": 14.0},
                "plans_per_minute": 6.3}
    assert "None" not in "\n".join(table(summary))
    assert table(summary)[1].startswith("time per plan: mean 9.5s, p50 9.0s, max 14.0s")


def test_differential_flattening_keeps_lists_as_values_of_one_path():
    flat = diff.flatten({"a": {"b": [{"c": 1}, {"c": 2}]}, "d": "x"})
    assert flat == {"a.b[*].c": (1, 2), "d": "x"}
    normal = diff.normal({"metadata": {"namespace": "ns-9", "uid": "u"},
                          "spec": {"owner": "ns-9", "at": "2026-11-23T10:00:00Z"}}, "ns-9")
    assert normal == {"spec.owner": "{namespace}"}


def test_a_heartbeat_that_only_moves_a_timestamp_is_no_change_for_quiet():
    from aftershock.bdd.steps.anchored import last_change

    h = History()
    h.pod(1.0, "web-a")
    h.pod(2.0, "web-a", kind="MODIFIED")  # only creationTimestamp's second moved
    assert last_change(h.entries, NS, 0.0) == 1.0
    h.pod(3.0, "web-a", phase="Pending", kind="MODIFIED")
    assert last_change(h.entries, NS, 0.0) == 3.0
    h.add(4.0, WATCH, resource="events", namespace=NS, name="e", type="ADDED", object={})
    assert last_change(h.entries, NS, 0.0) == 3.0
    assert last_change([], NS, 7.0) == 7.0


def test_the_wait_for_quiet_runs_from_the_end_of_the_last_perturbation():
    """A stall keeps the namespace still while the implementation is blind: the end state is
    judged only once the stall is over (a 10 s stall once passed for quiet at 6 s and judged a
    correct storage operator that had not yet shrunk, explore's only false positives)."""
    from aftershock.bdd.steps.anchored import last_change
    from aftershock.timeline.entry import MARK

    h = History()
    h.pod(1.0, "web-a")
    assert diff.perturbation_over(h.entries) == 0.0
    h.add(2.0, MARK, detail="fired: stall at the 1st ADDED pods event for 10s",
          extra={"lasts": 10.0})
    h.add(3.0, MARK, detail="fired: kill after the 2nd write", extra={"lasts": 0.0})
    h.add(4.0, MARK, detail="namespace/x still changing")  # no duration: not a fault
    assert diff.perturbation_over(h.entries) == 12.0
    assert last_change(h.entries, NS, 0.0) == 1.0


def test_the_gang_workload_is_tagged_with_its_shape_and_judged_by_g1_g6_g8():
    workload = load(Path("workloads/gang.steps"))
    assert workload.shape == "three-small-nodes"
    assert workload.actions() == [2, 3, 4, 5]  # node plans: after the gang, Ready, 5 s healthy
    assert oracles.labelled([s.text for s in workload.steps], ["gang"]) == [
        "Then every regression of the gang train below minAvailable was breached within 10 "
        "seconds (G1)",
        "Then the gang train was terminated at most 1 times (G6)",
        "Then at no point did group 0 of the gang train have more than 3 live pods (G8)"]
    from aftershock.grammar import label_problem, match_step

    for line in oracles.labelled([s.text for s in workload.steps], ["gang"]):
        text = line.split(" ", 1)[1]
        found = match_step(text)
        assert found is not None and label_problem(text, found[0]) is None, line


def test_after_a_node_fault_the_workload_waits_are_cut_to_what_the_references_took():
    from aftershock.explore.explorer import Outcome, lines_for, wait_cap_of

    workload = load(Path("workloads/dra_devices.steps"))
    slow = Outcome("reference-1", [], 0.0, step_seconds={
        "Given within 60 seconds 3 pods of web are Running": 9.2, "Given 3 seconds pass": 3.0})
    cap = wait_cap_of([slow, Outcome("reference-2", [], 0.0)])
    assert cap == 19  # twice the longest wait, rounded up; never below the floor
    assert wait_cap_of([Outcome("r", [], 0.0)]) == 15
    node = plans.Plan("node", "When I delete node node-1 without draining it", 3, "delete")
    lines = lines_for(workload, node, [], cap)
    cut = [line for line in lines if "within" in line]
    assert cut == ["Given within 60 seconds 3 pods of web are Running",  # before the fault
                   "When within 19 seconds 3 pods of web are Running"]
    stale = plans.Plan("stale", "Given the pod watch of the implementation stalls at its 1st "
                       "ADDED event for 4 seconds", 1, "pods-ADDED#1")
    assert all("within 60" in line for line in lines_for(workload, stale, [], cap)
               if "within" in line)


def test_several_durations_make_a_plan_each_with_its_duration_in_the_anchor(tmp_path):
    from aftershock.cli.explore import durations

    assert durations("4") == (4.0,) and durations("1,4,10,4") == (1.0, 4.0, 10.0)
    one = _trace([(1.0, "pods", "ADDED")], [(1.2, "pods", "create")])
    made = plans.generate(_workload(tmp_path), [one], [], {}, stall=durations("1,10"),
                          miss=durations("3"))
    assert sorted(p.anchor for p in made.plans if p.kind == "stale") == [
        "pods-ADDED#1-10s", "pods-ADDED#1-1s"]
    assert [p.anchor for p in made.plans if p.kind == "unobserved"] == ["pods-ADDED#1"]
    assert any("for 10 seconds" in p.step for p in made.plans)


def test_a_stateful_set_scaled_down_is_judged_by_its_claims_and_its_size():
    workload = load(Path("workloads/stateful_set.steps"))
    assert oracles.labelled([s.text for s in workload.steps], ["stateful_set"]) == [
        "Then at no point did db have more than 3 live pods",
        "Then the claims of the removed ordinals of db and their volumes are still there (S2)"]


def _explorer_with(findings):
    """An Explorer's bookkeeping alone: no session, no cluster."""
    from aftershock.explore.explorer import Explorer

    explorer = Explorer.__new__(Explorer)
    explorer.findings = findings
    return explorer


def test_a_finding_is_a_bug_only_after_every_replay_it_needs():
    """The budget ran out after one replay that reproduced: 1 of 1 used to be a bug."""
    from aftershock.explore.explorer import Finding, Outcome

    finding = Finding(1, None, Outcome("plan", [], 1.0), reproduced=1, replayed=1, wanted=3)
    assert finding.verdict == "not enough replays"
    finding.replayed, finding.reproduced = 3, 3
    assert finding.verdict == "bug"
    finding.reproduced = 1
    assert finding.verdict == "flaky"


def test_a_plan_like_a_flaky_finding_is_replayed_not_folded_into_it():
    from aftershock.explore.explorer import Finding, Outcome
    from aftershock.explore.plans import Plan

    plan = Plan("stall", "When the pod watch stalls", 1, "pods#3")
    flaky = Finding(1, plan, Outcome("a", [], 1.0, violated={"R1": "x"}, fired=True),
                    reproduced=1, replayed=3, wanted=3)
    explorer = _explorer_with([flaky])
    later = Plan("stall", "When the pod watch stalls", 1, "pods#5")
    assert not explorer.same_bug(later, {"R1": "x"}, [])
    flaky.reproduced = 3  # a bug: the same fault kind breaking the same is that bug again
    assert explorer.same_bug(later, {"R1": "x"}, []) and flaky.same == ["pods#5"]
    assert not explorer.same_bug(later, {"R1": "x", "R5": "y"}, [])
    assert not explorer.same_bug(later, {"R1": "x"}, ["pod/web-*"])  # on other objects
    assert not explorer.same_bug(later, {"R1": "x"}, [], fired=False)  # no fault: no bug's


def test_a_finding_whose_fault_never_fired_is_said_so_and_credited_to_no_fault():
    """Argo Rollouts' plan 132 stalled its ReplicaSet watch at the 8th MODIFIED event, which
    never came (the bug it found kept the ReplicaSet from changing): the run had no fault,
    yet explore reported a stale-watch finding. Such a finding is "its fault never fired",
    counted under no fault kind, and takes in no later plan."""
    from aftershock.explore.explorer import NOT_FIRED, Finding, Outcome
    from aftershock.explore.plans import Plan

    plan = Plan("stale", "When the replicaset watch stalls", 1, "replicasets-MODIFIED#8")
    unfired = Finding(1, plan, Outcome("a", [], 1.0, violated={"R5": "x"}), reproduced=3,
                      replayed=3, wanted=3)
    assert unfired.kind == NOT_FIRED and unfired.verdict == "bug"
    explorer = _explorer_with([unfired])
    later = Plan("stale", "When the replicaset watch stalls", 1, "replicasets-MODIFIED#9")
    assert not explorer.same_bug(later, {"R5": "x"}, [])
    assert not explorer.same_bug(later, {"R5": "x"}, [], fired=False)
    node = Finding(2, Plan("node", "When I drain node node-1", 1, "drain-node-1"),
                   Outcome("b", [], 1.0, violated={"R5": "x"}))
    assert node.kind == "node"  # a node plan's fault is a step: it always runs
    import time as clock

    from aftershock.explore.explorer import Settings

    explorer.outcomes, explorer.generated, explorer.began = [], None, clock.monotonic()
    explorer.settings, explorer.first_bug_after = Settings(), None
    explorer.reference_violations = set()
    summary = explorer.summary()
    assert summary["not_fired"] == 1 and summary["by_kind"]["stale"]["findings"] == 0
    assert summary["list"][0]["kind"] == NOT_FIRED


def test_a_property_a_reference_run_broke_still_judges_every_plan():
    """It used to be left out of every later plan: one flaky reference blinded the rest."""
    from aftershock.explore.explorer import Outcome
    from aftershock.explore.plans import Plan

    explorer = _explorer_with([])
    explorer.reference_violations = {"R1"}
    plan = Plan("stall", "When the pod watch stalls", 1, "pods#3")
    outcome = Outcome("p", [], 1.0, violated={"R1": "11 live pods"})
    assert explorer.new_violations(plan, outcome) == {"R1": "11 live pods"}


def test_a_flaky_finding_its_control_runs_break_with_no_fault_is_said_so_and_absorbs_none(
        tmp_path):
    """Grove at d5afd169 creates a Secret and the ServiceAccount it names concurrently: half
    the runs break E2 whatever the plan. Its control runs say so ("flaky without a fault"); a
    later plan breaking E2 is still replayed in its own right: it may break it every time."""
    from aftershock.explore import explorer as exploring
    from aftershock.explore.explorer import Finding, Outcome
    from aftershock.explore.plans import Plan

    plan = Plan("stale", "Given the pod watch of the implementation stalls at its 3rd ADDED "
                "event for 4 seconds", 1, "pods-ADDED#3")
    feature = tmp_path / "f.feature"
    feature.write_text("Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                       "    And the implementation under test is running\n"
                       f"    And {plan.step.split(' ', 1)[1]}\n"
                       "    When 5 seconds pass\n")
    flaky = Finding(1, plan, Outcome("a", [], 1.0, violated={"E2": "2 secrets"}),
                    feature=feature, reproduced=5, replayed=10, wanted=10)
    explorer = _explorer_with([flaky])
    played = []

    def play(name, lines, feature=None):
        played.append(lines)
        return Outcome(name, lines, 1.0, violated={"E2": "2"} if len(played) % 2 else {})

    explorer.play, explorer.left, explorer.say = play, lambda: 60.0, lambda _: None
    explorer.control(flaky)
    assert flaky.controls == 10 and flaky.controlled == 5
    assert flaky.verdict == exploring.UNPERTURBED
    assert played[0] == ["Given a cluster with 3 nodes",
                         "Given the implementation under test is running", exploring.OBSERVED,
                         "When 5 seconds pass"]  # the references' steps: no plan's fault
    later = Plan("node", "When I drain node node-1", 3, "drain-node-1")
    assert not explorer.same_bug(later, {"E2": "x"}, []) and flaky.same == []
    assert not explorer.same_bug(plan, {"E2": "x"}, [])  # its own fault kind too
    flaky.controlled = 0  # the control runs held: only the plan breaks it, and it stays flaky
    assert flaky.verdict == "flaky" and not explorer.same_bug(later, {"E2": "x"}, [])


def test_the_shards_of_an_exploration_share_its_plans_and_reference(tmp_path):
    """Each shard learning its own references planned other anchors (the 4th MODIFIED event
    here, the 5th there): the merged shards found other plans than the whole run."""
    from types import SimpleNamespace

    from aftershock.explore.explorer import Explorer, Settings
    from aftershock.explore.plans import Plan, Plans

    def explorer(profile: str, workload: str) -> Explorer:
        made = Explorer.__new__(Explorer)
        made.session = SimpleNamespace(profile=SimpleNamespace(name=profile))
        made.workload = SimpleNamespace(path=Path(workload))
        made.settings, made.out, made.wait_cap = Settings(seed=3), tmp_path, 17
        made.reference_violations = {"R5"}
        return made

    first = explorer("p", "w.steps")
    first.generated = Plans([Plan("stale", "Given x", 1, "pods-MODIFIED#4"),
                             Plan("node", "When y", 3, "drain", differential=False)],
                            {"never acted on": 2})
    first.reference = oracles.Reference({"pods create": [5, 5]}, {}, {"pods": ["a"]}, 12,
                                        [("rbac.authorization.k8s.io", "roles")])
    first.reference.save(tmp_path / "reference.json")
    first.save_plans()
    shard = explorer("p", "w.steps")
    shard.adopt(tmp_path)
    assert shard.generated.plans == first.generated.plans
    assert shard.generated.pruned == {"never acted on": 2} and shard.wait_cap == 17
    assert shard.reference.counts == {"pods create": [5, 5]}
    assert shard.reference.records == [("rbac.authorization.k8s.io", "roles")]
    assert shard.reference.path == tmp_path / "reference.json"
    assert shard.reference_violations == {"R5"}
    with pytest.raises(UserError, match=r"its plans are for profile p and workload w\.steps"):
        explorer("q", "w.steps").adopt(tmp_path)
    with pytest.raises(UserError, match=r"no planned\.json"):
        explorer("p", "w.steps").adopt(tmp_path / "nowhere")


def test_what_the_cluster_writes_into_a_token_secret_is_not_the_implementations_output():
    """Grove makes a service-account token Secret; the token controller fills its data with
    the cluster's CA and a token. Explore's shards run on clusters of their own, so the CA
    differs from the reference's: E1 flagged every plan of Grove under --workers 2."""
    def secret(ca: str, kind: str = "kubernetes.io/service-account-token",
               mine: str = "x") -> dict:
        return {"metadata": {"name": "train-token", "namespace": NS},
                "type": kind, "data": {"ca.crt": ca, "token": ca, "namespace": "n",
                                       "mine": mine}}
    assert diff.normal(secret("sha256:aa"), NS) == diff.normal(secret("sha256:bb"), NS)
    assert diff.normal(secret("sha256:aa", mine="1"), NS) != \
        diff.normal(secret("sha256:bb", mine="2"), NS)  # a key the implementation wrote
    opaque = "Opaque"  # the same keys in a Secret of another type are the implementation's
    assert diff.normal(secret("sha256:aa", opaque), NS) != \
        diff.normal(secret("sha256:bb", opaque), NS)


def test_who_holds_a_leader_election_lease_is_the_runs_not_the_implementations_output():
    """RabbitMQ's operator always elects a leader, its lease in the scenario's namespace. A kill
    plan hands the lease over once more than the references did: E1 flagged
    spec.leaseTransitions 2 against 1 in its first kill plan. The lease's other fields, and the
    same fields of another kind, are still compared."""
    def lease(transitions: int, holder: str, duration: int = 4) -> dict:
        return {"metadata": {"name": "rabbitmq-cluster-operator-leader-election",
                             "namespace": NS},
                "spec": {"holderIdentity": holder, "leaseTransitions": transitions,
                         "leaseDurationSeconds": duration}}
    assert diff.normal(lease(1, "a"), NS, resource="leases") == \
        diff.normal(lease(2, "b"), NS, resource="leases")
    assert diff.normal(lease(1, "a"), NS, resource="leases") != \
        diff.normal(lease(1, "a", 15), NS, resource="leases")
    assert diff.normal(lease(1, "a"), NS, resource="widgets") != \
        diff.normal(lease(2, "b"), NS, resource="widgets")

    def run(namespace: str, transitions: int, holder: str) -> History:
        h = History(namespace)
        obj = lease(transitions, holder)
        obj["metadata"]["namespace"] = namespace
        h.add(0.5, AUDIT, resource="leases", namespace=namespace, name=obj["metadata"]["name"],
              verb="create", actor=f"system:serviceaccount:{namespace}:impl", code=201)
        h.add(1.0, WATCH, resource="leases", namespace=namespace, name=obj["metadata"]["name"],
              uid=f"u-{namespace}", rv="7", type="ADDED", object=obj)
        h.synced(2.0)
        return h
    reference = _learned(run("r1", 1, "rabbitmq-1"), run("r2", 1, "rabbitmq-2"))
    killed = run(NS, 2, "rabbitmq-3")
    params = {"namespace": NS, "reference": reference.objects, "masks": reference.masks,
              "actor": ACTOR}
    assert properties.judge(["E1"], Judgement("end_state_as_reference", params),
                            killed.entries).status == PASS
    keep("a-leader-election-handed-over-by-a-kill", killed.entries,
         Judgement("end_state_as_reference", params), ["E1"], {"E1": "pass"}, "violated",
         "explore of RabbitMQ's cluster-operator v2.20.0, issue 50 (its first kill plan)")


def test_a_list_whose_order_means_nothing_is_compared_sorted():
    """RabbitMQ's operator appends a Service's missing ports from a Go map, in the map's
    random order: E1 flagged ports [prometheus, amqp, management] against the references'
    [amqp, management, prometheus]. A Service's ports are a list-map by the schema the cluster
    publishes, so E1 compares them sorted; a list the schema leaves ordered is still compared
    in order."""
    def run(namespace: str, ports: list[str], args: list[str]) -> History:
        h = History(namespace)
        service = {"metadata": {"name": "web", "namespace": namespace},
                   "spec": {"ports": [{"name": n, "port": len(n)} for n in ports],
                            "args": args}}
        h.add(0.5, AUDIT, resource="services", namespace=namespace, name="web",
              verb="create", actor=f"system:serviceaccount:{namespace}:impl", code=201)
        h.add(1.0, WATCH, resource="services", namespace=namespace, name="web",
              uid=f"u-{namespace}", rv="7", type="ADDED", object=service)
        h.synced(2.0)
        return h
    order, args = ["amqp", "management", "prometheus"], ["--a", "--b"]
    refs = [run("r1", order, args), run("r2", order, args)]
    schemas = {"services": ["spec.ports"]}

    def judged(plan: History, unordered: dict) -> str:
        reference = oracles.learn([(h.entries, h.namespace,
                                    f"system:serviceaccount:{h.namespace}:impl")
                                   for h in refs], lambda owned: unordered)
        params = {"namespace": NS, "reference": reference.objects, "masks": reference.masks,
                  "actor": ACTOR, "unordered": reference.unordered}
        return properties.judge(["E1"], Judgement("end_state_as_reference", params),
                                plan.entries).status
    shuffled = run(NS, ["prometheus", "amqp", "management"], args)
    assert judged(shuffled, schemas) == PASS
    assert judged(shuffled, {}) == VIOLATED  # as it was judged
    assert judged(run(NS, order, ["--b", "--a"]), schemas) == VIOLATED  # an ordered list
    reference = oracles.learn([(h.entries, h.namespace,
                                f"system:serviceaccount:{h.namespace}:impl") for h in refs],
                              lambda owned: schemas)
    keep("a-list-map-in-another-order", shuffled.entries,
         Judgement("end_state_as_reference", {
             "namespace": NS, "reference": reference.objects, "masks": reference.masks,
             "actor": ACTOR, "unordered": reference.unordered}), ["E1"], {"E1": "pass"},
         "violated", "explore of RabbitMQ's cluster-operator v2.20.0, issue 50")


def test_the_lists_a_schema_leaves_unordered_are_found_through_its_references():
    from aftershock.kube import paths

    schemas = {"Port": {"type": "object", "properties": {"name": {"type": "string"}}},
               "Spec": {"type": "object", "properties": {
                   "ports": {"type": "array", "x-kubernetes-list-type": "map",
                             "items": {"$ref": "#/components/schemas/Port"}},
                   "finalizers": {"type": "array", "x-kubernetes-list-type": "set",
                                  "items": {"type": "string"}},
                   "args": {"type": "array", "items": {"type": "string"}},
                   "containers": {"type": "array", "x-kubernetes-list-type": "atomic",
                                  "items": {"$ref": "#/components/schemas/Spec"}}}}}
    schema = {"type": "object", "properties": {"spec": {"allOf": [
        {"$ref": "#/components/schemas/Spec"}]}}}

    def resolve(node):
        from aftershock.kube.discovery import _resolved
        return _resolved(node, schemas)
    assert paths.unordered_lists(schema, resolve, depth=6) == [
        "spec.ports", "spec.finalizers", "spec.containers[*].ports",
        "spec.containers[*].finalizers"]


# --- explorations driven through Explorer.play, with a session that plays no cluster -------

STALLS = re.compile(r"stalls at its (\d+)\w\w ADDED event")


def _stale(number: int) -> plans.Plan:
    from aftershock.faults.anchors import ordinal

    return plans.Plan("stale", f"Given the pod watch of the implementation stalls at its "
                      f"{ordinal(number)} ADDED event for 4 seconds", 1, f"pods-ADDED#{number}")


class _Runs:
    """A notebook Session's face as Explorer uses it, every step passing; what each run broke
    is ``breaks(run, plan, index)``: run is reference, plan, replay or control, plan the
    number of the stalled event the run's steps name (None: no fault), index the run's number
    among its kind (reference-2, finding-N-replay-3); it answers {property: witness}."""

    def __init__(self, tmp_path: Path, breaks) -> None:
        self.profile = SimpleNamespace(name="replicagroup", path=tmp_path / "profile.yaml",
                                       concepts={})
        self.cluster = SimpleNamespace()
        self.breaks, self.dir, self.played = breaks, tmp_path / "runs", []

    def unordered_lists(self, resources: list[str]) -> dict[str, list[str]]:
        return {}

    def new_scenario(self, name: str, records=()):
        self.played.append(name)
        self.scenario = _Played(name, f"explore-{len(self.played)}", self.dir / name,
                                self.breaks)
        return self.scenario

    def step(self, line: str, raise_on_failure: bool = True, block: str | None = None):
        self.scenario.lines.append(line)
        return SimpleNamespace(status="passed", seconds=0.1, line=line, message="")

    def end_scenario(self) -> None:
        pass


class _Played:
    def __init__(self, name: str, namespace: str, report_dir: Path, breaks) -> None:
        self.name, self.namespace, self.report_dir = name, namespace, report_dir
        report_dir.mkdir(parents=True)
        self.lines: list[str] = []
        self.breaks = breaks
        self._broken: dict | None = None

    def broken(self) -> dict:
        if self._broken is None:
            parts = self.name.split("-")
            run = parts[0] if parts[0] in ("reference", "plan") else parts[2]
            index = 1 if run == "plan" else int(parts[-1])
            stalled = next((int(found[1]) for line in self.lines
                            if (found := STALLS.search(line))), None)
            self._broken = self.breaks(run, stalled, index)
        return self._broken

    @property
    def verdicts(self):
        from aftershock.checks.verdict import Verdict

        return [Verdict(label, VIOLATED, f"{label} broke", [e for e in witness if e.seq >= 0])
                for label, witness in self.broken().items()]

    def history(self) -> list[Entry]:
        fired = [Entry(seq=-1, mono=0.5, wall=0.5, kind=MARK, detail="fired: a stall")
                 for line in self.lines if STALLS.search(line) and "never fires" not in line]
        return [*fired, *(entry for witness in self.broken().values() for entry in witness)]


_made = iter(range(10**6))


def _pod(prefix: str) -> Entry:
    """A pod made from generateName ``prefix``, with a fresh suffix and namespace each time:
    as another run names the same pod."""
    name, namespace = f"{prefix}{next(_made):05d}", f"explore-{next(_made)}"
    obj = {"metadata": {"name": name, "namespace": namespace, "generateName": prefix}}
    return Entry(seq=0, mono=1.0, wall=1.0, kind=WATCH, resource="pods", namespace=namespace,
                 name=name, type="ADDED", object=obj)


def _seen(entry: Entry) -> Entry:
    """``entry`` in the run's history only (no witness): seq -1."""
    entry.seq = -1
    return entry


def _explore(tmp_path: Path, monkeypatch, breaks, todo: list[int], planned: int = 5,
             replays: int = 3):
    """Reference runs, then the stale plans numbered ``todo`` out of ``planned`` (their order
    among all the plans, as a shard runs its own share)."""
    from aftershock.explore import explorer as exploring

    monkeypatch.setattr(exploring, "picture", lambda *args, **kwargs: None)
    out = tmp_path / "out"
    out.mkdir(parents=True)
    session = _Runs(tmp_path, breaks)
    explorer = exploring.Explorer(session, load(Path("workloads/replica_group.steps")),
                               exploring.Settings(references=3, replays=replays), out,
                               lambda _: None)
    explorer.learn()
    everything = [_stale(number) for number in range(3, 3 + planned)]
    explorer.generated = plans.Plans(everything, {})
    explorer.todo = lambda: [everything[number - 3] for number in todo]
    explorer.explore()
    return explorer, session


def _race_then_bug(run: str, stalled: int | None, index: int) -> dict:
    """R1 is broken by a race now and then with no fault (reference 2, 1 replay of 3 of the
    references' finding, 2 of 3 control runs), by the plan stalling the 3rd event once in 3
    replays, and by the plan stalling the 4th every time."""
    r1 = {"R1": [_pod("web-")]}
    if run == "reference":
        return r1 if index == 2 else {}
    if run == "control":
        return r1 if index <= 2 else {}
    if stalled == 4:
        return r1
    return r1 if run == "plan" or index == 1 else {}


def test_a_plan_breaking_what_a_race_breaks_with_no_fault_is_replayed_and_controlled(
        tmp_path, monkeypatch):
    """A reference run broke R1 once; a plan broke it in 1 of 3 replays and its control runs
    with no fault in 2 of 3 ("flaky without a fault"). A later plan that broke R1 every time
    was folded into that finding, never replayed. It is replayed in its own right; and since
    R1 breaks with no fault, it gets control runs too, which break it 2 of 3 times: what the
    workload does anyway, never the fault's bug (issue 66)."""
    explorer, session = _explore(tmp_path, monkeypatch, _race_then_bug, [3, 4])
    found = [(f.plan.anchor if f.plan else None, f.verdict, f.reproduced, f.replayed, f.same)
             for f in explorer.findings]
    assert found == [(None, "flaky", 1, 3, []),
                     ("pods-ADDED#3", "flaky without a fault", 1, 3, []),
                     ("pods-ADDED#4", "broken as with no fault", 3, 3, [])], found
    assert [n for n in session.played if n.startswith("finding-3-")] == [
        "finding-3-replay-1", "finding-3-replay-2", "finding-3-replay-3",
        "finding-3-control-1", "finding-3-control-2", "finding-3-control-3"]
    summary = explorer.summary()
    assert (summary["bugs"], summary["unperturbed"], summary.get("no_fault"),
            summary["as_with_no_fault"]) == (0, 1, 1, 1)
    assert summary["list"][0]["kind"] == "broken with no fault"
    assert "finding 1 (broken with no fault): R1 flaky (1/3 replays) " in "\n".join(
        table(summary))
    assert "1 flaky without a fault, 1 broken as with no fault; 1 broken with no fault)" \
        in table(summary)[0]


def _one_of_two(run: str, stalled: int | None, index: int) -> dict:
    """The plan breaks R1 and R5; its first replay and every control run R1 alone."""
    both = {"R1": [_pod("web-")], "R5": []}
    if run == "control" or (run == "replay" and index == 1):
        return {"R1": [_pod("web-")]}
    return both if run in ("plan", "replay") else {}


def test_a_replay_reproduces_a_finding_only_by_breaking_the_same_properties(
        tmp_path, monkeypatch):
    """A replay breaking any one of the finding's properties used to reproduce it: R1 alone
    counted for a finding of R1 and R5, and 2 of 3 such replays were 3 of 3, a bug."""
    explorer, _ = _explore(tmp_path, monkeypatch, _one_of_two, [3])
    [finding] = explorer.findings
    assert sorted(finding.outcome.violated) == ["R1", "R5"]
    assert (finding.reproduced, finding.replayed, finding.verdict) == (2, 3, "flaky"), \
        (finding.reproduced, finding.replayed, finding.verdict)
    # its control runs broke R1 alone: not what it broke, so no race explains it
    assert (finding.controls, finding.controlled) == (3, 0)


def _other_objects(run: str, stalled: int | None, index: int) -> dict:
    """Every run of a plan breaks R1: stalling the 3rd or 5th event, on pods of web (the 5th
    names them by an Event about one and the audit entry of another's deletion, each pod's
    generateName in the run's history only), the 4th on pods of api."""
    if run in ("reference", "control"):
        return {}
    if stalled == 4:
        return {"R1": [_pod("api-"), _pod("api-")]}
    if stalled == 5:
        pod, gone = _pod("web-"), _pod("web-")
        event = Entry(seq=0, mono=2.0, wall=2.0, kind=WATCH, resource="events",
                      namespace=pod.namespace, name=f"{pod.name}.17f3a9c2", type="ADDED",
                      object={"involvedObject": {"kind": "Pod", "name": pod.name}})
        deleted = Entry(seq=0, mono=3.0, wall=3.0, kind=AUDIT, resource="pods",
                        namespace=gone.namespace, name=gone.name, verb="delete", code=200)
        return {"R1": [event, deleted, _seen(pod), _seen(gone)]}
    return {"R1": [_pod("web-")]}


def test_plans_breaking_one_property_on_other_objects_are_findings_of_their_own(
        tmp_path, monkeypatch):
    """Three stale plans broke R1, each in every replay: the one on api's pods was folded into
    the bug on web's pods. Objects are named as any run names them (no namespace, a generated
    name as its generateName and *), so the third plan, on web's pods again, is that bug."""
    explorer, session = _explore(tmp_path, monkeypatch, _other_objects, [3, 4, 5])
    found = [(f.plan.anchor, f.verdict, f.same) for f in explorer.findings]
    assert found == [("pods-ADDED#3", "bug", ["pods-ADDED#5"]), ("pods-ADDED#4", "bug", [])], \
        found
    assert [f.get("objects") for f in explorer.summary()["list"]] == [["pod/web-*"],
                                                                      ["pod/api-*"]]
    assert not [n for n in session.played if n.startswith("finding-3-")]  # folded: no replay


def _fields(findings: list[dict]) -> list[tuple]:
    return [(f["anchor"], f["verdict"], f["same"], sorted(f["violated"]), f.get("objects"))
            for f in findings]


def test_shards_findings_fold_as_one_exploration_folds_them(tmp_path, monkeypatch):
    """merge.fold used to fold by fault kind and properties alone, and into a finding its
    control runs broke with no fault: the shards of an exploration lost the bugs the whole
    exploration (above) reports."""
    from aftershock.runs import merge

    for breaks, planned, split in ((_other_objects, [3, 4, 5], ([3], [4, 5])),
                                   (_race_then_bug, [3, 4], ([3], [4]))):
        runs = breaks.__name__
        whole, _ = _explore(tmp_path / runs / "whole", monkeypatch, breaks, planned)
        shards = [_explore(tmp_path / runs / f"shard-{k}", monkeypatch, breaks, share)[0]
                  for k, share in enumerate(split)]
        merged = merge.fold([f for shard in shards for f in shard.summary()["list"]])
        expected = _fields(whole.summary()["list"])
        assert _fields(merged) == expected, (runs, _fields(merged), expected)
        assert [f["number"] for f in merged] == list(range(1, len(expected) + 1))


def test_a_kind_no_step_names_is_planned_on_by_the_word_the_cluster_serves_it_as(tmp_path):
    """cert-manager's CertificateRequests: the workload names Certificates only, and its stale
    request cache was the bug. Explore asks the session for the kind's word, and plans on it."""
    from aftershock.explore import explorer as exploring

    asked: list[list[str]] = []

    class Session:
        profile = SimpleNamespace(concepts={})
        manifests_dir = None

        def kind_words(self, resources):
            asked.append(list(resources))
            return {"certificaterequests": "certificaterequest"}

    workload = load(Path("workloads/certificate.steps"))
    traced = _trace([(1.0, "certificaterequests", "ADDED"), (1.1, "pods", "ADDED")],
                    [(1.05, "certificaterequests", "create"), (1.2, "secrets", "create")])
    explorer = exploring.Explorer(Session(), workload, exploring.Settings(), tmp_path,
                                  lambda _: None)
    kinds = explorer._kinds([traced, traced])
    assert asked == [["certificaterequests", "secrets"]]  # pods have their word already
    assert kinds == {"certificaterequests": "certificaterequest"}
    made = plans.generate(workload, [traced, traced], [], kinds, stall=(10.0,), miss=(3.0,))
    steps = [p.step for p in made.plans]
    assert "Given the certificaterequest watch of the implementation stalls at its 1st ADDED " \
           "event for 10 seconds" in steps, steps


def _replaying(tmp_path, findings, outcomes, references=frozenset()):
    """An Explorer whose runs are ``outcomes(name, lines)``: no session, no cluster."""
    import time as clock

    from aftershock.explore.explorer import Settings

    explorer = _explorer_with(findings)
    explorer.settings = Settings(replays=3)
    explorer.play, explorer.left, explorer.say = outcomes, lambda: 60.0, lambda _: None
    explorer.outcomes, explorer.generated, explorer.began = [], None, clock.monotonic()
    explorer.first_bug_after, explorer.reference_violations = None, set(references)
    return explorer


def _stall_finding(tmp_path, number=1):
    from aftershock.explore.explorer import Finding, Outcome
    from aftershock.explore.plans import Plan

    plan = Plan("stale", "Given the pod watch of the implementation stalls at its 3rd ADDED "
                "event for 4 seconds", 1, "pods-ADDED#3")
    feature = tmp_path / f"f{number}.feature"
    feature.write_text("Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                       "    And the implementation under test is running\n"
                       f"    And {plan.step.split(' ', 1)[1]}\n"
                       "    When 5 seconds pass\n")
    return Finding(number, plan, Outcome("a", [], 1.0, violated={"R1": "4 live pods"},
                                         fired=True), feature=feature)


def test_replays_whose_fault_never_fired_count_for_nothing(tmp_path):
    """Issue 66: a plan whose fault fired once, and whose replays ran with no fault at all
    (the event the stall waited for never came), was a bug of that fault kind: each replay
    broke the property anyway."""
    from aftershock.explore.explorer import Outcome

    finding = _stall_finding(tmp_path)

    def play(name, lines, feature=None):
        return Outcome(name, lines, 1.0, violated={"R1": "4 live pods"}, fired=False)
    explorer = _replaying(tmp_path, [finding], play)
    explorer.replay(finding)
    assert (finding.replayed, finding.unfired, finding.reproduced) == (0, 3, 0)
    assert finding.verdict == "not replayed"
    summary = explorer.summary()
    assert summary["bugs"] == 0 and summary["by_kind"]["stale"]["bugs"] == 0
    assert summary["unfired_replays"] == 3 and summary["list"][0]["unfired"] == 3


def test_a_property_every_reference_run_breaks_is_no_bug_of_a_fault_kind(tmp_path):
    """Issue 66: the references broke R1 every time; each fault kind's first plan that broke
    it reproduced 3 of 3 with no fault needed and was a bug, counted once per fault kind and
    once for the references' own finding. Its control runs break it too: "broken as with no
    fault"."""
    from aftershock.explore import explorer as exploring
    from aftershock.explore.explorer import Finding, Outcome

    own = Finding(1, None, Outcome("reference-1", [], 1.0, violated={"R1": "4 live pods"}),
                  reproduced=3, replayed=3, wanted=3)
    stall = _stall_finding(tmp_path, 2)
    played = []

    def play(name, lines, feature=None):
        played.append(name)
        return Outcome(name, lines, 1.0, violated={"R1": "4 live pods"}, fired=True)
    explorer = _replaying(tmp_path, [own, stall], play, references={"R1"})
    explorer.replay(stall)
    assert stall.reproduced == stall.replayed == 3
    assert stall.controls == stall.controlled == 3
    assert stall.verdict == exploring.AS_WITH_NO_FAULT
    assert [n for n in played if "control" in n] == [
        "finding-2-control-1", "finding-2-control-2", "finding-2-control-3"]
    summary = explorer.summary()
    assert all(row["bugs"] == 0 for row in summary["by_kind"].values()), summary["by_kind"]
    assert summary["bugs"] == 1 and summary["as_with_no_fault"] == 1  # the references' own
    later = stall.plan  # and it takes in no later plan of its kind
    assert not explorer.same_bug(later, {"R1": "x"}, [])
    stall.controlled = 0  # had its controls held, the fault would have made it
    assert stall.verdict == "bug"


BLOCKED = """Given a cluster with 3 nodes
And I apply:
  \"\"\"
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings}
  data: {mode: a}
  \"\"\"
When I patch configmap/settings:
  \"\"\"
  data: {mode: b}
  \"\"\"
Then within 30 seconds configmap/settings matches:
  \"\"\"
  data: {mode: b}
  \"\"\"
"""


def test_a_workloads_step_takes_the_yaml_block_under_it_as_a_features_does(tmp_path):
    """A patch or a partial manifest needs its block: a workload of plain steps takes one
    between fences, and explore runs the step with it."""
    path = tmp_path / "w.steps"
    path.write_text(BLOCKED)
    steps = load(path).steps
    patch = next(s for s in steps if s.text == "I patch configmap/settings:")
    assert patch.block == "data: {mode: b}"
    assert with_block(patch.words) == ("When I patch configmap/settings:", "data: {mode: b}")
    applied = next(s for s in steps if s.text == "I apply:")
    assert applied.block.splitlines()[0] == "apiVersion: v1" and applied.keyword == "Given"
    assert with_block("Given a cluster with 3 nodes") == ("Given a cluster with 3 nodes", None)


def test_a_block_with_no_closing_fence_names_file_and_line(tmp_path):
    path, message = _refused(tmp_path, 'Given a cluster with 3 nodes\nWhen I patch '
                                       'configmap/settings:\n"""\ndata: {mode: b}\n')
    assert f"{path}:3:" in message and "no closing" in message


def test_a_finding_written_keeps_each_block_under_its_step_and_reads_back(tmp_path):
    from aftershock.explore.finding import _indented, scenario_lines

    path = tmp_path / "w.steps"
    path.write_text(BLOCKED)
    words = [s.words for s in load(path).steps]
    feature = tmp_path / "f.feature"
    feature.write_text("Feature: f\n  Scenario: s\n" + "\n".join(
        line for w in words for line in _indented(w)) + "\n")
    assert scenario_lines(feature) == words


class _Denying(_Runs):
    """A webhook of the implementation denies the workload's scale whenever a plan stalls the
    4th event (its replays too); what the runs broke is what was judged: `admitted` once its
    Then step ran after the denial."""

    def step(self, line: str, raise_on_failure: bool = True, block: str | None = None):
        self.scenario.lines.append(line)
        stalled = any("its 4th ADDED" in said for said in self.scenario.lines)
        if stalled and line.startswith("When I scale"):
            return SimpleNamespace(status="failed", seconds=0.1, line=line, message=(
                'the API server refused it: admission webhook "vweb.kb.io" denied the '
                'request: namespace not found (HTTP 400)'))
        return SimpleNamespace(status="passed", seconds=0.1, line=line, message="")


def test_a_write_a_webhook_denied_is_a_finding_judged_by_admitted_not_an_error(
        tmp_path, monkeypatch):
    """kueue-2: Kueue's pod webhook refused the workload's pods under a plan's fault, and
    explore, which stopped the plan at that step, counted an error. Such a run is now judged
    by `admitted` (a webhook that answered and denied), replayed and controlled as any
    finding; a step that failed for another reason is still an error."""
    from aftershock.explore import explorer as exploring
    from aftershock.explore.oracles import ADMITTED

    def breaks(run, stalled, index):
        return {}

    monkeypatch.setattr(exploring, "picture", lambda *args, **kwargs: None)
    out = tmp_path / "out"
    out.mkdir(parents=True)
    session = _Denying(tmp_path, breaks)
    original = _Played.verdicts.fget

    def verdicts(played):
        from aftershock.checks.verdict import Verdict

        judged = [Verdict("admitted", VIOLATED, "1 of 3 writes in the namespace refused")] \
            if ADMITTED in played.lines and any(
                "its 4th ADDED" in line for line in played.lines) else []
        return [*original(played), *judged]
    monkeypatch.setattr(_Played, "verdicts", property(verdicts))
    explorer = exploring.Explorer(session, load(Path("workloads/replica_group.steps")),
                                  exploring.Settings(references=3, replays=3), out,
                                  lambda _: None)
    explorer.learn()
    everything = [_stale(3), _stale(4)]
    explorer.generated = plans.Plans(everything, {})
    explorer.explore()
    summary = explorer.summary()
    assert summary["errors"] == 0, summary
    assert [f.outcome.violated for f in explorer.findings] == [
        {"admitted": "1 of 3 writes in the namespace refused"}]
    assert explorer.findings[0].verdict == "bug", explorer.findings[0].verdict
    assert ADMITTED in session.scenario.lines  # judged in every run, the last one's too
