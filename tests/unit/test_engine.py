"""Whether a container engine answers, in the same words for doctor and --cluster=kind."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aftershock.cli import doctor
from aftershock.containers import engine
from aftershock.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def _client(directory, name, code):
    directory.mkdir(exist_ok=True)
    script = directory / name
    script.write_text(f"#!/bin/sh\necho 'Cannot connect to the daemon' >&2\nexit {code}\n")
    script.chmod(0o755)
    return directory


def test_an_engine_that_answers_is_used(tmp_path):
    path = _client(tmp_path / "bin", "podman", 0)
    assert engine.ask(str(path)) == engine.EngineAnswer(engine="podman")
    assert engine.require(str(path)) == "podman"


def test_a_client_without_an_engine_is_named(tmp_path):
    path = _client(tmp_path / "bin", "docker", 1)
    answer = engine.ask(str(path))
    assert not answer.ok
    assert answer.problem == ("docker client found but no engine answers: start one with "
                              "`aftershock engine up`, or use --cluster=local")


def test_no_client_at_all(tmp_path):
    with pytest.raises(UserError) as caught:
        engine.require(str(tmp_path))
    assert str(caught.value) == (
        "--cluster=kind needs a container engine: no container engine (docker, podman, "
        "nerdctl) on PATH: start one with `aftershock engine up`, or use --cluster=local")


def test_doctor_reports_the_engine_in_the_same_words(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_client(tmp_path / "bin", "docker", 1)))
    check = doctor.container_engine()
    assert not check.ok and not check.required
    assert check.detail == engine.ask().problem


def _run(*args, path):
    env = {**os.environ, "PATH": str(path)}
    return subprocess.run([sys.executable, "-m", "aftershock.cli", "run", *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=REPO)


@pytest.mark.parametrize("option", [["--cluster=kind"], ["--cluster", "kind"]])
def test_run_on_kind_without_an_engine_exits_2_with_one_line(tmp_path, option):
    result = _run(*option, "features/harness", path=_client(tmp_path / "bin", "docker", 1))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "aftershock: error: --cluster=kind needs a container engine: docker client found but "
        "no engine answers: start one with `aftershock engine up`, or use --cluster=local"]
    assert result.stdout == ""


def test_pytest_on_kind_without_an_engine_exits_2_before_collecting(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "pytest", "--cluster=kind", "-p",
                             "no:cacheprovider", "features/harness"], capture_output=True,
                            text=True, timeout=120, env=env, cwd=REPO)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--cluster=local" in lines[0], result.stderr
    assert "collected" not in result.stdout
