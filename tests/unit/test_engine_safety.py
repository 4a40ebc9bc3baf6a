"""The managed engine must not endanger the host: what the root daemon runs is root's alone,
its packages leave no system service started or enabled, and it never starts beside another
engine."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from aftershock.containers import capless_runc
from aftershock.containers import managed as managed_engine
from aftershock.errors import UserError


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


def test_the_engines_state_is_never_under_a_users_cache(tmp_path, monkeypatch):
    """What the root daemon runs and keeps (its runtime, data root, socket, log) lived under
    the user's cache (AFTERSHOCK_CACHE, XDG_CACHE_HOME or ~/.cache): whoever controls that
    path planted what root executes."""
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    where = managed_engine.paths()
    kept = {"root": where.root, "data root": where.data, "socket": where.socket,
            "runtime": where.runtime, "log": where.log}
    under = {what: str(path) for what, path in kept.items() if path.is_relative_to(tmp_path)}
    assert under == {}, f"the engine's state follows the user's cache: {under}"


def _refused(action, *args) -> Exception | None:
    try:
        action(*args)
    except Exception as exc:
        return exc
    return None


def test_root_starts_nothing_with_its_state_in_a_directory_anyone_may_write(tmp_path,
                                                                            monkeypatch):
    opened = tmp_path / "open"
    opened.mkdir()
    opened.chmod(0o777)  # anyone may plant a runtime, a data root, a socket here
    monkeypatch.setattr(managed_engine, "ENGINE_ROOT", opened / "engine", raising=False)
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(opened))  # where it used to live

    def never(what: str):
        def went_on(*_args, **_kwargs):
            raise AssertionError(f"root went on to {what} with the engine's state under "
                                 f"{opened}, a directory anyone may write")
        return went_on
    monkeypatch.setattr(managed_engine, "install", never("install docker.io"))
    monkeypatch.setattr(managed_engine, "write_runtime", lambda where: None)
    monkeypatch.setattr(managed_engine.procs, "spawn", never("start dockerd"))
    monkeypatch.setattr(managed_engine, "running", lambda: None)
    monkeypatch.setattr(managed_engine.os, "geteuid", lambda: 0)
    monkeypatch.setattr(managed_engine, "_processes", lambda: [])
    refusal = _refused(managed_engine.up)
    assert isinstance(refusal, UserError) and str(opened) in str(refusal) \
        and "\n" not in str(refusal), f"not refused in one line naming {opened}: {refusal!r}"
    assert not (opened / "engine").exists(), "it made its state there before refusing"


def test_what_root_runs_comes_from_the_systems_path_and_is_roots_alone(tmp_path,
                                                                       monkeypatch):
    """dockerd, docker and runc are found on the system's PATH (never the user's), and each
    with every directory above it must be root's alone."""
    root_program = getattr(managed_engine, "root_program", None)
    assert callable(root_program), "nothing checks the programs root runs"
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "sh").write_text("#!/bin/sh\n")
    (tmp_path / "sh").chmod(0o755)
    assert not Path(root_program("sh")).is_relative_to(tmp_path), "taken from the user's PATH"
    opened = tmp_path / "open"
    opened.mkdir()
    opened.chmod(0o777)
    (opened / "dockerd").write_text("#!/bin/sh\n")
    (opened / "dockerd").chmod(0o755)
    monkeypatch.setattr(managed_engine, "SYSTEM_PATH", str(opened))
    with pytest.raises(UserError, match=re.escape(f"{opened} may be written by group or others")
                       if os.geteuid() == 0 else re.escape(f"{opened}/dockerd belongs to")):
        root_program("dockerd")


ENGINE_TEST = Path(__file__).resolve().parents[1] / "integration" / "test_managed_engine.py"


def _engine_test_skipped() -> list[str]:
    """Why tests/integration/test_managed_engine.py skips, read as pytest would (its marks are
    decided when it is imported; here into a module of its own, leaving pytest's copy as it
    was): the reasons of its skipif marks that hold."""
    spec = importlib.util.spec_from_file_location("engine_test_as_imported", ENGINE_TEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    marks = module.pytestmark if isinstance(module.pytestmark, list) else [module.pytestmark]
    return [mark.kwargs.get("reason", "") for mark in marks
            if mark.name == "skipif" and mark.args and mark.args[0]]


def test_the_engine_install_test_runs_only_when_asked(monkeypatch):
    """As root it installs docker.io and starts a root dockerd: a plain `pytest` as root did."""
    monkeypatch.delenv("AFTERSHOCK_TEST_ENGINE", raising=False)
    assert _engine_test_skipped(), "the managed-engine test runs unasked (it installs " \
        "docker.io and starts a root dockerd)"
    monkeypatch.setenv("AFTERSHOCK_TEST_ENGINE", "1")
    assert not any("when asked" in reason for reason in _engine_test_skipped())
