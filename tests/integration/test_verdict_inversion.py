"""@expect-violation inverts the verdict: a scenario expecting a violation that does not happen
fails, and says so. Unknown steps fail at collection with file:line (run as a user would)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    assert "never_more_than: PASS: at most 2 live pods of web at once (limit 2)" in result.stdout


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
    # Only set-up checks before it (no property label): nothing is hidden, so a skip.
    path.write_text(HALFWAY.replace(" (R5)", ""))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-rs", "--rootdir", str(tmp_path), str(path), "--profile",
                             str(profile), "--run-dir", str(tmp_path / "run2")],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "1 skipped" in result.stdout and "lacks capability 'load_image'" in result.stdout


UNKNOWN_PATH = """@concept:replica_group
Feature: a profile whose path the API does not know
  Scenario: the harness's own write fails
    Given the implementation under test is running
    And a replica group web with 3 replicas
    Then within 30 seconds the replica group web has 3 live pods (R5)
"""


def test_a_write_the_api_refuses_is_a_harness_error_never_a_violation(tmp_path):
    """replicas_path spec.replica (a typo): sent with fieldValidation=Strict the create is
    refused, and the scenario ends as a harness error, with R5 not judged (an error in the
    matrix, never a verdict). Without strict
    validation the field was pruned and R5 'violated' against a ReplicaSet never asked for 3."""
    import json

    from aftershock.bdd.reporting import HARNESS

    repo = Path(__file__).resolve().parents[2]
    profile = (repo / "profiles" / "kube-replicaset.yaml").read_text().replace(
        "replicas_path: spec.replicas", "replicas_path: spec.replica").replace(
        "manifest: ../implementations/kube/replicaset.yaml",
        f"manifest: {repo / 'implementations' / 'kube' / 'replicaset.yaml'}")
    (tmp_path / "typo.yaml").write_text(profile)
    path = tmp_path / "x.feature"
    path.write_text(UNKNOWN_PATH)
    run = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--rootdir", str(tmp_path), str(path), "--profile",
                             str(tmp_path / "typo.yaml"), "--run-dir", str(run)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "harness error: the API refused the create of replicaset/" in result.stdout
    assert 'unknown field "spec.replica"' in result.stdout, result.stdout[-2000:]
    assert "VIOLATED" not in result.stdout
    rows = [json.loads(line) for line in (run / "matrix.jsonl").read_text().splitlines()]
    # a harness error is no verdict: R5 is an error in the matrix, the cause kept with it
    assert rows[0]["outcomes"] == {"R5": "error"}, rows
    assert "harness error: the API refused the create of replicaset/" in rows[0]["error"]
    labels = [label for f in (run / "allure-results").glob("*-result.json")
              for label in json.loads(f.read_text()).get("labels", [])
              if label["name"] == "verdict"]
    assert labels == [{"name": "verdict", "value": HARNESS}], labels
