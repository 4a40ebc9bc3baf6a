"""The conformance matrix: one outcome per profile and property, the worst over scenarios."""

from aftershock.report import matrix, page
from aftershock.report.matrix import (
    CAUGHT,
    MISSED,
    PASS,
    SKIPPED,
    UNKNOWN,
    VIOLATED,
    Row,
    scenario_outcomes,
)


def test_each_judged_label_gets_its_outcome():
    outcomes = scenario_outcomes(
        [("R1", "pass"), ("N1, N5", "violated"), ("R3", "unknown"), ("a set-up check", "pass")],
        expected={"N5"}, judged=["R1", "N1, N5", "R3", "R6"])
    assert outcomes == {"R1": PASS, "N1": VIOLATED, "N5": CAUGHT, "R3": UNKNOWN, "R6": UNKNOWN}


def test_the_harness_checking_its_own_checks_stays_out_of_the_matrix():
    """@expect-violation:always (a harness feature proving a check can fail) is no property."""
    assert scenario_outcomes([("always", "violated")], expected={"always"}, judged=[]) == {}
    assert scenario_outcomes([("always", "pass")], expected={"always"}, judged=[]) == {}


def test_an_expected_violation_that_did_not_come_is_missed():
    assert scenario_outcomes([("G1", "pass")], expected={"G1"}, judged=["G1"]) == {"G1": MISSED}


def test_a_skipped_scenario_marks_its_labels_skipped():
    assert scenario_outcomes([], set(), ["D1", "D2, D5"], skipped=True) == {
        "D1": SKIPPED, "D2": SKIPPED, "D5": SKIPPED}


def test_a_cell_is_the_worst_outcome_and_properties_sort_naturally(tmp_path):
    for row in (Row("faulty", "s1", {"R1": PASS, "R10": PASS}),
                Row("faulty", "s2", {"R1": VIOLATED, "R2": SKIPPED}),
                Row("correct", "s1", {"R1": PASS, "R2": PASS})):
        matrix.append(tmp_path, row)
    profiles, properties, grid = matrix.cells(matrix.load(tmp_path))
    assert profiles == [("correct", "-"), ("faulty", "-")]
    assert properties == ["R1", "R2", "R10"]
    assert grid[(("faulty", "-"), "R1")] == VIOLATED
    assert (("correct", "-"), "R10") not in grid
    md, *_, html = page.write(tmp_path)
    assert "| faulty | - | violated | skipped | pass |" in md.read_text()
    assert "<th>faulty</th>" in html.read_text() and html.name == "matrix.html"
    assert any(line.startswith("faulty") and "violated" in line
               for line in matrix.text(matrix.load(tmp_path)))


def test_an_empty_run_writes_no_matrix(tmp_path):
    assert matrix.write(tmp_path) == [] and page.write(tmp_path) == []
    assert matrix.markdown([]) == "no property was judged in this run\n"


def test_the_same_profile_on_kind_is_its_own_row():
    rows = [matrix.Row("storage-correct", "a", {"S2": matrix.PASS}),
            matrix.Row("storage-correct", "b", {"S2": matrix.VIOLATED}, provider="kind"),
            matrix.Row("storage-correct", "c", {"S2": matrix.PASS}, provider="local")]
    profiles, _, grid = matrix.cells(rows)
    assert profiles == [("storage-correct", "-"), ("storage-correct on kind", "-")]
    assert grid[(("storage-correct", "-"), "S2")] == matrix.PASS
    assert grid[(("storage-correct on kind", "-"), "S2")] == matrix.VIOLATED


def test_each_kubernetes_version_is_its_own_line_in_every_form(tmp_path):
    """A run across versions: the same profile on 1.35 and 1.37 are two lines, ordered by
    version (1.9 before 1.10), and the matrix in text, markdown and HTML names the version."""
    for version, outcome in (("v1.37.2", PASS), ("v1.35.4", VIOLATED), ("v1.9.0", PASS)):
        matrix.append(tmp_path, Row("faulty", f"s-{version}", {"R1": outcome},
                                    kubernetes=version))
    rows = matrix.load(tmp_path)
    lines, _, grid = matrix.cells(rows)
    assert lines == [("faulty", "v1.9.0"), ("faulty", "v1.35.4"), ("faulty", "v1.37.2")]
    assert grid[(("faulty", "v1.35.4"), "R1")] == VIOLATED
    assert grid[(("faulty", "v1.37.2"), "R1")] == PASS
    assert "| faulty | v1.35.4 | violated |" in matrix.markdown(rows)
    assert "<th>faulty</th><td>v1.37.2</td>" in page.render(tmp_path, rows)
    text = matrix.text(rows)
    assert "kubernetes" in text[0]
    assert any(line.split()[:3] == ["faulty", "v1.35.4", "violated"] for line in text)


def test_the_page_names_what_ran_titles_each_property_and_links_each_cell(tmp_path):
    """matrix.html: a header (when, aftershock, provider, Kubernetes, each implementation's
    version), a title under each property id (its statement on hover and in full below), and
    a cell not passed saying why in one line with links to its witness and timeline."""
    scenario = tmp_path / "test_web_faulty"
    (scenario / "evidence").mkdir(parents=True)
    (scenario / "evidence" / "witness.txt").write_text("R1: VIOLATED: 6 live pods\n")
    (scenario / "evidence" / "timeline.png").write_bytes(b"\x89PNG")
    (scenario / "verdicts.txt").write_text(
        "R1: VIOLATED: 6 live pods of replica group web at once, more than 5\nwitness (1)\n")
    matrix.append(tmp_path, Row("faulty", "f.feature::test_web[faulty]", {"R1": VIOLATED},
                                dir=scenario.name, kubernetes="v1.37.2", title="web",
                                version="replicagroup@e7e6ea152dfc"))
    matrix.append(tmp_path, Row("correct", "f.feature::test_web[correct]", {"R1": PASS},
                                kubernetes="v1.37.2", provider="kind", title="web"))
    html = page.render(tmp_path, matrix.load(tmp_path), written="2026-11-28 07:00 UTC")
    for fact in ("2026-11-28 07:00 UTC", "aftershock", "kind, local", "v1.37.2",
                 "replicagroup@e7e6ea152dfc", "correct on kind"):
        assert fact in html, fact
    assert "<small>No over-creation</small>" in html and "title=\"No over-creation: " in html
    assert "6 live pods of replica group web at once" in html  # why, in the cell
    assert 'href="test_web_faulty/evidence/witness.txt"' in html
    assert 'href="test_web_faulty/evidence/timeline.png"' in html
    assert "<dt id='p-R1'>R1</dt>" in html and 'href="#c-' in html
