"""A provider registered only in its own module: a project's conftest.py imports it, and
`aftershock run --cluster <its name>` opens its clusters. Nothing else in aftershock names it:
the pytest plugin, the cluster pool and the command line ask the provider registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.cluster

PROVIDER = '''"""The embedded cluster with one node, whatever the shape asks: a provider of
this project's own, registered here and nowhere else."""

from dataclasses import replace

from aftershock.providers.base import register
from aftershock.providers.local import LocalCluster, LocalProvider


@register("one-node", capabilities=LocalCluster.capabilities, builds_toolchain=True)
def open_cluster(request, shape):
    one = replace(shape, name="one-node", nodes=shape.nodes[:1])
    return LocalProvider(request.kubernetes_version).up(one, request.name)
'''

FEATURE = '''Feature: A cluster from a provider of the project's own

  Scenario: Its one node runs the Deployment
    Given a cluster with 1 nodes
    And a Deployment web with 2 replicas
    Then within 60 seconds 2 pods of web are Running
'''


def _aftershock(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aftershock.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_a_provider_registered_only_in_its_own_module_opens_the_runs_cluster(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "one_node.py").write_text(PROVIDER)
    (project / "conftest.py").write_text("import one_node  # noqa: F401  (registers it)\n")
    (project / "one.feature").write_text(FEATURE)
    result = _aftershock("run", str(project / "one.feature"), "--cluster", "one-node",
                         "--run-dir", str(tmp_path / "run"), "-p", "no:cacheprovider", cwd=REPO)
    assert "1 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]
    assert "shape one-node" in result.stdout + result.stderr


def test_without_its_module_the_name_is_one_line_naming_the_known_providers(tmp_path):
    (tmp_path / "one.feature").write_text(FEATURE)
    result = _aftershock("run", str(tmp_path / "one.feature"), "--cluster", "one-node",
                         "-p", "no:cacheprovider", cwd=REPO)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(  # pytest's "Exit: " before it
        "aftershock: error: --cluster one-node: no such provider; known: existing, kind, "
        "local"), lines


def test_a_typo_of_a_provider_names_the_closest(tmp_path):
    (tmp_path / "one.feature").write_text(FEATURE)
    result = _aftershock("run", str(tmp_path / "one.feature"), "--cluster", "lokal",
                         "-p", "no:cacheprovider", cwd=REPO)
    assert result.returncode == 2 and "(did you mean local?)" in result.stderr, result.stderr
