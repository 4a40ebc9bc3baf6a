"""Shards split scenarios and plans deterministically; merge joins the shards' run dirs into
what one run would have written; --workers is refused in one line beyond the machine."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from aftershock.errors import UserError
from aftershock.explore.explorer import Explorer, Settings
from aftershock.explore.plans import Plan, Plans
from aftershock.machine.limits import GIB, Machine
from aftershock.report import matrix
from aftershock.runs import merge, shards, workers


def test_scenarios_are_dealt_out_evenly_and_the_same_in_every_shard():
    ids = [f"features/x.feature::test_{i}" for i in range(7)]
    parts = [shards.Shard(k, 3).deal(ids) for k in (1, 2, 3)]
    assert sorted(i for part in parts for i in part) == sorted(ids)
    assert sorted(len(part) for part in parts) == [2, 2, 3]
    assert parts[0] == shards.Shard(1, 3).deal(list(reversed(ids)))  # the order given: none


def test_every_plan_falls_in_exactly_one_shard_and_the_split_is_stable():
    keys = [f"features/x.feature::test_{i}" for i in range(200)]
    parts = [[k for k in keys if shards.Shard(i, 3).holds(k)] for i in (1, 2, 3)]
    assert sorted(k for part in parts for k in part) == sorted(keys)
    assert all(40 < len(part) < 100 for part in parts)  # a hash spreads them
    # the same on any machine and in any process: no salt, no order
    code = ("from aftershock.runs.shards import Shard; print(sum(Shard(2, 3).holds("
            "f'features/x.feature::test_{i}') for i in range(200)))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": "123"})
    assert int(other.stdout) == len(parts[1])


@pytest.mark.parametrize("text, expected", [
    ("x", "expected K/N"), ("0/2", "K is between 1 and 2"), ("3/2", "K is between 1 and 2"),
    ("1/0", "between 1 and 256 shards"), ("1/999", "between 1 and 256 shards")])
def test_a_bad_shard_is_one_line_saying_what_was_expected(text, expected):
    with pytest.raises(UserError, match=expected):
        shards.parse(text)


def test_workers_beyond_the_cores_or_the_memory_are_refused():
    small = Machine(memory=2 * GIB, cores=2, threads_left=None)
    big = Machine(memory=24 * GIB, cores=2, threads_left=None)
    assert shards.workers_problem(2, 3, big) is None
    assert "this machine has 2 cores" in shards.workers_problem(3, 3, big)
    assert "of memory" in shards.workers_problem(2, 3, small)
    assert "at least 1" in shards.workers_problem(0, 3, big)


def test_options_are_taken_out_of_an_argument_list_with_their_values():
    argv = ["explore", "--out", "o", "--workers=2", "--seed", "1", "--run-dir=r", "--workers",
            "2"]
    assert workers.without(argv, "--out", "--run-dir", "--workers") == [
        "explore", "--seed", "1"]


def _explorer(shard, max_plans=None) -> Explorer:
    explorer = Explorer.__new__(Explorer)
    explorer.settings = Settings(max_plans=max_plans, shard=shard)
    explorer.generated = Plans([Plan("stale", f"step {i}", 1, f"pods-ADDED#{i}")
                                for i in range(1, 41)])
    return explorer


def test_the_shards_of_an_exploration_run_together_what_it_runs_alone():
    alone = _explorer(None, max_plans=30).todo()
    parts = [_explorer(shards.Shard(k, 2), max_plans=30).todo() for k in (1, 2)]
    assert sorted(parts[0] + parts[1], key=alone.index) == alone
    assert not set(parts[0]) & set(parts[1])


def _run_dir(path, scenario: str, outcome: str):
    path.mkdir(parents=True)
    matrix.append(path, matrix.Row("p", scenario, {"R1": outcome}, dir=scenario))
    (path / scenario).mkdir()
    (path / scenario / "verdicts.txt").write_text(outcome)
    (path / "allure-results").mkdir()
    (path / "allure-results" / f"{scenario}-result.json").write_text("{}")
    (path / "junit.xml").write_text(
        f'<testsuites><testsuite name="pytest" tests="1"><testcase name="{scenario}"/>'
        '</testsuite></testsuites>')


def test_merged_runs_are_one_matrix_one_set_of_allure_results_and_one_junit(tmp_path):
    _run_dir(tmp_path / "a", "one", "pass")
    _run_dir(tmp_path / "b", "two", "violated")
    assert merge.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m") == "run"
    rows = matrix.load(tmp_path / "m")
    assert {(r.scenario, r.outcomes["R1"], r.dir) for r in rows} == {
        ("one", "pass", "one"), ("two", "violated", "two")}
    assert "violated" in (tmp_path / "m" / "matrix.md").read_text()
    assert sorted(p.name for p in (tmp_path / "m" / "allure-results").iterdir()) == [
        "one-result.json", "two-result.json"]
    cases = ET.parse(tmp_path / "m" / "junit.xml").getroot().iter("testcase")
    assert sorted(c.get("name") for c in cases) == ["one", "two"]
    assert (tmp_path / "m" / "two" / "verdicts.txt").read_text() == "violated"


def test_shards_kept_inside_the_merged_dir_are_pointed_at_not_copied(tmp_path):
    _run_dir(tmp_path / "m" / "shard-1-of-1", "one", "pass")
    merge.merge([tmp_path / "m" / "shard-1-of-1"], tmp_path / "m")
    assert [r.dir for r in matrix.load(tmp_path / "m")] == ["shard-1-of-1/one"]
    assert not (tmp_path / "m" / "one").exists()


def test_runs_of_run_and_of_explore_are_not_merged_together(tmp_path):
    _run_dir(tmp_path / "a", "one", "pass")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "summary.json").write_text("{}")
    (tmp_path / "e" / "plans.jsonl").write_text("")
    with pytest.raises(UserError, match="merge each kind on its own"):
        merge.merge([tmp_path / "a", tmp_path / "e"], tmp_path / "m")


def _finding(order, kind, violated, verdict="bug", anchor=None, objects=()):
    return {"number": 1, "plan": None if kind is None else f"plan {order}", "plan_kind": kind,
            "anchor": anchor or f"a{order}", "order": order, "violated": violated,
            "objects": list(objects), "verdict": verdict, "reproduced": 10, "replayed": 10,
            "feature": None, "same": []}


def test_findings_of_shards_fold_as_one_exploration_would_fold_them():
    found = merge.fold([
        _finding(7, "stale", {"R1": "x"}),  # shard 2: same as the earlier bug of shard 1
        _finding(3, "stale", {"R1": "x"}),
        _finding(5, "stale", {"R1": "x", "E2": "y"}),  # other properties: its own
        _finding(9, "node", {"R1": "x"}),  # other fault kind: its own
        _finding(-1, None, {"S2": "z"}), _finding(-1, None, {"S2": "z"}),  # each shard's refs
        _finding(11, "unobserved", {"R5": "x"}, verdict="flaky"),
        _finding(12, "unobserved", {"R5": "x"}),  # after a flaky one: replayed in its own right
    ])
    assert [(f["order"], f["number"]) for f in found] == [(-1, 1), (3, 2), (5, 3), (9, 4),
                                                         (11, 5), (12, 6)]
    assert found[1]["same"] == ["a7"]


def test_merged_explorations_add_up_plans_and_fold_findings(tmp_path):
    for name, order, seconds in (("a", 2, 10.0), ("b", 4, 30.0)):
        run = tmp_path / name
        run.mkdir()
        (run / "plans.jsonl").write_text(
            json.dumps({"kind": "reference", "seconds": 5.0}) + "\n" +
            json.dumps({"kind": "stale", "order": order, "seconds": seconds}) + "\n")
        (run / "summary.json").write_text(json.dumps({
            "plans_generated": 10, "plans_run": 1, "pruned": 2, "first_bug_after": seconds,
            "errors": 0, "elapsed": seconds * 2, "shard": f"{name}",
            "by_kind": {"stale": {"run": 1, "findings": 1, "errors": 0}},
            "list": [_finding(order, "stale", {"R1": "x"})]}))
    merge.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert summary["plans_run"] == 2 and summary["findings"] == 1 and summary["bugs"] == 1
    assert summary.get("no_fault") == 0
    assert summary["list"][0]["same"] == ["a4"] and summary["first_bug_after"] == 10.0
    assert summary["by_kind"]["stale"]["run"] == 2 and summary["elapsed"] == 60.0


def test_no_finding_but_a_bug_of_the_same_signature_absorbs_one_across_shards():
    """A finding its control runs broke with no fault, and the reference runs' own, used to
    take in later plans breaking no more: a plan breaking it every time was never replayed."""
    from aftershock.explore import explorer as exploring

    assert merge.UNPERTURBED == exploring.UNPERTURBED
    found = merge.fold([_finding(8, "stale", {"E2": "x"}),
                        _finding(2, "stale", {"E2": "x"}, verdict=exploring.UNPERTURBED),
                        _finding(-1, None, {"E2": "x"}, verdict="flaky"),
                        _finding(9, "stale", {"E2": "x"}, objects=["pod/web-*"]),
                        _finding(10, "stale", {"E2": "x"}, objects=["pod/web-*"]),
                        {**_finding(11, "stale", {"E2": "x"}), "objects": None}])
    assert [(f["order"], f["same"]) for f in found] == [
        (-1, []), (2, []), (8, []), (9, ["a10"]), (11, [])]  # 11: saved with no objects


def test_kinds_asked_for_leave_the_others_out_before_max_plans_counts():
    explorer = _explorer(None, max_plans=3)
    explorer.generated.plans[1:1] = [Plan("node", "When I drain node n1", 1, "drain-n1")]
    explorer.settings.kinds = ("node",)
    assert [plan.kind for plan in explorer.todo()] == ["node"]
    explorer.settings.kinds = ("stale",)
    assert [plan.anchor for plan in explorer.todo()] == [
        "pods-ADDED#1", "pods-ADDED#2", "pods-ADDED#3"]
