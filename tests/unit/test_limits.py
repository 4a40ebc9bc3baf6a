"""Every input that sizes resources is refused before anything starts when this machine cannot
hold it: one line naming file:line, the figure, the limit and why."""

from __future__ import annotations

import pytest

from aftershock.errors import UserError
from aftershock.features import check_steps
from aftershock.machine import limits
from aftershock.machine.limits import GIB, Machine, manifest_problem
from aftershock.machine.shape import load_shape

SMALL = Machine(memory=23 * GIB, cores=2, threads_left=None)


def test_nodes_are_bounded_by_memory_then_by_cores_then_by_the_process_limit():
    assert limits.nodes_problem(1000, SMALL) is None
    too_many = limits.nodes_problem(100_000, SMALL)
    assert too_many == ("100000 nodes need about 59 GiB of memory; this machine has 23 GiB "
                        "available (at most 1000 nodes here)")
    assert "2 cores" in limits.nodes_problem(1001, SMALL)
    tiny = Machine(memory=1 * GIB, cores=2, threads_left=None)
    assert "of memory" in limits.nodes_problem(500, tiny)
    assert "ulimit -u" in limits.nodes_problem(3, Machine(23 * GIB, 2, threads_left=50))


def test_a_step_is_bounded_in_pods_seconds_and_objects():
    assert limits.step_problem("a_replica_group", {"replicas": 5}, SMALL) is None
    assert "pods" in limits.step_problem("a_replica_group", {"replicas": 100_000}, SMALL)
    assert "pods" in limits.step_problem("a_gang", {"groups": 100, "size": 200}, SMALL)
    assert "an hour" in limits.step_problem("seconds_pass", {"seconds": 100_000}, SMALL)
    assert "objects" in limits.step_problem("write_objects", {"count": 10**7}, SMALL)
    assert limits.step_problem("within", {"seconds": 60, "count": 10**7}, SMALL) is None


def test_a_huge_shape_is_refused_at_its_line(tmp_path):
    shape = tmp_path / "huge.yaml"
    shape.write_text("name: huge\nnodes:\n  count: 100000\n")
    with pytest.raises(UserError) as refused:
        load_shape(shape)
    assert str(refused.value).startswith(f"{shape}:3: 100000 nodes need about")
    crowded = tmp_path / "crowded.yaml"
    crowded.write_text("nodes:\n  count: 2\n  template:\n    capacity:\n      pods: '5000'\n")
    with pytest.raises(UserError, match=r"crowded.yaml:5: .*at most 1000 pods per node"):
        load_shape(crowded)


def test_a_feature_that_waits_a_day_is_refused_at_collection(tmp_path):
    feature = tmp_path / "long.feature"
    feature.write_text("Feature: f\n  Scenario: s\n    Given a cluster with 3 nodes\n"
                       "    When 86400 seconds pass\n")
    with pytest.raises(UserError, match=r"long.feature:4: seconds 86400: at most 3600"):
        check_steps(feature)


def test_manifests_are_sized_by_every_replicas_and_parallelism_in_them():
    small = Machine(memory=22 * 2**30, cores=2, threads_left=None)
    documents = [{"kind": "Deployment", "spec": {"replicas": 60}},
                 {"kind": "RayCluster", "spec": {"workerGroupSpecs": [{"replicas": 50}]}},
                 {"kind": "Job", "spec": {"parallelism": 5, "completions": 10**6}}]
    assert manifest_problem(documents[:1], small) is None  # at most 100: always fine
    assert manifest_problem(documents, small) is None  # 115 pods fit this machine
    problem = manifest_problem([{"spec": {"replicas": 10**6}}], small)
    assert problem is not None and problem.startswith("1000000 pods need about")
