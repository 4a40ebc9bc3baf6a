"""The scheduler and driver features catch their seed bugs, run as a user would: the faulty
gang operator never breaches a partial regression (G1), the faulty gang scheduler breaks each
of B1-B5 (and binds a gang's pods before their claims are allocated, D1), its holds-room,
holds-devices, preempts-in-vain and passes-over twins B6, B7, B8 and B6 again, the faulty DRA
driver prepares a device for two claims (D5); the correct ones pass. (`-k` keeps CI short;
`make demo` and `aftershock run` without it run everything.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from aftershock.report import conformance
from tests import shards

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster


def _run(where: str, profile: str, *selection: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", where, "--profile",
         f"profiles/{profile}.yaml", "-p", "no:cacheprovider", *selection],
        capture_output=True, text=True, cwd=REPO, timeout=900)


def _gang_run(profiles: tuple[str, ...], selection: str,
              sharded: bool = True) -> shards.Sharded:
    """A faulty profile and its correct twin in one run, on two ten-node clusters at once (the
    scenarios are dealt to them; one scenario runs on one cluster, for every profile)."""
    arguments = ["features/scheduler", "-p", "no:cacheprovider", "-k", selection,
                 *[arg for p in profiles for arg in ("--profile", f"profiles/{p}.yaml")]]
    result = shards.run(arguments, REPO, timeout=1200, sharded=sharded)
    assert result.returncode == 1, result.stdout[-5000:]
    assert "shape ten-small-nodes" in result.stdout
    return result


def _only_failed(out: str, faulty: str) -> None:
    """Only the faulty profile's scenarios failed; a correct one's failure is shown whole (its
    FAILED line with its verdicts), not cut off by the faulty one's."""
    failed = set(re.findall(r"^FAILED \S+\[([\w-]+)\]", out, re.M))
    wrong = [block for block in re.split(r"(?m)^(?=FAILED )", out)
             if block.startswith("FAILED ") and not re.match(rf"FAILED \S+\[{faulty}\]", block)]
    assert failed == {faulty}, "\n".join(wrong)[:8000] or out[-3000:]


def test_the_faulty_gang_operator_never_breaches_a_partial_regression_the_correct_does():
    result = _gang_run(("gang-faulty", "gang-correct"), "edge", sharded=False)
    out = result.stdout
    assert "G1: VIOLATED: group 0 of gang train has MinAvailableBreached=True did not " \
           "happen within 10s" in out
    # G2 judges what follows a breach; with none, its precondition never held: G1 is the
    # property that blames the missing breach, and G2 does not blame it twice. G3 forbids only
    # early or unwarranted recycles, and there was none.
    assert "G2: UNKNOWN: the precondition never held: group 0 of gang train never had " \
           "its breach" in out
    assert "G3: VIOLATED" not in out
    _only_failed(out, "gang-faulty")
    assert (result.counts["failed"], result.counts["passed"]) == (1, 1), out[-3000:]


def test_the_faulty_gang_scheduler_breaks_b1_to_b5_the_correct_keeps_them():
    result = _gang_run(("gangscheduler-faulty", "gangscheduler-correct"),
                       "(group or cordoned or queue) and not room")
    out = result.stdout
    for expected in (  # each of the faulty gang scheduler's five bugs, named
            "B1: VIOLATED: pod/", "kept at most 3 pods (bound or Succeeded) in the 5s after",
            "B2: VIOLATED: pod/", "cordoned for",
            "B3: VIOLATED: ", "was still bound to node/",
            "B4: VIOLATED: ", "(2 Succeeded: g-0, g-1)",
            "B5: VIOLATED: the pods bound through queue/team requested ", "over its limit of "
            "1000m"):
        assert expected in out, f"{expected!r} not in\n{out[-6000:]}"
    _only_failed(out, "gangscheduler-faulty")
    # the correct one preempts too (the faulty one maps no preemption): its scenario, the
    # group taken whole (B3) and the pod it preempted for bound (B8), passes; and it binds a
    # group before the single pods made after it (B6, B1), which the faulty one binds in part
    assert (result.counts["failed"], result.counts["passed"]) == (7, 8), out[-3000:]


def test_the_preempts_in_vain_and_passes_over_twins_break_b8_and_b6():
    """preempts-in-vain evicts a group whole (B3 holds) for a pod of higher priority it never
    binds (B8); passes-over binds single pods made after a waiting group into its room (B6).
    Each keeps the other's property."""
    result = _gang_run(("gangscheduler-preempts-in-vain", "gangscheduler-passes-over"),
                       "preempted or passed_over")
    out = result.stdout
    assert "B8: VIOLATED: " in out and "waited, and pod/" in out
    assert "was not bound 10s later: a victim evicted in vain" in out
    assert "B6: VIOLATED: podgroup/" in out and "/big waited for its minimum from" in out
    assert "created after them and of no higher priority, was bound into it at +" in out
    failed = set(re.findall(r"^FAILED \S+::(test_\w+)\[([\w-]+)\]", out, re.M))
    assert failed == {
        ("test_a_group_preempted_for_a_pod_of_higher_priority_goes_whole",
         "gangscheduler-preempts-in-vain"),
        ("test_a_group_is_not_passed_over_by_single_pods_made_after_it",
         "gangscheduler-passes-over")}, out[-6000:]
    assert (result.counts["failed"], result.counts["passed"]) == (2, 2), out[-3000:]


def test_each_faulty_gang_scheduler_twin_breaks_its_own_property_b6_b7_and_d1():
    """One ten-node cluster, four references, the scenarios of B6, D1 and B7: holds-room (the
    room of a pending group kept: scheduler-plugins#713's bug) starves a group that fits behind
    one that does not (B6); the faulty one binds a pod before its claim is allocated (D1);
    holds-devices allocates the claims of a group it cannot bind and leaves them (B7). Each
    fails only its own scenario; the correct one passes all three."""
    result = _gang_run(("gangscheduler-holds-room", "gangscheduler-holds-devices",
                        "gangscheduler-faulty", "gangscheduler-correct"),
                       "holds_no_room or each_claim or holds_no_device")
    out = result.stdout
    failed = set(re.findall(r"^FAILED \S+::(test_\w+)\[([\w-]+)\]", out, re.M))
    assert failed == {
        ("test_a_group_that_cannot_be_bound_holds_no_room_from_one_that_can",
         "gangscheduler-holds-room"),
        ("test_a_gang_whose_pods_each_claim_a_device_binds_whole_each_claim_allocated_first",
         "gangscheduler-faulty"),
        ("test_a_claiming_gang_that_cannot_be_bound_holds_no_device",
         "gangscheduler-holds-devices")}, out[-6000:]
    assert "B6: VIOLATED: podgroup/" in out and "/small waited for its minimum from" in out
    assert "while the nodes had room for the pods it lacked (pod/" in out
    assert "D1: VIOLATED: pod/" in out and "was not allocated" in out
    assert "B7: VIOLATED: resourceclaim/" in out
    assert "while the group was below its minimum: a gang that is not bound held a device" in out
    assert (result.counts["failed"], result.counts["passed"]) == (3, 9), out[-3000:]


def test_the_faulty_driver_prepares_a_device_twice(tmp_path):
    result = _run("features/driver", "dradriver-faulty", "-k", "force", "--run-dir",
                  str(tmp_path))
    assert result.returncode == 1, result.stdout[-3000:]
    assert "D5: VIOLATED: device dev-0 on node/" in result.stdout
    assert "while still prepared for" in result.stdout
    assert "-- driver prepare dev-0" in result.stdout, "the witness is the driver's log"
    # What a conformance submission takes, from this real run
    suites = JUnitXml.fromfile(str(tmp_path / "conformance" / "junit.xml"))
    cases = {case.name.split()[0]: case for suite in suites for case in suite}
    failure = cases["D5"].result[0]
    assert isinstance(failure, Failure) and "-- driver prepare dev-0" in failure.text
    assert cases["D5"].name == "D5 A force-deleted pod's device is not prepared twice"
    assert cases["D5"].time > 0
    results = json.loads((tmp_path / "conformance" / "results.json").read_text())
    jsonschema.validate(results, json.loads(conformance.SCHEMA.read_text()))
    assert {r["id"]: r["status"] for r in results["results"]}["D5"] == "violated"
    assert "--- FAIL: dradriver-faulty/features/driver/dra_allocation.feature/D5 " in \
        (tmp_path / "conformance" / "e2e.log").read_text()


def test_the_correct_driver_passes_with_the_real_scheduler_and_claim_controller():
    result = _run("features/driver", "dradriver-correct", "-k", "force or binding")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 passed" in result.stdout


def test_kube_scheduler_preempts_a_group_in_disruption_mode_all_whole():
    """KEP-5710: a PodGroup in disruptionMode All is preempted whole (B3 judged, and it holds
    on kube-scheduler 1.37); one that sets none is in Single, the default, where B3 does not
    apply and says why."""
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", "features/scheduler",
         "-p", "no:cacheprovider", "-k", "preempted", "-v",
         "--profile", "profiles/kube-scheduler-gang.yaml",
         "--profile", "profiles/kube-scheduler-gang-all.yaml"],
        capture_output=True, text=True, cwd=REPO, timeout=900)
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr[-2000:]
    run = REPO / re.search(r"aftershock: reports in (\S+)", out).group(1)
    verdicts = {path.parent.name: path.read_text() for path in run.glob("*/verdicts.txt")}
    (whole,) = [text for name, text in verdicts.items() if name.endswith("gang-all_")]
    (single,) = [text for name, text in verdicts.items() if name.endswith("gang_")]
    assert re.search(r"B3: PASS: .*podgroup/\S+/g", whole), whole
    assert "B3: NOT APPLICABLE" in single and "disruptionMode is Single (KEP-5710" in single, \
        single
