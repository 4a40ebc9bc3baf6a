"""The operator features catch the seed bug: run as a user would, the faulty replicagroup
profile fails naming R1 with a witness of the extra pods; the correct one passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster


def _run(profile: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", "features/operator", "--profile",
         f"profiles/{profile}.yaml", "-k", "2-5", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=REPO, timeout=600)


def test_the_faulty_replicagroup_violates_r1_with_a_witness():
    result = _run("replicagroup-faulty")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "R1: VIOLATED" in result.stdout
    assert "live pods of replica group web at once, more than 5" in result.stdout
    assert "witness (6 events" in result.stdout
    assert "R3: VIOLATED" in result.stdout, "over-creation is also churn without cause"


def test_the_correct_replicagroup_passes():
    result = _run("replicagroup-correct")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 passed" in result.stdout
