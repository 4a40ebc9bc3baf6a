"""The managed container engine (`aftershock engine up`), for real: Debian's dockerd starts a
privileged container on this machine (whose bounding set may lack a capability), and nothing is
left when it is stopped, or when it was killed and `cluster gc` comes after it.

It runs only when asked, for it changes the host: as root it installs Debian's docker.io (with
apt-get, when dockerd is missing), keeps the engine's state under /var/lib/aftershock/engine and
starts a root dockerd. Ask with AFTERSHOCK_TEST_ENGINE=1 (`make test-kind` does):

    AFTERSHOCK_TEST_ENGINE=1 .venv/bin/pytest tests/integration/test_managed_engine.py

Without it every test here is skipped, saying so (`pytest -ra` lists the reason)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from aftershock.containers import capless_runc
from aftershock.containers import managed as managed_engine
from aftershock.machine import processes
from aftershock.providers import clusters

ASKED = "AFTERSHOCK_TEST_ENGINE"
pytestmark = [
    pytest.mark.skipif(os.environ.get(ASKED) != "1",
                       reason=f"installs docker.io and starts a root dockerd: run only when "
                              f"asked ({ASKED}=1)"),
    pytest.mark.skipif(
        os.geteuid() != 0 or not (shutil.which("dockerd") or shutil.which("apt-get")),
        reason="the managed engine needs root and Debian's docker.io (or apt-get to install "
               "it)"),
]
FORWARDING = Path("/proc/sys/net/ipv4/ip_forward")
FORWARDING_BEFORE = FORWARDING.read_text() if FORWARDING.exists() else ""


@pytest.fixture()
def engine():
    if managed_engine.running():
        pytest.skip("a managed engine is running: this test would stop it")
    record = managed_engine.up()
    _docker(record, "image", "prune", "-f")  # what an earlier, killed test left untagged
    yield record
    if managed_engine.running():
        _docker(record, "rmi", "-f", "aftershock-test/sleep:1")
    managed_engine.down()


def _docker(record, *args: str, stdin: bytes | None = None) -> str:
    out = subprocess.run(["docker", *args], env={**os.environ, "DOCKER_HOST": record.server},
                         input=stdin, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout.decode().strip()


def _sleep_image(record, tmp_path: Path) -> str:
    """An image of this machine's /bin/sleep and its libraries: no registry needed."""
    root = tmp_path / "rootfs"
    listing = subprocess.run(["ldd", "/bin/sleep"], capture_output=True, text=True).stdout
    for library in [w for w in listing.split() if w.startswith("/")] + ["/bin/sleep"]:
        (root / library.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(library, root / library.lstrip("/"))
    archive = subprocess.run(["tar", "-C", str(root), "-c", "."], capture_output=True).stdout
    _docker(record, "import", "-", "aftershock-test/sleep:1", stdin=archive)
    return "aftershock-test/sleep:1"


def _left(record) -> list[str]:
    where = managed_engine.paths()
    roots = (str(where.exec_root), str(where.data))
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if line.split()[4].startswith(roots)]
    alive = [" ".join(cmd) for pid, cmd in managed_engine._processes()
             if any(root in " ".join(cmd) for root in roots) or (cmd[0] == "/bin/sleep"
             and cmd[1:] == ["4242"])]
    return mounts + alive


def test_a_privileged_container_runs_and_stopping_leaves_nothing(engine, tmp_path):
    image = _sleep_image(engine, tmp_path)
    _docker(engine, "run", "-d", "--privileged", "--name", "node", image, "/bin/sleep", "4242")
    assert _docker(engine, "inspect", "-f", "{{.State.Running}}", "node") == "true"
    # the host's network as it was: no docker0, no rule or chain of Docker's, no policy change
    assert not Path("/sys/class/net/docker0").exists()
    assert (FORWARDING.read_text() if FORWARDING.exists() else "") == FORWARDING_BEFORE
    if shutil.which("iptables"):
        rules = subprocess.run(["iptables", "-S"], capture_output=True, text=True).stdout
        assert "DOCKER" not in rules and "-P FORWARD DROP" not in rules, rules
    for unit in managed_engine.SERVICES if shutil.which("systemctl") else ():
        state = subprocess.run(["systemctl", "is-enabled", unit], capture_output=True,
                               text=True).stdout.strip()
        assert state != "enabled", f"{unit} left enabled"
    if capless_runc.missing(Path("/proc/self/status").read_text()):
        assert engine.processes["dockerd"].command.count(managed_engine.RUNTIME) == 1
    _docker(engine, "rm", "-f", "node")
    _docker(engine, "rmi", image)
    managed_engine.down()
    assert managed_engine.state() is None and _left(engine) == []


def test_a_killed_engine_is_cleaned_by_gc(engine, tmp_path):
    image = _sleep_image(engine, tmp_path)
    _docker(engine, "run", "-d", "--privileged", image, "/bin/sleep", "4242")
    os.killpg(engine.processes["dockerd"].pid, signal.SIGKILL)  # dockerd and its containerd
    processes.kill([engine.processes["dockerd"]])
    assert _left(engine), "the kill left nothing: this test would prove nothing"
    result = clusters.gc()
    assert "engine" in result.clusters
    assert managed_engine.state() is None and _left(engine) == []


def test_a_build_container_whose_builder_died_is_removed_by_gc(engine, tmp_path):
    from aftershock.containers.images.node import BUILD_PREFIX

    dead = next(pid for pid in range(4_194_000, 4_194_304) if not Path(f"/proc/{pid}").exists())
    image = _sleep_image(engine, tmp_path)
    _docker(engine, "run", "-d", "--name", f"{BUILD_PREFIX}{dead}", image, "/bin/sleep", "4242")
    _docker(engine, "run", "-d", "--name", f"{BUILD_PREFIX}{os.getpid()}", image, "/bin/sleep",
            "4242")  # its builder (this test) lives: kept
    result = clusters.gc()
    assert f"container {BUILD_PREFIX}{dead}" in result.leftovers
    names = _docker(engine, "ps", "-a", "--format", "{{.Names}}").split()
    assert names == [f"{BUILD_PREFIX}{os.getpid()}"]
    _docker(engine, "rm", "-f", names[0])
