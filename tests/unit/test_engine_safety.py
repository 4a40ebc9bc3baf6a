"""The managed engine must not endanger the host: what the root daemon runs is root's alone,
its packages leave no system service started or enabled, and it never starts beside another
engine."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.providers import capless_runc, managed_engine


def test_a_user_writable_path_is_not_root_owned(tmp_path):
    target = tmp_path / "python3"
    target.write_text("")
    assert not managed_engine.root_owned(target)


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no system python3")
def test_the_runtime_runs_the_systems_python_never_the_one_that_launched_it():
    """It used to run under sys.executable: a user's virtualenv, whose interpreter anyone
    owning it could replace, run as root by dockerd."""
    chosen = managed_engine.root_python()
    assert managed_engine.root_owned(chosen)
    assert Path(sys.executable) != chosen or managed_engine.root_owned(Path(sys.executable))


def test_the_runtime_takes_its_runc_from_no_environment_variable(monkeypatch):
    monkeypatch.setenv("AFTERSHOCK_RUNC", "/tmp/evil")
    execs = []
    monkeypatch.setattr(capless_runc.os, "execvp", lambda path, argv: execs.append(path))
    monkeypatch.setattr(capless_runc, "missing", lambda status: set())
    monkeypatch.setattr(capless_runc.sys, "argv", ["runtime", "--version"])
    capless_runc.main()
    assert execs == [capless_runc.RUNC]


def test_no_service_starts_while_the_packages_install(tmp_path, monkeypatch):
    policy = tmp_path / "policy-rc.d"
    monkeypatch.setattr(managed_engine, "POLICY", policy)
    with managed_engine.services_held():
        assert policy.read_text().rstrip().endswith("exit 101")
        assert os.access(policy, os.X_OK)
    assert not policy.exists(), "the host had none: none is left"
    policy.write_text("#!/bin/sh\nexit 0\n")
    with managed_engine.services_held():
        pass
    assert policy.read_text() == "#!/bin/sh\nexit 0\n", "the host's own is left as it was"


def test_the_installed_services_are_disabled_and_stopped(monkeypatch):
    ran = []
    monkeypatch.setattr(managed_engine.shutil, "which", lambda name: "/bin/systemctl")
    monkeypatch.setattr(managed_engine.subprocess, "run",
                        lambda command, **_: ran.append(command))
    managed_engine.disable_services()
    assert [c[-1] for c in ran] == list(managed_engine.SERVICES)
    assert all(c[1:4] == ["disable", "--now", "--quiet"] for c in ran)


def test_the_managed_engine_refuses_to_start_beside_another(monkeypatch):
    def never(*_args, **_kwargs):
        raise AssertionError("it went on to install or start an engine")
    monkeypatch.setattr(managed_engine, "install", never)  # whatever the code does, not here
    monkeypatch.setattr(managed_engine.procs, "spawn", never)
    monkeypatch.setattr(managed_engine, "running", lambda: None)
    monkeypatch.setattr(managed_engine.os, "geteuid", lambda: 0)
    monkeypatch.setattr(managed_engine, "_processes",
                        lambda: [(4242, ["/usr/bin/dockerd", "-H", "fd://"])])
    with pytest.raises(UserError, match=r"dockerd pid 4242.*--engine=existing"):
        managed_engine.up()
    ours = str(managed_engine.paths().root)
    monkeypatch.setattr(managed_engine, "_processes", lambda: [
        (7, ["containerd", "--root", f"{ours}/exec/containerd"])])
    assert managed_engine.other_engine() == ""
