"""The order make test hands pytest-xdist: two halves of equal count, near-equal cost, each
heaviest first, and the tests that share a run in one half."""

from __future__ import annotations

from tests import ordering


def test_the_halves_split_the_heavy_tests_and_keep_a_shared_run_together():
    ids = [f"tests/unit/test_u.py::test_{i}" for i in range(20)] + [
        "tests/integration/test_explore.py::test_explore_finds_it",
        "tests/integration/test_scheduler_driver_profiles.py::test_the_faulty_gang_scheduler_x",
        "tests/integration/test_report.py::test_a", "tests/integration/test_report.py::test_b"]
    fixtures = {"tests/integration/test_report.py::test_a": ["finished_run"],
                "tests/integration/test_report.py::test_b": ["tmp_path", "finished_run"]}
    dealt = ordering.deal(ids, lambda i: i, lambda i: fixtures.get(i, []))
    assert sorted(dealt) == sorted(ids)
    first, second = dealt[:len(ids) // 2], dealt[len(ids) // 2:]
    heads = {first[0], second[0]}
    assert heads == {ids[20], ids[21]}  # the two heaviest, one at the head of each half
    assert any(i.startswith("tests/integration/test_report") for i in first) != \
        any(i.startswith("tests/integration/test_report") for i in second)
    for half in (first, second):
        costs = [ordering.cost(i) for i in half if i not in fixtures]
        assert costs == sorted(costs, reverse=True)
