"""`aftershock run --workers 2`: two shards at once, each with its own cluster, merged into one
run dir (one JUnit XML, one set of allure results); nothing left running afterwards."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from aftershock.machine import processes

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parents[2]


def test_two_workers_run_every_scenario_once_on_two_clusters_and_merge(tmp_path):
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", "--workers", "2",
         "features/harness/history.feature", "-k", "steady or attributed or before",
         "--run-dir", str(run)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    output = done.stdout + done.stderr
    clusters = set(re.findall(r"\[\d/2\] aftershock: local cluster (\S+):", output))
    assert len(clusters) == 2, output[-3000:]  # one cluster per worker
    cases = [case.get("name") for case in ET.parse(run / "junit.xml").getroot().iter("testcase")]
    assert len(cases) == len(set(cases)) == 5  # each selected scenario once, in one shard
    shards = [run / "shard-1-of-2", run / "shard-2-of-2"]
    assert all((shard / "junit.xml").is_file() for shard in shards)
    assert {len(list(ET.parse(s / "junit.xml").getroot().iter("testcase"))) for s in shards} \
        == {2, 3}  # dealt out evenly
    results = list((run / "allure-results").glob("*-result.json"))
    assert len(results) == 5
    # its own two clusters are gone (by name: another test's may run beside it, under xdist)
    assert not clusters & {state.name for state in processes.list_states()}


def test_workers_beyond_this_machine_are_refused_before_anything_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "aftershock.cli", "run", "--workers", "64",
                           "features/harness/smoke.feature", "--run-dir", str(tmp_path / "r")],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--workers 64" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r").exists()


def test_a_shard_that_runs_nothing_leaves_the_others_results_whole(tmp_path):
    """One scenario, two workers: the shard it does not fall in runs nothing, and removes only
    what it made itself (it once removed the run dir, the other shard's results with it)."""
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", "--workers", "2",
         "features/harness/smoke.feature", "--run-dir", str(run)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cases = [case for case in ET.parse(run / "junit.xml").getroot().iter("testcase")]
    assert [case.get("name") for case in cases] == [
        "test_a_drained_nodes_pods_come_back_on_the_other_nodes"], done.stderr[-3000:]
    assert not any(case.find("error") is not None for case in cases)
    assert len(list((run / "allure-results").glob("*-result.json"))) == 1
