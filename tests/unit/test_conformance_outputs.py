"""The outputs a conformance submission takes (conformance/junit.xml, e2e.log, results.json),
from a run's matrix rows and each scenario's verdicts: the JUnit read back by a JUnit parser,
the JSON checked against the schema shipped beside its writer, and `aftershock merge` keeping
all three for the joined run."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from aftershock.report import conformance, matrix
from aftershock.runs import merge

WITNESS = ("D5: VIOLATED: device gpu-0 on node/n1 was prepared for claim/ns/a and claim/ns/b "
           "at once\nwitness (2 events over 0.500s):\n  +   1.000s  prepare claim/ns/a\n\n"
           "  +   1.500s  prepare claim/ns/b")
VERDICTS = {
    "faulty": f"eventually: PASS: the pod p runs after 1.0s\n\n{WITNESS}\n\n"
              "D4: UNKNOWN: the history has a gap on resourceclaims from 2.0s to 3.0s",
    "correct": "D5: PASS: 3 preparations on node/n1, no device in two claims\n\n"
               "D4: PASS: claim/ns/a left reservedFor after 0.2s",
    "kube": "B4: NOT APPLICABLE: B4 does not apply to kube (its profile: KEP-4671: minCount is "
            "enforced at scheduling only, not at runtime)",
}


def _run(path: Path, profile: str, outcomes: dict[str, str], error: str | None = None,
         dir: str | None = None) -> None:
    name = dir or f"scenario_{profile}_"
    matrix.append(path, matrix.Row(
        profile, f"features/driver/dra.feature::test_scenario[{profile}]", outcomes, dir=name,
        named=list(outcomes), provider="kind", error=error, kubernetes="v1.36.3",
        seconds=12.5, title="A device is prepared once"))
    (path / name).mkdir(parents=True, exist_ok=True)
    if profile in VERDICTS:
        (path / name / "verdicts.txt").write_text(VERDICTS[profile] + "\n")


def _outputs(run: Path):
    return (JUnitXml.fromfile(str(run / "conformance" / "junit.xml")),
            (run / "conformance" / "e2e.log").read_text(),
            json.loads((run / "conformance" / "results.json").read_text()))


def _validate(results: dict) -> None:
    jsonschema.validate(results, json.loads(conformance.SCHEMA.read_text()))


def _cases(xml: JUnitXml) -> dict[tuple[str, str], object]:
    return {(suite.name, case.name): case for suite in xml for case in suite}


def test_one_test_case_per_property_per_scenario_with_its_verdict(tmp_path):
    _run(tmp_path, "faulty", {"D4": "unknown", "D5": "violated"})
    _run(tmp_path, "correct", {"D4": "pass", "D5": "pass"})
    _run(tmp_path, "broken", {"D5": "error"}, error="RuntimeError: the plugin never registered")
    _run(tmp_path, "kube", {"B4": "not applicable"})
    assert len(conformance.write(tmp_path)) == 3
    xml, log, results = _outputs(tmp_path)
    cases = _cases(xml)
    suite = "faulty on kind on Kubernetes v1.36.3"
    name = "D5 A device is prepared once [faulty]"
    assert len(cases) == 6 and xml.tests == 6 and xml.failures == 1 and xml.errors == 2
    assert xml.skipped == 1
    failure = cases[(suite, name)].result[0]
    assert isinstance(failure, Failure) and failure.message.startswith("D5: VIOLATED: device")
    assert "+   1.500s  prepare claim/ns/b" in failure.text  # the witness, blank line and all
    # UNKNOWN is not proven either way: an error, never a skip ("not applicable")
    unknown = cases[(suite, "D4 A device is prepared once [faulty]")].result[0]
    assert isinstance(unknown, Error) and "a gap on resourceclaims" in unknown.message
    assert unknown.type == "unknown"
    skipped = cases[("kube on kind on Kubernetes v1.36.3", "B4 A device is prepared once [kube]")]
    assert isinstance(skipped.result[0], Skipped)
    assert skipped.result[0].message.startswith("B4: NOT APPLICABLE: ") and "KEP-4671" in \
        skipped.result[0].message
    error = cases[("broken on kind on Kubernetes v1.36.3",
                   "D5 A device is prepared once [broken]")].result[0]
    assert isinstance(error, Error) and "never registered" in error.message
    assert cases[(suite, name)].time == 12.5
    assert cases[("correct on kind on Kubernetes v1.36.3",
                  "D5 A device is prepared once [correct]")].is_passed
    _validate(results)
    by = {(r["implementation"], r["id"]): r for r in results["results"]}
    assert by[("faulty on kind", "D5")]["status"] == "violated"
    assert by[("faulty on kind", "D5")]["evidence"] == ["scenario_faulty_/verdicts.txt"]
    assert by[("faulty on kind", "D5")]["description"].startswith("Node-side exclusivity")
    assert by[("faulty on kind", "D4")]["notes"].startswith("D4: UNKNOWN: the history has a gap")
    assert "--- FAIL: faulty on kind/features/driver/dra.feature/" + name in log
    assert "--- ERROR: faulty on kind/" in log and "--- ERROR: broken on kind/" in log
    assert "--- SKIP: kube on kind/" in log
    assert by[("kube on kind", "B4")]["status"] == "not applicable"
    assert log.rstrip().endswith("FAIL")


def test_a_run_that_held_everywhere_ends_its_log_in_pass(tmp_path):
    _run(tmp_path, "correct", {"D4": "pass", "D5": "pass"})
    conformance.write(tmp_path)
    xml, log, results = _outputs(tmp_path)
    assert xml.failures == 0 and log.rstrip().endswith("PASS")
    _validate(results)


def test_an_expected_violation_caught_fails_the_implementation_and_one_missed_fails(tmp_path):
    """A caught expected violation is the suite working and the implementation failing the
    property: it was written as a passing test, so a faulty implementation's results read as
    conformant."""
    _run(tmp_path, "faulty", {"D5": "caught", "D4": "missed"})
    conformance.write(tmp_path)
    xml, log, results = _outputs(tmp_path)
    cases = {case.name.split()[0]: case for suite in xml for case in suite}
    caught = cases["D5"].result[0]
    assert isinstance(caught, Failure) and caught.type == "caught"
    assert "--- FAIL: " in log and log.rstrip().endswith("FAIL")
    assert isinstance(cases["D4"].result[0], Failure)
    assert "expected to be violated and was not" in cases["D4"].result[0].message
    _validate(results)


def test_the_schema_refuses_a_result_without_its_status(tmp_path):
    """The schema can fail: a result that lost its status is refused."""
    _run(tmp_path, "correct", {"D5": "pass"})
    conformance.write(tmp_path)
    _, _, results = _outputs(tmp_path)
    del results["results"][0]["status"]
    with pytest.raises(jsonschema.ValidationError, match="status"):
        _validate(results)


def test_nothing_judged_writes_nothing(tmp_path):
    assert conformance.write(tmp_path) == []
    assert not (tmp_path / "conformance").exists()


def test_merge_keeps_all_three_for_the_joined_run(tmp_path):
    _run(tmp_path / "a", "faulty", {"D5": "violated"})
    _run(tmp_path / "b", "correct", {"D5": "pass"})
    for run in ("a", "b"):  # each run wrote its own, as a run does at its end
        conformance.write(tmp_path / run)
    merge.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    xml, log, results = _outputs(tmp_path / "m")
    assert xml.tests == 2 and xml.failures == 1
    failure = next(case for suite in xml for case in suite if not case.is_passed).result[0]
    assert "witness" in failure.text  # read from the merged copy of the scenario's dir
    assert log.rstrip().endswith("FAIL")
    _validate(results)
    assert {r["implementation"] for r in results["results"]} == {"faulty on kind",
                                                                 "correct on kind"}


def test_each_property_takes_its_own_time_not_the_scenarios(tmp_path):
    """A 60 s scenario judging five properties reported 300 s: each test case carried the
    scenario's time. A property's time is its judging steps' own (their waits included)."""
    _run(tmp_path, "faulty", {"D4": "unknown", "D5": "violated"})
    (tmp_path / "scenario_faulty_" / "judgements.jsonl").write_text("".join(
        json.dumps(record) + "\n" for record in [
            {"ids": ["D4"], "check": "eventually", "seconds": 3.0},
            {"ids": ["D5"], "check": "node_state_exclusive", "seconds": 0.25},
            {"ids": ["D4"], "check": "eventually", "seconds": 2.0}]))
    conformance.write(tmp_path)
    xml, log, results = _outputs(tmp_path)
    times = {case.name.split()[0]: case.time for suite in xml for case in suite}
    assert times == {"D4": 5.0, "D5": 0.25}
    assert "(5.00s): unknown" in log and "(0.25s): violated" in log
    seconds = {r["id"]: r["scenarios"][0]["seconds"] for r in results["results"]}
    assert seconds == {"D4": 5.0, "D5": 0.25}
