"""Device taints (features/kubernetes/dra_device_taints.feature) on the embedded cluster's own
scheduler and kube-controller-manager: a device tainted NoSchedule goes only to a claim that
tolerates it (D14); a NoExecute taint evicts the pod that does not tolerate it and keeps the one
whose toleration names NoExecute (D15). On 1.37.2 the eviction controller also evicts the pod
whose toleration has no effect, which the scheduler, and Kubernetes' device taints page, take
for every effect: D15 is VIOLATED, the pod named (fixed in v1.38.0-beta.0's source)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aftershock.go import toolchain

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster


def _verdicts(run: Path, scenario: str) -> str:
    return "".join(p.read_text() for p in run.glob(f"{scenario}*/verdicts.txt"))


def test_d14_holds_and_d15_catches_the_eviction_of_a_pod_tolerating_every_effect(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run",
         "features/kubernetes/dra_device_taints.feature", "-p", "no:cacheprovider",
         "--run-dir", str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=900)
    assert "D14: PASS: no claim was allocated a device with a taint it does not tolerate " \
           "(2 allocations)" in _verdicts(tmp_path, "test_a_device_tainted"), \
        result.stdout[-3000:]
    verdicts = _verdicts(tmp_path, "test_a_noexecute")
    assert "D15: PASS: each of 1 pods on a device tainted NoExecute was being deleted within " \
           "10s" in verdicts, verdicts
    assert "D15: PASS: pod/kept-noexecute never had metadata.deletionTimestamp" in verdicts
    if toolchain.pinned_kubernetes() == "1.37.2":
        assert "D15: VIOLATED: pod/kept-any had metadata.deletionTimestamp exists" in verdicts
        assert result.returncode == 1, result.stdout[-3000:]
