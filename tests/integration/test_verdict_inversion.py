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
