"""A feature and profiles in a folder of their own, outside any project: the profiles extend
the ones aftershock ships (``{aftershock}``, ``extends:``) and the feature's shape is a shipped
one; the run judges both and writes nothing into that folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster

FEATURE = '''@shape:three-small-nodes
Feature: A state reported once, from a folder of its own

  Scenario: Once ready, never busy again
    Given the implementation under test is running
    And I apply:
      """
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: job
        labels: {aftershock.io/status-writer: "yes"}
      """
    And within 10 seconds configmap/job matches:
      """
      data: {state: ready}
      """
    Then from now on configmap/job never has data.state == busy
    When 2 seconds pass
'''


def _profile(variant: str) -> str:
    return (f'extends: "{{aftershock}}/statuswriter-{variant}.yaml"\n'
            f"name: mine-{variant}\n"
            f'description: "the reference status writer ({variant}), named from elsewhere"\n')


def test_a_feature_and_profiles_elsewhere_extend_the_shipped_ones_and_write_nothing_there(
        tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "writer.feature").write_text(FEATURE)
    for variant in ("correct", "faulty"):
        (folder / f"{variant}.yaml").write_text(_profile(variant))
    before = sorted(p.name for p in folder.rglob("*"))
    run = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", str(folder / "writer.feature"),
         "--profile", str(folder / "correct.yaml"), "--profile", str(folder / "faulty.yaml"),
         "--run-dir", str(run)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert "1 failed, 1 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]
    for variant, status in (("correct", "PASS"), ("faulty", "VIOLATED")):
        (scenario,) = [d for d in run.iterdir()
                       if d.is_dir() and d.name.endswith(f"_{variant}_")]
        verdicts = (scenario / "verdicts.txt").read_text()
        assert f"never_has_from: {status}" in verdicts, verdicts
    assert "During handling" not in result.stdout  # the verdict alone, once
    assert sorted(p.name for p in folder.rglob("*")) == before  # nothing written there
