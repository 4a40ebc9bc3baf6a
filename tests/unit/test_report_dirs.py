"""Each scenario run writes its own report dir: the name comes from the pytest node id."""

from __future__ import annotations

from aftershock.world import NAME_LIMIT, report_dir_name

LONG = ("features/scheduler/gang_termination.feature::test_at_the_edge_a_partial_regression_as_"
        "soon_as_the_gang_is_ready_is_detected_and_only_its_gang_replica_is_recycled[{}]")


def test_two_profiles_runs_of_a_long_named_scenario_get_two_dirs():
    """Cut at 120 characters, the runs of grove-d5afd169-kai and grove-cd742f07-kai wrote one
    dir, and `aftershock judge` judged both rows from one history (found in issue 45)."""
    names = {report_dir_name(LONG.format(p)) for p in ("grove-d5afd169-kai",
                                                       "grove-cd742f07-kai")}
    assert len(names) == 2 and all(len(n) <= NAME_LIMIT for n in names), names
    assert any(n.endswith("grove-d5afd169-kai_") for n in names), names
    assert report_dir_name(LONG.format("x")) == report_dir_name(LONG.format("x"))


def test_a_short_name_is_as_it_was():
    assert report_dir_name("f.feature::test_a[gang-faulty]") == "test_a_gang-faulty_"
