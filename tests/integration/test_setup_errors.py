"""A set-up failure is an error, never a verdict (issue 43): a profile whose kind cannot be
Established names what blocked it, and its matrix row says error, not unknown; and each profile
of a multi-profile run starts from a cluster with no kinds an earlier profile installed, so one
implementation's short name no longer blocks the next one's kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = "tests/data"
pytestmark = pytest.mark.cluster


def _run(tmp_path: Path, *profiles: str) -> tuple[subprocess.CompletedProcess, dict]:
    run = tmp_path / "run"
    arguments = [arg for name in profiles
                 for arg in ("--profile", f"{DATA}/profiles/{name}.yaml")]
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", f"{DATA}/one_group.feature",
         *arguments, "-p", "no:cacheprovider", "--run-dir", str(run)],
        capture_output=True, text=True, cwd=REPO, timeout=900)
    rows = [json.loads(line) for line in (run / "matrix.jsonl").read_text().splitlines()]
    return result, {row["profile"]: row for row in rows}


@pytest.fixture(scope="module")
def conflict_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """The three profiles in one run, on one cluster, in this order."""
    return _run(tmp_path_factory.mktemp("conflicts"), "conflict-a", "conflict-b",
                "conflict-both")


def test_a_profile_starts_without_the_kinds_an_earlier_profile_installed(conflict_run):
    """conflict-a installs widgets (short name wd), conflict-b gadgets of the same group (wd
    too). On 86c0d82 the widgets CRD stayed and gadgets was never Established: conflict-b's
    row read UNKNOWN everywhere."""
    result, rows = conflict_run
    assert rows["conflict-a"]["outcomes"] == {"R5": "pass"}, result.stdout[-3000:]
    assert rows["conflict-b"]["outcomes"] == {"R5": "pass"}, result.stdout[-3000:]


def test_a_kind_that_cannot_be_established_is_an_error_naming_what_blocked_it(conflict_run):
    result, rows = conflict_run
    assert result.returncode == 1, result.stdout[-3000:]
    assert rows["conflict-both"]["outcomes"] == {"R5": "error"}, result.stdout[-3000:]
    cause = rows["conflict-both"]["error"]
    assert "customresourcedefinition/gizmos.conflict.aftershock.io not Established within " \
           "30s: its names were not accepted" in cause, cause
    assert '"wd" held by customresourcedefinition/widgets.conflict.aftershock.io' in cause
    assert "errors (no verdict):" in result.stdout and cause[:80] in result.stdout
