"""Kubernetes versions on the embedded cluster: a scenario that needs an API its cluster's
version does not serve is skipped naming both, never failed; a shape turns on kube-scheduler's
built-in gang scheduling (the Workload API), and the timeline then says the scheduler is a
gang scheduler; every matrix row names the version its verdicts were reached on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aftershock.go import toolchain
from aftershock.timeline import load
from aftershock.timeline.entry import KUBERNETES, MARK, SCHEDULERS

REPO = Path(__file__).resolve().parents[2]
FEATURE = "tests/data/needs_workload_api.feature"
pytestmark = pytest.mark.cluster


def _run(run: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", FEATURE, "-rs", "-p", "no:cacheprovider",
         "--run-dir", str(run), *arguments], capture_output=True, text=True, cwd=REPO,
        timeout=600)


def _marks(run: Path) -> list[dict]:
    """The extras of the scenario's marks, as the recorder wrote them."""
    entries = load(next(run.glob("*/timeline.jsonl")).parent)
    return [entry.extra or {} for entry in entries if entry.kind == MARK]


def test_an_api_the_version_lacks_skips_and_a_gang_shape_serves_it(tmp_path):
    version = toolchain.pinned_kubernetes()
    plain = _run(tmp_path / "plain")
    assert plain.returncode == 0, plain.stdout[-3000:]
    assert f"Kubernetes v{version} does not serve scheduling.k8s.io/v1beta1, which this " \
        "scenario needs" in plain.stdout
    gang = _run(tmp_path / "gang", "--shape", "tests/data/shapes/gang-scheduling.yaml")
    assert gang.returncode == 0, gang.stdout[-3000:] + gang.stderr[-2000:]
    assert "1 passed" in gang.stdout
    marks = _marks(tmp_path / "gang")
    kubernetes = [m[KUBERNETES] for m in marks if KUBERNETES in m]
    schedulers = [m[SCHEDULERS] for m in marks if SCHEDULERS in m]
    assert kubernetes == [f"v{version}"]
    assert schedulers[0][0]["gang"] is True and "gang scheduling on" in schedulers[0][0]["by"]
