"""Report wiring without a cluster: verdict labels for categories, progress lines, the allure
configuration and the merged environment."""

import json
from types import SimpleNamespace

from aftershock.bdd.reporting import (
    CAUGHT,
    CRASHED,
    HARNESS,
    MISSED,
    NOT_APPLICABLE,
    PASSED,
    SKIPPED,
    VIOLATED,
    classify,
    progress_line,
)
from aftershock.report import html


def _scenario(violations=(), expected=(), caught=(), crashed=False, judged=()):
    process = SimpleNamespace(poll=lambda: 1 if crashed else None)
    return SimpleNamespace(violations=list(violations), expected_violations=set(expected),
                           judged=[SimpleNamespace(status=s) for s in judged],
                           missed_expectations=lambda: sorted(set(expected) - set(caught)),
                           facts={"implementation": SimpleNamespace(process=process)})


def test_a_scenario_is_labelled_so_a_reader_tells_whose_bug_it_is():
    assert classify(_scenario(), None) == PASSED
    assert classify(_scenario(violations=["R1"]), None) == VIOLATED
    assert classify(_scenario(), "failed", "R1: VIOLATED: 6 live pods") == VIOLATED
    assert classify(_scenario(), "failed", "no earlier step established 'web'") == HARNESS
    assert classify(_scenario(crashed=True), "failed", "timed out") == CRASHED
    assert classify(_scenario(), "skipped") == SKIPPED
    assert classify(_scenario(expected=["G1"], caught=["G1"]), None) == CAUGHT
    assert classify(_scenario(expected=["G1"]), None) == MISSED
    # every judged property NOT APPLICABLE: its own label, not a pass
    assert classify(_scenario(judged=["not applicable"] * 2), None) == NOT_APPLICABLE
    assert classify(_scenario(judged=["not applicable", "pass"]), None) == PASSED


def test_a_progress_line_names_where_and_what_is_active():
    line = progress_line(12.34, "gang.feature:14", "A partial regression",
                         "When I cordon node small-1", ["cordon node/small-1"])
    assert line == ("[   12.3s] gang.feature:14 A partial regression > When I cordon node "
                    "small-1  [faults: cordon node/small-1]")


def test_the_allure_config_is_one_offline_page_with_a_category_per_verdict():
    config = html.config("aftershock run-1")
    assert config["plugins"]["awesome"]["options"]["singleFile"] is True
    verdicts = {c["matchers"].get("labels", {}).get("verdict") for c in config["categories"]}
    assert {VIOLATED, CAUGHT, MISSED, CRASHED, HARNESS, NOT_APPLICABLE} <= verdicts
    assert any(c["matchers"]["statuses"] == ["skipped"] for c in config["categories"])


def test_the_environment_merges_what_the_scenarios_ran_on(tmp_path):
    for name, version in (("a", "v1.34.4"), ("b", "v1.33.13"), ("c", "v1.34.4")):
        (tmp_path / name / "evidence").mkdir(parents=True)
        (tmp_path / name / "evidence" / "environment.json").write_text(
            json.dumps({"provider": "local", "kubernetes_version": version}))
    assert html.environment(tmp_path) == {"provider": "local",
                                          "kubernetes_version": "v1.34.4, v1.33.13"}
