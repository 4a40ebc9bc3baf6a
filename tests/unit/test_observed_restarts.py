"""A kill anchored on a write the implementation makes while it is still starting: its start
fails by the kill's doing, and the restart the kill asks for follows, never alongside it. (An
explore run on noderecords died on this: the first start saw its process killed and raised.)"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from aftershock.sut.observed import Observed


class Starting(Observed):
    """A form whose start writes, and whose k-th write is the anchor: the proxy's thread
    fires the kill while restart() is still waiting for readiness."""

    def __init__(self, workdir: Path, kill_during_start: bool):
        super().__init__([], workdir)
        self.kill_during_start = kill_during_start
        self.events: list[str] = []
        self.running = 0

    def restart(self) -> None:
        self.running += 1
        self.events.append("start")
        if self.kill_during_start:
            proxy = threading.Thread(target=self._crash)  # the proxy's own thread
            proxy.start()
            proxy.join()
            self.events.append("start saw its process exit")
            self.running -= 1
            raise RuntimeError("implementation exited with -9")
        self.running -= 1

    def crash(self) -> None:
        self.events.append("kill")

    def start_again(self) -> None:
        assert self.running == 0, "two starts at once"
        self.events.append("start again")

    def go_back(self) -> None:
        self.events.append("stop")


def test_a_kill_during_the_start_is_the_kills_doing(tmp_path: Path) -> None:
    form = Starting(tmp_path, kill_during_start=True)
    form._restart_through_proxy()
    form.revert()
    assert form.events == ["start", "kill", "start saw its process exit", "start again", "stop"]
    assert not form.crash_errors


def test_a_start_that_fails_on_its_own_still_fails(tmp_path: Path) -> None:
    class Broken(Starting):
        def restart(self) -> None:
            raise RuntimeError("implementation exited with 1: no such flag")

    with pytest.raises(RuntimeError, match="no such flag"):
        Broken(tmp_path, kill_during_start=False)._restart_through_proxy()


def test_the_sidecars_log_marks_a_firing_and_a_kill_restarts_the_implementation(
        tmp_path: Path) -> None:
    """In the cluster the proxy is a sidecar: its log, followed line by line, is the proxy log,
    a firing is marked with how long it lasts, and a kill (the sidecar has severed the
    implementation) has the harness replace its pod."""
    from types import SimpleNamespace

    from aftershock.sut.observed import ObservedInCluster

    fired: list[tuple[str, float]] = []
    implementation = SimpleNamespace(profile=SimpleNamespace(name="op"))
    observed = ObservedInCluster(implementation, [], tmp_path,
                                 lambda what, lasts: fired.append((what, lasts)))
    tmp_path.mkdir(exist_ok=True)
    crashed, restarted = threading.Event(), threading.Event()
    observed.crash = crashed.set
    observed.start_again = restarted.set
    observed._read(b'{"mono": 1.0, "event": "request", "method": "GET"}')
    observed._read(b'{"mono": 2.0, "event": "anchor-fired", "fault": "stall at the 3rd ADDED '
                   b'pods event for 4s", "lasts": 4.0}')
    observed._read(b"not json: a line of the proxy's own")
    assert fired == [("stall at the 3rd ADDED pods event for 4s", 4.0)] and not crashed.is_set()
    observed._read(b'{"mono": 3.0, "event": "anchor-fired", "fault": "kill after the 2nd pods '
                   b'create", "lasts": 0, "kill": true}')
    assert crashed.is_set() and restarted.wait(5)
    assert fired[-1] == ("kill after the 2nd pods create", 0.0)
    assert observed.log.read_text().count("\n") == 4  # every line, as the sidecar wrote it


def test_the_kubeconfig_an_implementation_is_handed_is_absolute(tmp_path, monkeypatch):
    """explore with a relative --out (or its default, reports/explore-<time>): a third-party
    implementation starts in its profile's folder and was handed
    'reports/.../observed/kubeconfig', a path that names no file there ("stat ...: no such file
    or directory")."""
    monkeypatch.chdir(tmp_path)
    observed = Starting(Path("reports") / "run" / "observed", kill_during_start=False)
    assert observed.workdir.is_absolute()
    assert observed.workdir == tmp_path / "reports" / "run" / "observed"
