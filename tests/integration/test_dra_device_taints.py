"""Device taints (features/kubernetes/dra_device_taints.feature) on the embedded cluster's own
scheduler and kube-controller-manager: a device tainted NoSchedule goes only to a claim that
tolerates it (D14); a NoExecute taint, a slice's or a DeviceTaintRule's, evicts the pod that
does not tolerate it and keeps the one whose toleration names NoExecute (D15), a pod given its
device through an extended resource too. On 1.37.2 the eviction controller also evicts the pod
whose toleration has no effect, which the scheduler, and Kubernetes' device taints page, take
for every effect: D15 is VIOLATED, the pod named (fixed in v1.38.0-beta.0's source)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aftershock.go import toolchain
from aftershock.runs import versions
from tests import shards

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster


def _verdicts(run: Path, scenario: str) -> str:
    """The scenario's verdicts, in whichever shard of the run it ran."""
    return "".join(p.read_text() for p in run.glob(f"*/{scenario}*/verdicts.txt"))


def test_d14_holds_and_d15_catches_the_eviction_of_a_pod_tolerating_every_effect(tmp_path):
    result = shards.run(["features/kubernetes/dra_device_taints.feature", "-p",
                         "no:cacheprovider", "--run-dir", str(tmp_path)], REPO, timeout=900)
    assert "D14: PASS: no claim was allocated a device with a taint it does not tolerate " \
           "(2 allocations)" in _verdicts(tmp_path, "test_a_device_tainted"), \
        result.stdout[-3000:]
    verdicts = _verdicts(tmp_path, "test_a_noexecute")
    assert "D15: PASS: each of 1 pods on a device tainted NoExecute was being deleted within " \
           "10s" in verdicts, verdicts
    assert "D15: PASS: pod/kept-noexecute never had metadata.deletionTimestamp" in verdicts
    ruled = _verdicts(tmp_path, "test_an_administrators_devicetaintrule")
    assert "D15: PASS: each of 1 pods on a device tainted NoExecute was being deleted within " \
           "10s" in ruled, ruled
    assert "D15: PASS: pod/kept-noexecute never had metadata.deletionTimestamp" in ruled
    extended = _verdicts(tmp_path, "test_a_pod_given_its_device")
    assert "D15: PASS: each of 1 pods on a device tainted NoExecute was being deleted within " \
           "10s" in extended, extended
    if toolchain.pinned_kubernetes() == "1.37.2":
        assert "D15: VIOLATED: pod/kept-any had metadata.deletionTimestamp exists" in verdicts
        assert result.returncode == 1, result.stdout[-3000:]


BUGGY = "1.37.0"  # kubernetes#141290: the eviction controller reads only a pod's spec for claims


def _d15(run: Path) -> tuple[str, str] | None:
    """The D15 judgement (status, summary) of the one scenario run in ``run``."""
    for path in run.glob("*/judgements.jsonl"):
        for record in map(json.loads, path.read_text().splitlines()):
            if record["ids"] == ["D15"]:
                return record["status"], record["summary"]
    return None


def test_1_37_0_keeps_a_pod_whose_device_came_through_an_extended_resource(tmp_path):
    """kubernetes#141290 where it is (1.37.0) and at its fix (1.37.2): a NoExecute taint on the
    device a pod got through an extended resource evicts it only at the fix."""
    fixed = toolchain.pinned_kubernetes()
    if toolchain.find(BUGGY) is None:
        pytest.skip(f"Kubernetes {BUGGY} is not built here: aftershock toolchain build "
                    f"--kubernetes-version {BUGGY}")
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run",
         "features/kubernetes/dra_device_taints.feature", "-k", "extended", "-p",
         "no:cacheprovider", "--kubernetes-version", f"{BUGGY},{fixed}", "--run-dir",
         str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=900)
    found = {version: _d15(versions.run_dir(tmp_path, version)) for version in (BUGGY, fixed)}
    status, summary = found[BUGGY]
    assert status == "violated", (found, result.stdout[-3000:])
    assert "/extended used device taint.example.com/" in summary and \
        "(taint example.com/unhealthy=true:NoExecute)" in summary, summary
    assert found[fixed][0] == "pass", found
    assert result.returncode == 1, result.stdout[-3000:]
