"""@expect-violation inverts the verdict: a scenario expecting a violation that does not happen
fails, and says so. Unknown steps fail at collection with file:line (run as a user would)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.cluster

HOLDS = """Feature: inversion
  @expect-violation:never_more_than
  Scenario: the property holds, so the expectation fails
    Given a Deployment web with 2 replicas
    And within 60 seconds 2 pods of web are Running
    Then at no point did web have more than 2 live pods
"""

TYPO = """Feature: typo
  Scenario: a typo
    Given a Deployment web with 2 replicas
    Then whithin 60 seconds 2 pods of web are Running
"""


def _pytest(tmp_path, feature: str):
    path = tmp_path / "x.feature"
    path.write_text(feature)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(path)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)


def test_an_expected_violation_that_does_not_happen_fails_the_scenario(tmp_path):
    result = _pytest(tmp_path, HOLDS)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "expected a violation of never_more_than, but it held" in result.stdout


def test_an_unknown_step_fails_collection_with_file_line_and_closest_step(tmp_path):
    result = _pytest(tmp_path, TYPO)
    assert result.returncode == 2, result.stdout[-3000:]
    assert "x.feature:4: unknown step 'Then whithin 60 seconds 2 pods of web are Running'" \
        in result.stdout
    assert "closest known steps: 'within <seconds> seconds <condition>'" in result.stdout
    assert "Traceback" not in result.stdout


HALFWAY = """Feature: a capability found missing halfway
  Scenario: a judged property, then a step the cluster cannot do
    Given a Deployment web with 1 replicas
    Then within 60 seconds 1 pods of web are Running (R5)
    Given the implementation under test is running
"""
IN_CLUSTER_ONLY = """name: in-cluster-only
install_in_cluster:
  image: acme/demo:dev
  manifests: [deploy.yaml]
  deployment: demo
concepts: {}
"""


def test_a_capability_missing_halfway_fails_and_keeps_what_was_judged(tmp_path):
    """It used to be a skip, which hid the verdicts already judged (and the matrix said
    'skipped'). The local provider cannot load an image, which this profile needs."""
    import json

    profile = tmp_path / "in-cluster-only.yaml"
    profile.write_text(IN_CLUSTER_ONLY)
    (tmp_path / "deploy.yaml").write_text("{}\n")
    path = tmp_path / "x.feature"
    path.write_text(HALFWAY)
    run = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--rootdir", str(tmp_path), str(path), "--profile", str(profile),
                             "--run-dir", str(run)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "lacks capability 'load_image'" in result.stdout
    assert "found missing after these were judged:" in result.stdout
    assert "R5: PASS" in result.stdout
    rows = [json.loads(line) for line in (run / "matrix.jsonl").read_text().splitlines()]
    assert rows and rows[0]["outcomes"] == {"R5": "pass"}, rows
