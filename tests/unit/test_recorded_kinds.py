"""Every kind an implementation writes is recorded: from its RBAC (the profile), or learned
from what it wrote in explore's reference runs; a kind nobody recorded makes a judge UNKNOWN
saying so, never 'not served' unless the cluster does not serve it."""

from __future__ import annotations

from pathlib import Path

import pytest

from aftershock.checks import UNKNOWN
from aftershock.errors import UserError
from aftershock.explore import finding, oracles
from aftershock.explore.explorer import Finding, Outcome
from aftershock.explore.plans import Plan
from aftershock.explore.workload import load
from aftershock.properties import get
from aftershock.timeline.entry import AUDIT, AUDIT_SYNC, MARK, Entry
from aftershock.timeline.resources import named, spelled, written_by
from tests.unit.test_explore import ACTOR, NS, _run


def test_rbac_rules_name_the_kinds_their_holder_may_write():
    rules = [
        {"apiGroups": [""], "resources": ["pods", "pods/status", "services"],
         "verbs": ["create", "delete", "get"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["create"]},
        {"apiGroups": ["*"], "resources": ["ingresses"], "verbs": ["patch"]},
    ]
    assert written_by(rules) == [("", "pods"), ("", "services"),
                                 ("rbac.authorization.k8s.io", "roles"), ("*", "ingresses")]


def test_kinds_are_named_as_kubectl_names_them():
    assert named("roles.rbac.authorization.k8s.io") == ("rbac.authorization.k8s.io", "roles")
    assert named("services") == ("", "services")
    assert spelled(*named("rayclusters.ray.io")) == "rayclusters.ray.io"


def _e2(entries: list[Entry]):
    return get("E2").judge(entries, {"check": "writes_as_reference", "actor": ACTOR,
                                     "namespace": NS, "expected": {"pods create": [1, 1],
                                                                  "roles create": [1, 1]}})


def _written_role(unserved: list[str] | None = None,
                  unlistable: list[str] | None = None) -> list[Entry]:
    h = _run(["p0"])
    h.add(0.0, MARK, detail="recording", extra={"recording": {"pods": "v1"}, "audit": True,
                                                 "unserved": unserved or []})
    if unlistable:
        h.add(0.1, MARK, detail="served with no list or watch",
              extra={"unlistable": unlistable})
    h.add(5.0, AUDIT, resource="roles", namespace=NS, name="r", verb="create", actor=ACTOR,
          code=201, extra={"group": "rbac.authorization.k8s.io"})
    h.add(6.0, AUDIT_SYNC, extra={"caught_up": True})
    return sorted(h.entries, key=lambda e: e.mono)


def test_a_kind_nobody_recorded_is_unknown_saying_so_not_that_the_cluster_lacks_it():
    verdict = _e2(_written_role())
    assert verdict.status == UNKNOWN
    assert "did not record roles: no step, profile or reference run named them" in \
        verdict.summary and "serve" not in verdict.summary


def test_a_kind_the_cluster_does_not_serve_is_unknown_saying_that():
    verdict = _e2(_written_role(["roles.rbac.authorization.k8s.io"]))
    assert verdict.status == UNKNOWN
    assert verdict.summary.startswith("this cluster does not serve roles")


def test_a_kind_served_with_no_list_or_watch_is_unknown_saying_that_not_unserved():
    verdict = _e2(_written_role(unlistable=["roles.rbac.authorization.k8s.io"]))
    assert verdict.status == UNKNOWN
    assert verdict.summary.startswith("this cluster serves roles with no list or watch"), \
        verdict.summary


def test_explore_learns_the_kinds_the_implementation_wrote_that_no_reference_recorded():
    runs = []
    for _ in range(2):
        h = _run(["p0", "p1"])
        h.add(0.0, MARK, detail="recording", extra={"recording": {"pods": "v1"}})
        h.add(2.5, AUDIT, resource="roles", namespace=NS, name="r", verb="create",
              actor=ACTOR, code=201, extra={"group": "rbac.authorization.k8s.io"})
        h.add(2.6, AUDIT, resource="ingresses", namespace=NS, name="i", verb="create",
              actor=ACTOR, code=403, extra={"group": "networking.k8s.io"})
        runs.append((h.entries, NS, ACTOR))
    reference = oracles.learn(runs)
    # pods were recorded; a refused write wrote nothing
    assert reference.records == [("rbac.authorization.k8s.io", "roles")]


def _written(steps: Path, directory: Path, violated: str, records=()) -> Path:
    """The finding of a stale-pod-watch plan over the workload ``steps``, written into
    ``directory``."""
    workload = load(steps)
    plan = Plan("stale", "Given the pod watch of the implementation stalls at its 1st ADDED "
                "event for 4 seconds", workload.started, "pods-ADDED#1")
    lines = [s.words for s in workload.steps] + [oracles.QUIET]
    outcome = Outcome("plan-1", lines, 1.0, violated={violated: "broken"})

    class Profile:
        name, path = "p", steps.parent / "p.yaml"

    return finding.write(Finding(1, plan, outcome), workload, directory, Profile, 0, records)


def test_a_finding_says_which_kinds_to_record_and_the_tag_is_read_back(tmp_path):
    steps = tmp_path / "w.steps"
    steps.write_text("Given a cluster with 3 nodes\nAnd the implementation under test is "
                     "running\nAnd a replica group web with 3 replicas\n")
    path = _written(steps, tmp_path / "findings", "R1",
                    [("rbac.authorization.k8s.io", "roles"), ("", "services")])
    assert "@records:roles.rbac.authorization.k8s.io,services" in path.read_text()
    assert load(path).tags >= {"records:roles.rbac.authorization.k8s.io,services"}
    # explored again, the finding records them too
    assert load(path).records == [("rbac.authorization.k8s.io", "roles"), ("", "services")]


def test_an_empty_records_tag_is_refused_with_what_was_expected():
    from aftershock.pytest_plugin import pytest_bdd_apply_tag

    with pytest.raises(UserError, match="expected kinds as kubectl names them"):
        pytest_bdd_apply_tag("records:", lambda: None)


def test_a_findings_manifests_are_named_from_where_it_is_written(tmp_path):
    """A workload names its manifests relative to itself, as a feature does; its finding,
    written elsewhere, names the same files relative to where it is."""
    (tmp_path / "workloads" / "m").mkdir(parents=True)
    (tmp_path / "workloads" / "m" / "c.yaml").write_text("{}\n")
    steps = tmp_path / "workloads" / "w.steps"
    steps.write_text("Given a cluster with 1 nodes\nAnd the implementation under test is "
                     "running\nAnd I apply the manifest m/c.yaml\n"
                     f"And I apply the manifest {tmp_path}/abs.yaml\n")
    path = _written(steps, tmp_path / "out" / "findings", "E2")
    text = path.read_text()
    assert "And I apply the manifest ../../workloads/m/c.yaml\n" in text, text
    assert f"And I apply the manifest {tmp_path}/abs.yaml\n" in text, text
    assert (path.parent / "../../workloads/m/c.yaml").resolve().is_file()
