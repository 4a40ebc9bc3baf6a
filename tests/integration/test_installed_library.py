"""aftershock as a library in someone else's repository: the wheel, installed into a fresh
venv in an empty directory, installs nothing at top level but ``aftershock``; `aftershock init`
makes a project, a new step module is one file in its steps/, and a feature with a built-in
step and two of the project's own passes on the embedded cluster."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parents[2]
OWN_STEP = '''from aftershock.kube import api
from aftershock.scenario import Scenario, then


@then("the ConfigMap {name:Name} holds {key}={value}")
def config_map_holds(scenario: Scenario, name: str, key: str, value: str) -> None:
    found = api.core(scenario.api).read_namespaced_config_map(name, scenario.namespace)
    assert found.data == {key: value}, found.data
'''
FEATURE = """Feature: mine
  Scenario: a built-in step and the project's own
    Given a ConfigMap settings holding mode=strict
    And a Deployment web with 1 replicas
    Then within 60 seconds 1 pods of web are Running
    And the ConfigMap settings holds mode=strict
"""


def _run(*argv, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _source(into: Path) -> Path:
    """The checkout's files (tracked, or new and not ignored), copied: a build in the checkout
    itself would leave a build/ that a later wheel could take stale modules from."""
    listed = _run("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z",
                  cwd=REPO).stdout.split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def test_the_wheel_in_a_fresh_venv_runs_a_projects_own_steps(tmp_path):
    source = _source(tmp_path / "source")
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                 tmp_path / "dist", source, cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("aftershock-*.whl")
    home = tmp_path / "empty"
    home.mkdir()
    assert _run(sys.executable, "-m", "venv", "venv", cwd=home).returncode == 0
    python = home / "venv" / "bin" / "python"
    installed = _run(python, "-m", "pip", "install", "-q", "--no-compile", "-c",
                     REPO / "constraints.txt", wheel, cwd=home, timeout=900)
    assert installed.returncode == 0, installed.stderr[-3000:]
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=home).stdout.strip())
    assert not (site / "steps").exists() and not (site / "fixtures").exists(), \
        sorted(p.name for p in site.iterdir())

    aftershock = home / "venv" / "bin" / "aftershock"
    made = _run(aftershock, "init", "project", cwd=home)
    assert made.returncode == 0, made.stderr
    project = home / "project"
    # as its README says: aftershock first (here, from the wheel), then the project by version
    joined = _run(python, "-m", "pip", "install", "-e", ".", cwd=project, timeout=900)
    assert joined.returncode == 0, joined.stdout[-2000:] + joined.stderr[-2000:]
    assert "WARNING" not in joined.stdout + joined.stderr, joined.stdout + joined.stderr
    listed_only = _run(aftershock, "run", "features", "--collect-only", cwd=project)
    assert listed_only.returncode == 0, listed_only.stdout[-2000:] + listed_only.stderr
    assert "3 tests collected" in listed_only.stdout, listed_only.stdout
    assert not list((project / "reports").glob("run-*"))  # nothing ran: no report
    (project / "steps" / "checks.py").write_text(OWN_STEP)  # a new step module: one file
    (project / "features" / "mine.feature").write_text(FEATURE)
    listed = _run(aftershock, "steps", cwd=project)
    assert "Then the ConfigMap <name> holds <key>=<value>" in listed.stdout
    assert "this project (steps.checks)" in listed.stdout

    ran = _run(aftershock, "run", "features/mine.feature", "-p", "no:cacheprovider",
               cwd=project)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "1 passed" in ran.stdout
    assert "warning" not in ran.stdout.lower() + ran.stderr.lower(), ran.stdout[-3000:]
    judged = _run(aftershock, "run", "features/replica_group.feature", "--profile",
                  "profiles/kube-replicaset.yaml", "-p", "no:cacheprovider", cwd=project)
    assert judged.returncode == 0, judged.stdout[-3000:] + judged.stderr[-2000:]
    assert "2 passed" in judged.stdout and "warning" not in judged.stdout.lower()
    # a profile of the project's own that states only what differs from one the wheel ships
    (project / "profiles" / "mine.yaml").write_text(
        'extends: "{aftershock}/kube-replicaset.yaml"\nname: mine\n')
    loaded = _run(python, "-c", "from aftershock.profile.load import load_profile; "
                  "p = load_profile('profiles/mine.yaml'); print(p.name, p.dirs[-1], "
                  "p.resolve(p.concept('replica_group')['manifest']).is_file())",
                  cwd=project)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.split() == ["mine", str(site / "aftershock" / "profiles"), "True"], \
        loaded.stdout
