"""Two incidents of gangs whose pods share one ResourceClaim
(features/kubernetes/gang_shared_claim.feature), on kube-scheduler's own gangs:
kubernetes#137617 (1.35: such a gang is never bound, B6 VIOLATED) and kubernetes#140087 (1.36:
a pod reusing the claim's pending allocation is bound where the device is not, or alone, D1 or
B1 VIOLATED). On the default version, where both are fixed, the gang sharing a claim passes
B6, B1 and D1, as does one whose claim its PodGroup names (KEP-5729: reserved for the group),
and the gang held apart is never bound (B6 PASS too). The versions with
the bugs run when asked (AFTERSHOCK_TEST_GANG_INCIDENTS=1) on a machine that has built them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aftershock.go import toolchain

REPO = Path(__file__).resolve().parents[2]
FEATURE = "features/kubernetes/gang_shared_claim.feature"
PROFILES = {"1.35.8": "profiles/kube-scheduler-gang-1.35.yaml",
            "1.36.5": "profiles/kube-scheduler-gang-1.36.yaml"}
pytestmark = pytest.mark.cluster


def _run(run: Path, profile: str, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", FEATURE, "--profile", profile,
         "-p", "no:cacheprovider", "--run-dir", str(run), *arguments],
        capture_output=True, text=True, cwd=REPO, timeout=1800)


def _verdicts(run: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Scenario directory → (property id or check, status, summary) of each judgement."""
    found: dict[str, list[tuple[str, str, str]]] = {}
    for path in sorted(run.glob("*/judgements.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            found.setdefault(path.parent.name, []).extend(
                (pid, record["status"], record["summary"]) for pid in record["ids"])
    return found


def _one(verdicts: dict, words: str) -> list[tuple[str, str, str]]:
    [found] = [v for name, v in verdicts.items() if words in name]
    return found


def test_the_default_version_binds_sharing_gangs_whole_and_a_split_one_not_at_all(tmp_path):
    result = _run(tmp_path, "profiles/kube-scheduler-gang.yaml")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    verdicts = _verdicts(tmp_path)
    together = _one(verdicts, "two_pods_of_a_gang")
    assert sorted((pid, status) for pid, status, _ in together) == \
        [("B1", "pass"), ("B6", "pass"), ("D1", "pass")], together
    reserved = _one(verdicts, "reserved_for_its_pod_group")  # KEP-5729, for the group
    assert sorted((pid, status) for pid, status, _ in reserved) == \
        [("B1", "pass"), ("B6", "pass"), ("D1", "pass")], reserved
    apart = _one(verdicts, "held_to_different_nodes")
    assert sorted((pid, status) for pid, status, _ in apart) == \
        [("B6", "pass"), ("never_has_from", "pass"), ("never_has_from", "pass")], apart


@pytest.mark.skipif(os.environ.get("AFTERSHOCK_TEST_GANG_INCIDENTS") != "1",
                    reason="about 3 minutes: AFTERSHOCK_TEST_GANG_INCIDENTS=1 runs it")
@pytest.mark.parametrize("version", sorted(PROFILES))
def test_the_versions_with_the_bugs_are_caught(tmp_path, version):
    if toolchain.find(version) is None:
        pytest.skip(f"Kubernetes {version} is not built here: aftershock toolchain build "
                    f"--kubernetes-version {version}")
    result = _run(tmp_path, PROFILES[version], "--kubernetes-version", version)
    assert result.returncode == 1, result.stdout[-3000:]  # a property was violated
    verdicts = _verdicts(tmp_path)
    if version == "1.35.8":  # kubernetes#137617: never bound, though a node had room
        [(_, status, summary)] = [v for v in _one(verdicts, "two_pods_of_a_gang") if v[0] == "B6"]
        assert status == "violated" and "while the nodes had room" in summary, summary
    else:  # kubernetes#140087: a pod bound though its claim's device is on another node
        caught = [v for v in _one(verdicts, "held_to_different_nodes")
                  if v[0] == "never_has_from" and v[1] == "violated"]
        assert caught, verdicts
