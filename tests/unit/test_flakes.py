"""The flake table tells a flaky scenario from a stable or a failing one."""

from types import SimpleNamespace

from aftershock.runs.flakes import flake_table


def _report(nodeid: str, outcome: str, when: str = "call"):
    return SimpleNamespace(nodeid=nodeid, outcome=outcome, when=when)


def test_flaky_stable_and_failing_scenarios():
    reports = [
        _report("f.feature::test_a[run1]", "passed"), _report("f.feature::test_a[run2]", "failed"),
        _report("f.feature::test_b[run1]", "passed"), _report("f.feature::test_b[run2]", "passed"),
        _report("f.feature::test_c[run1]", "failed", when="setup"),
        _report("f.feature::test_c[run2]", "failed"),
        _report("f.feature::test_d[2-5-run1]", "passed"),
        _report("f.feature::test_e[run1-2-5]", "passed"),
        _report("f.feature::test_e[run2-2-5]", "failed"),
    ]
    lines = flake_table(reports)
    assert "   1/2    FLAKY     f.feature::test_a" in lines
    assert "   2/2    stable    f.feature::test_b" in lines
    assert "   0/2    failing   f.feature::test_c" in lines
    assert any(line.endswith("f.feature::test_d[2-5]") for line in lines)
    assert "   1/2    FLAKY     f.feature::test_e[2-5]" in lines
