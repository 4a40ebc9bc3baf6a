"""`--submission DIR`: the AI-conformance PRODUCT.yaml items a run evidences, checked by the
program's rules once merged into its template; junit_01.xml read by Ginkgo's own JUnit types,
results.json by gotestsum and go-junit-report (tests/readers, built with Go), each saying what
the run judged, with each property's own time."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from aftershock import cli
from aftershock.errors import UserError
from aftershock.report import ginkgo, gotest, matrix, product, submission
from tests import ai_conformance_rules as rules

READERS = Path(__file__).parents[1] / "readers"
TEMPLATE = product.TEMPLATES / "AIConformance-1.36.yaml"
VERDICT = {"pass": "PASS: each binding was followed by the group keeping its minimum",
           "violated": "VIOLATED: pod/ns/g-0 was bound to node/n1, cordoned for 3.30s by "
                       "then\nwitness (1 events over 0.000s):\n  +   4.507s  MODIFIED pod/ns/g-0",
           "unknown": "UNKNOWN: the history has a gap on pods from 2.0s to 3.0s",
           "not applicable": "NOT APPLICABLE: B4 does not apply to kube (its profile: KEP-4671: "
                             "minCount is enforced at scheduling only, not at runtime)"}


def _scenario(run: Path, profile: str, label: str, outcome: str, seconds: float,
              kubernetes: str = "v1.36.3", title: str = "A gang binds whole",
              expected: list[str] | None = None, provider: str = "kind") -> None:
    name = f"{profile}_{label}_{title.replace(' ', '_')}"
    matrix.append(run, matrix.Row(
        profile, f"features/scheduler/gang.feature::test_x[{profile}]", {label: outcome},
        dir=name, expected=expected or [], named=[label], kubernetes=kubernetes,
        seconds=seconds * 3, title=title, provider=provider))
    (run / name).mkdir(parents=True, exist_ok=True)
    if outcome in VERDICT:
        (run / name / "verdicts.txt").write_text(f"{label}: {VERDICT[outcome]}\n")
        (run / name / "judgements.jsonl").write_text(
            json.dumps({"ids": [label], "seconds": seconds}) + "\n")


def _kube_scheduler(run: Path, b2: str = "pass") -> None:
    _scenario(run, "kube-gang", "B1", "pass", 9.5)
    _scenario(run, "kube-gang", "B2", b2, 10.25, title="Nothing is bound onto a cordoned node")
    _scenario(run, "kube-gang", "B3", "not applicable", 0.5, title="A group is evicted whole")
    _scenario(run, "kube-gang", "B4", "not applicable", 0.25, title="A group completes")


def _checked(out: Path, tmp: Path) -> list[str]:
    """The program's rules over the fragment merged into its template, evidence beside it."""
    where = tmp / "v1.36" / "yoyo"
    path = rules.merged(TEMPLATE, out / submission.PRODUCT, where)
    if (out / product.EVIDENCE_DIR).is_dir():
        shutil.copytree(out / product.EVIDENCE_DIR, where / product.EVIDENCE_DIR)
    return rules.validate(path, TEMPLATE)


def test_a_gang_scheduler_that_held_is_implemented_and_the_program_accepts_it(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run)
    lines = submission.write(run, out, ["https://ci.example/runs/7"])
    assert lines[1:] == ["  PRODUCT.yaml for Kubernetes 1.36, with evidence/:",
                         "    schedulingOrchestration/gang_scheduling (MUST): Implemented"]
    document = yaml.safe_load((out / submission.PRODUCT).read_text())
    (item,) = document["spec"]["schedulingOrchestration"]
    wanted = product.template("1.36")["gang_scheduling"]
    assert (item["id"], item["description"], item["level"]) == (
        wanted.id, wanted.description, "MUST")
    assert item["status"] == "Implemented"
    assert item["evidence"] == ["https://ci.example/runs/7", "evidence/gang_scheduling.md"]
    assert "kube-gang on kind" in item["notes"] and "B3 not applicable" in item["notes"]
    assert "KEP-4671" in item["notes"] and "judged on a real cluster (kind)" in item["notes"]
    assert document["metadata"] == {"kubernetesVersion": "v1.36"}
    assert _checked(out, tmp_path) == []
    page = (out / "evidence" / "gang_scheduling.md").read_text()
    assert "| B1 | All or nothing" in page and "B2: PASS" in page


def test_a_run_on_the_embedded_cluster_says_it_is_no_platforms(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _scenario(run, "kube-gang", "B1", "pass", 1.0, provider="local")
    lines = submission.write(run, out, [])
    assert lines[-1].startswith("  note: judged on aftershock's embedded cluster, not a platform")
    (item,) = yaml.safe_load((out / submission.PRODUCT).read_text())["spec"][
        "schedulingOrchestration"]
    assert "judged on aftershock's embedded cluster (a real control plane, simulated nodes), " \
        "not a platform's" in item["notes"]


def test_the_rules_refuse_what_the_program_refuses(tmp_path):
    """The rules can fail: a template left as it is, and a MUST item not shown."""
    assert "Metadata field platformName has placeholder value: [Platform Name]" in \
        rules.validate(TEMPLATE, TEMPLATE)
    assert "Requirement 'gang_scheduling' is MUST level but status is ''. It must be " \
        "'Implemented'." in rules.validate(TEMPLATE, TEMPLATE)
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run)
    submission.write(run, out, [])
    fragment = out / submission.PRODUCT
    fragment.write_text(fragment.read_text().replace("all-or-nothing", "some-or-nothing"))
    shutil.rmtree(out / "evidence")
    problems = _checked(out, tmp_path)
    assert "'gang_scheduling': description is not the template's" in problems
    assert any(p.startswith("Invalid evidence file for 'gang_scheduling'") for p in problems)


@pytest.mark.parametrize(("b2", "status"), [("unknown", ""), ("violated", "Not Implemented")])
def test_implemented_only_when_every_property_passed(tmp_path, b2, status):
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run, b2=b2)
    submission.write(run, out, [])
    (item,) = yaml.safe_load((out / submission.PRODUCT).read_text())["spec"][
        "schedulingOrchestration"]
    assert item["status"] == status
    assert f"B2 {b2}" in item["notes"]
    assert f"Requirement 'gang_scheduling' is MUST level but status is '{status}'. It must be " \
        "'Implemented'." in _checked(out, tmp_path)


def test_a_gang_scheduler_and_a_driver_make_two_items_in_their_categories(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run)
    _scenario(run, "driver", "D13", "pass", 3.0, title="A container sees its devices")
    _scenario(run, "driver", "D5", "pass", 1.0, title="A device is prepared once")
    lines = submission.write(run, out, ["https://ci.example/runs/7"])
    assert lines[-2:] == ["    schedulingOrchestration/gang_scheduling (MUST): Implemented",
                          "    security/secure_accelerator_access (MUST): Implemented"]
    spec = yaml.safe_load((out / submission.PRODUCT).read_text())["spec"]
    (item,) = spec["security"]
    assert item["id"] == "secure_accelerator_access" and "driver on kind: D13 pass" in \
        item["notes"]
    assert (out / "evidence" / "secure_accelerator_access.md").is_file()
    assert _checked(out, tmp_path) == []


def test_one_gang_scheduler_that_held_is_enough(tmp_path):
    """The item asks for "at least one gang scheduling solution"."""
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run)
    _scenario(run, "kai", "B1", "violated", 3.0)
    submission.write(run, out, [])
    (item,) = yaml.safe_load((out / submission.PRODUCT).read_text())["spec"][
        "schedulingOrchestration"]
    assert item["status"] == "Implemented"
    assert "with kube-gang on kind" in item["notes"] and "kai on kind: B1 violated" in \
        item["notes"]


def test_a_run_that_shows_no_item_writes_the_results_and_no_product(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _scenario(run, "driver", "D5", "pass", 2.0)
    lines = submission.write(run, out, [])
    assert {path.name for path in out.iterdir()} == {"junit_01.xml", "e2e.log", "results.json"}
    assert lines[-1] == ("  no PRODUCT.yaml: the run evidences no AI-conformance item "
                         "(gang_scheduling needs B1, B2, B3, B4, B5 judged; "
                         "secure_accelerator_access needs D13 judged)")


@pytest.mark.parametrize(("rows", "said"), [
    (["v1.37.2"], "  no PRODUCT.yaml: the AI-conformance program has no checklist for Kubernetes "
                  "1.37 (aftershock keeps those for 1.33, 1.34, 1.35, 1.36)"),
    (["v1.36.3", "v1.35.4"], "  no PRODUCT.yaml: a PRODUCT.yaml is for one Kubernetes version; "
                             "this run has v1.35.4, v1.36.3: run each version apart"),
])
def test_a_run_the_program_has_no_checklist_for_gets_its_results_and_is_told_why(
        tmp_path, rows, said):
    run, out = tmp_path / "run", tmp_path / "sub"
    for kubernetes in rows:
        _scenario(run, "kube-gang", "B1", "pass", 1.0, kubernetes=kubernetes,
                  title=f"on {kubernetes}")
    lines = submission.write(run, out, [])
    assert lines[-1] == said
    assert sorted(p.name for p in out.iterdir()) == ["e2e.log", "junit_01.xml", "results.json"]


def test_a_run_that_expects_a_violation_is_refused_in_one_line(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _scenario(run, "kube-gang", "B1", "pass", 1.0, expected=["B1"])
    with pytest.raises(UserError, match=r"^--submission: ") as refused:
        submission.write(run, out, [])
    assert "expects a violation (@expect-violation:B1)" in str(refused.value)
    assert "\n" not in str(refused.value) and not out.exists()


def test_run_refuses_a_feature_that_expects_a_violation_before_anything_starts(
        tmp_path, capsys, monkeypatch):
    feature = tmp_path / "bug.feature"
    feature.write_text("Feature: a bug\n\n  @expect-violation:R1\n  Scenario: over-creation\n"
                       "    Given a cluster with 3 nodes\n")
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", str(feature), "--submission", str(tmp_path / "sub")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        f"aftershock: error: {feature}:4: --submission: this scenario expects a violation "
        "(@expect-violation:R1); a submission is made of runs that expect none: run the "
        "features without it"]
    assert not (tmp_path / "sub").exists() and not (tmp_path / "reports").exists()


def test_an_evidence_url_that_is_not_one_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"--evidence-url 'ci\.example/run'"):
        submission.write(tmp_path, tmp_path / "sub", ["ci.example/run"])


def _read(out: Path, tmp: Path) -> dict:
    """What Ginkgo's JUnit types, gotestsum and go-junit-report read (tests/readers)."""
    if shutil.which("go") is None:
        pytest.fail("Go is not installed: `make test` builds it into the toolchain first")
    binary = tmp / "readers"
    subprocess.run(["go", "build", "-o", str(binary), "."], cwd=READERS, check=True,
                   timeout=600)
    found = subprocess.run([str(binary), str(out)], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    return json.loads(found.stdout)


def test_the_readers_of_ginkgo_junit_and_go_test_json_read_what_was_judged(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run, b2="violated")
    _scenario(run, "kube-gang", "B5", "unknown", 4.0, title="A queue holds a gang back")
    _scenario(run, "kube-gang", "B1", "pass", 7.75, title="A gang binds whole again")
    submission.write(run, out, [])
    read = _read(out, tmp_path)
    junit = read["ginkgo"]
    assert (junit["tests"], junit["failures"], junit["errors"], junit["disabled"]) == (6, 1, 1, 2)
    (suite,) = junit["suites"]
    assert suite["name"] == "aftershock conformance suite: kube-gang on kind on Kubernetes v1.36.3"
    assert (suite["tests"], suite["skipped"], suite["failures"], suite["errors"]) == (6, 2, 1, 1)
    cases = {case["name"]: case for case in junit["cases"]}
    b2 = cases["[It] [aftershock] [GangScheduling] B2 Nothing is bound onto a cordoned node "
               "[kube-gang]"]
    assert (b2["status"], b2["failure"], b2["time"]) == ("failed", True, 10.25)  # its own
    b3 = cases["[It] [aftershock] [GangScheduling] B3 A group is evicted whole [kube-gang]"]
    assert (b3["status"], b3["skipped"]) == ("skipped", True)
    b5 = cases["[It] [aftershock] [GangScheduling] B5 A queue holds a gang back [kube-gang]"]
    assert (b5["status"], b5["failure"]) == ("aborted", True)  # UNKNOWN: an error, not a pass
    assert sorted(c["status"] for c in cases.values()) == [
        "aborted", "failed", "passed", "passed", "skipped", "skipped"]
    pkg = "aftershock/kube-gang-on-kind/v1.36.3"
    summed = read["gotestsum"]["packages"][pkg]
    assert summed["result"] == "fail" and read["gotestsum"]["errors"] is None
    assert sorted(summed["failed"]) == [
        "TestB2", "TestB2/Nothing_is_bound_onto_a_cordoned_node_[kube-gang]",
        "TestB5", "TestB5/A_queue_holds_a_gang_back_[kube-gang]"]
    assert sorted(summed["skipped"]) == [
        "TestB3", "TestB3/A_group_is_evicted_whole_[kube-gang]",
        "TestB4", "TestB4/A_group_completes_[kube-gang]"]
    assert "TestB1/A_gang_binds_whole_again_[kube-gang]" in summed["passed"]
    tests = read["goJunitReport"]["packages"][pkg]["tests"]
    assert tests["TestB1"] == "PASS" and tests["TestB2"] == "FAIL" and tests["TestB3"] == "SKIP"
    assert tests["TestB5/A_queue_holds_a_gang_back_[kube-gang]"] == "FAIL"
    assert read["goJunitReport"]["successful"] is False
    log = (out / submission.LOG).read_text().splitlines()
    assert "Ran 4 of 6 Specs in 96.750 seconds" in log  # its scenarios' time
    assert "FAIL! -- 2 Passed | 2 Failed | 0 Pending | 2 Skipped" in log
    assert log[-1] == "Test Suite Failed"


def test_a_run_that_held_ends_its_log_as_a_conformance_run_does(tmp_path):
    run, out = tmp_path / "run", tmp_path / "sub"
    _kube_scheduler(run)
    submission.write(run, out, [])
    log = (out / submission.LOG).read_text()
    assert "kube-apiserver version: v1.36.3" in log
    assert "SUCCESS! -- 2 Passed | 0 Failed | 0 Pending | 2 Skipped\nPASS\n" in log
    assert log.endswith("Test Suite Passed\n")
    stream = [json.loads(line) for line in (out / submission.RESULTS).read_text().splitlines()]
    assert stream[0]["Action"] == "start" and stream[-1]["Action"] == "pass"
    assert "Test" not in stream[-1]


def test_go_float_is_gos():
    assert [ginkgo.go_float(v) for v in (17.5, 0.0, 12.0, 9.3469e-05)] == [
        "17.5", "0", "12", "9.3469e-05"]
    assert gotest.test_name("A gang\tbinds [kind]") == "A_gang_binds_[kind]"
    assert gotest.stamp(1000000001.5) == "2001-09-09T01:46:41.5Z"
