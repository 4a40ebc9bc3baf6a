"""Shared by the report and notebook tests: one finished, failing run (a scenario that reads a
Secret and violates R1, against two profiles), its HTML report generated."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-aftershock-8f2e91"
FEATURE = f"""Feature: A failing scenario's report

  Scenario: A scenario that reads a Secret and fails
    Given a Secret db with password "{SECRET}"
    And the implementation under test is running
    And a Deployment web with 2 replicas
    And within 60 seconds 2 pods of web are Running
    Then at no point did web have more than 1 live pods (R1)
    And the Secret db holds password "something-else"
"""

@pytest.fixture(scope="session")
def finished_run(tmp_path_factory) -> Path:
    """One failing run, its HTML report generated: the run dir."""
    run = tmp_path_factory.mktemp("report") / "run"
    # Inside the rootdir: allure-pytest-bdd names a feature by its path relative to it.
    # named by this process too: each pytest-xdist worker makes its own, from its own "report0"
    feature = REPO / "reports" / f"{run.parent.name}-{os.getpid()}-secret_report.feature"
    feature.parent.mkdir(exist_ok=True)
    feature.write_text(FEATURE)
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", str(feature), "--run-dir", str(run),
         "--profile", "profiles/replicagroup-correct.yaml", "--profile",
         "profiles/kube-replicaset.yaml", "-p", "no:cacheprovider"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    feature.unlink()
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert "R1: VIOLATED" in result.stdout
    failure = [line for line in result.stdout.splitlines() if "holds password=" in line]
    assert failure and all(SECRET not in line and "[REDACTED]" in line for line in failure), \
        "the failure is shown with the value masked"
    made = subprocess.run([sys.executable, "-m", "aftershock.cli", "report", str(run)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (run / "html" / "index.html").exists()
    return run
