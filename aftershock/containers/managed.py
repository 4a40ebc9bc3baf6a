"""A container engine aftershock starts where none runs: Debian's docker.io, its daemon with its
own data root and socket, recorded like a cluster (name ``engine``, provider ``engine``) so that
`aftershock cluster list` shows it and `cluster gc` cleans up after it if it died.

What the root daemon runs and keeps is root's alone: its state (data root, socket, log, the
runtime script) lives under ENGINE_ROOT, never a user's cache, and before root starts anything
every file it runs (dockerd, docker, runc, the runtime and its python) and every directory from
/ down to each, and to the state, must belong to root with no write for group or others
(``roots_alone``); the daemon finds its helpers (containerd, runc) on the system's PATH only.

It stays up between runs (images cached in its data root) until `aftershock engine down`.
Where the host's capability bounding set lacks a capability, the daemon's default runtime is
`capless_runc` (runc minus that capability), so that privileged containers (kind nodes) start.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from aftershock.containers import capless_runc
from aftershock.containers import engine as engines
from aftershock.containers.images.docker import Docker
from aftershock.containers.images.node import remove_stale_builds as remove
from aftershock.errors import ClusterError, UserError
from aftershock.machine import processes as procs

NAME = "engine"
RUNTIME = "aftershock-runc"
PACKAGES = ("docker.io",)
UP_TIMEOUT = 60.0
# The host's network configuration is left as it was: no docker0 bridge (one a host's own
# Docker or libvirt may hold), no iptables rules or FORWARD policy, no sysctl.
OWN_NETWORK_ONLY = ("--bridge=none", "--iptables=false", "--ip6tables=false",
                    "--ip-forward=false", "--ip-masq=false")
STOP_GRACE = 30.0
# root's own: what root runs and keeps must be nothing a user could replace
ENGINE_ROOT = Path("/var/lib/aftershock/engine")
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class EnginePaths:
    root: Path

    @property
    def exec_root(self) -> Path:
        """Short (containerd's socket paths live under it), one per engine root."""
        return Path("/run") / f"aftershock-engine-{hashlib.sha1(bytes(self.root)).hexdigest()[:8]}"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket(self) -> Path:
        return self.root / "docker.sock"

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"

    @property
    def log(self) -> Path:
        return self.root / "dockerd.log"

    @property
    def runtime(self) -> Path:
        return self.root / "bin" / RUNTIME


def paths() -> EnginePaths:
    return EnginePaths(ENGINE_ROOT)


def _say(message: str) -> None:
    print(f"aftershock: {message}", file=sys.stderr, flush=True)


def state() -> procs.ClusterState | None:
    """The managed engine's record, if there is one."""
    workdir = procs.clusters_root() / NAME
    try:
        return procs.ClusterState.load(workdir)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def running() -> procs.ClusterState | None:
    record = state()
    daemon = record.processes.get("dockerd") if record else None
    return record if daemon and daemon.alive() else None


@procs.sweep
def remove_stale_builds() -> list[str]:
    """Node-image build containers a killed build left in the managed engine (`cluster gc`)."""
    record = running()
    if record is None:
        return []
    with contextlib.suppress(OSError, subprocess.SubprocessError, UserError):  # engine away
        return [f"container {name}" for name in remove(Docker(host=record.server))]
    return []


def use_if_running() -> None:
    """Point this process's docker clients (kind, docker) at the managed engine when it runs and
    the user named no other (DOCKER_HOST)."""
    record = running()
    if record and not os.environ.get("DOCKER_HOST"):
        os.environ["DOCKER_HOST"] = record.server


engines.BEFORE_ASK.append(use_if_running)


def install() -> None:
    """Debian's docker.io, when dockerd is missing (as root; refreshing the package lists once
    if the first attempt finds nothing to install)."""
    if shutil.which("dockerd", path=SYSTEM_PATH):
        return
    if os.geteuid() != 0:
        raise UserError("the managed engine needs Debian's docker.io and root to install it: "
                        "run `sudo apt-get install docker.io`, or start one and use "
                        "`aftershock engine up --engine=existing`")
    apt = shutil.which("apt-get", path=SYSTEM_PATH)
    if not apt:
        raise UserError("no dockerd and no apt-get to install docker.io: install a container "
                        "engine and use `aftershock engine up --engine=existing`")
    require_roots_alone(Path(apt), "apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "PATH": SYSTEM_PATH}
    command = [apt, "install", "-y", "-q", "--no-install-recommends", *PACKAGES]
    _say(f"installing {', '.join(PACKAGES)} from Debian (apt-get), its system services "
         "neither started nor enabled")
    with services_held():
        if subprocess.run(command, env=env).returncode != 0:
            _say("refreshing the package lists (apt-get update)")
            subprocess.run([apt, "update", "-q"], env=env, check=False)
            _apt_retry(command, env)
        disable_services()


SERVICES = ("docker.service", "docker.socket", "containerd.service")
POLICY = Path("/usr/sbin/policy-rc.d")


@contextlib.contextmanager
def services_held():
    """While packages install, Debian's invoke-rc.d starts no service (a policy-rc.d that
    answers 101, put there only if the host has none, and removed after)."""
    ours = not POLICY.exists()
    if ours:
        POLICY.write_text("#!/bin/sh\n# aftershock: no service starts while it installs\n"
                          "exit 101\n")
        POLICY.chmod(0o755)
    try:
        yield
    finally:
        if ours:
            POLICY.unlink(missing_ok=True)


def disable_services() -> None:
    """The packages aftershock installed enable their services for the next boot: undone, so
    nothing system-wide is left enabled or running (the managed engine is its own daemon)."""
    systemctl = shutil.which("systemctl")
    if not systemctl:
        return
    for unit in SERVICES:
        subprocess.run([systemctl, "disable", "--now", "--quiet", unit],
                       capture_output=True, check=False)


def _apt_retry(command: list[str], env: dict[str, str]) -> None:
    if subprocess.run(command, env=env).returncode != 0:
        raise UserError(f"could not install {', '.join(PACKAGES)} with apt-get (its output "
                        "is above)")


def write_runtime(where: EnginePaths) -> Path | None:
    """The capability-stripping runtime, if this machine needs one (else None: plain runc)."""
    if not capless_runc.missing(Path("/proc/self/status").read_text()):
        return None
    runc = root_program("runc")
    source = Path(capless_runc.__file__).read_text()
    source = source.replace('RUNC = "runc"', f"RUNC = {runc!r}", 1)
    make_roots_own(where.runtime.parent)
    where.runtime.unlink(missing_ok=True)  # written afresh, never through what was there
    descriptor = os.open(where.runtime, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
    with os.fdopen(descriptor, "w") as out:
        out.write(f"#!{root_python()} -SI\n{source}")
    require_roots_alone(where.runtime, "the runtime the engine runs")
    return where.runtime


def roots_alone(path: Path) -> str | None:
    """Why ``path`` is not root's alone, or None when it is: the nearest of it and the
    directories above it (as named, then as its links resolve) that belongs to another user or
    that group or others may write. What root runs must be nothing a user could replace."""
    real = path.resolve()
    for part in [path, *path.parents, real, *real.parents]:
        try:
            info = part.stat()
        except OSError as exc:
            return f"{part} cannot be read ({exc.strerror})"
        if info.st_uid != 0:
            return f"{part} belongs to uid {info.st_uid}"
        if info.st_mode & 0o022:
            return f"{part} may be written by group or others (mode {info.st_mode & 0o7777:o})"
    return None


def root_owned(path: Path) -> bool:
    """Whether ``path`` and every directory above it belong to root and only root may write
    them."""
    return roots_alone(path) is None


def require_roots_alone(path: Path, what: str) -> None:
    """One line, and nothing started, when ``path`` is not root's alone."""
    why = roots_alone(path)
    if why:
        raise UserError(f"the managed engine runs as root and will not use {what} ({path}): "
                        f"{why}; only root may own and write it and every directory above it")


def make_roots_own(path: Path) -> None:
    """``path`` and the directories above it, made (mode 0700, root's) where missing, each
    under a parent that is root's alone; a UserError naming the first that is not."""
    missing = [part for part in [path, *path.parents] if not part.exists()]
    for part in reversed(missing):
        require_roots_alone(part.parent, "the managed engine's state")
        with contextlib.suppress(FileExistsError):
            part.mkdir(mode=0o700)
    require_roots_alone(path, "the managed engine's state")


def root_program(name: str) -> str:
    """The system's ``name`` (on SYSTEM_PATH, never a user's PATH), root's alone."""
    found = shutil.which(name, path=SYSTEM_PATH)
    if not found:
        raise UserError(f"the managed engine needs {name}, and there is none in {SYSTEM_PATH}")
    require_roots_alone(Path(found), name)
    return str(Path(found).resolve())


def root_python() -> Path:
    """The interpreter of the runtime the root daemon runs: the system's, fixed at install and
    root's alone (never the one that launched `engine up`, often a user's virtualenv)."""
    for candidate in (Path("/usr/bin/python3"), Path("/usr/local/bin/python3")):
        if candidate.exists() and root_owned(candidate.resolve()):
            return candidate.resolve()
    raise UserError("the managed engine's runtime needs a python3 that only root can replace "
                    "(/usr/bin/python3): install Debian's python3, or use "
                    "`aftershock engine up --engine=existing`")


def daemon_command(where: EnginePaths, runtime: Path | None, dockerd: str) -> list[str]:
    command = [dockerd, "--data-root", str(where.data),
               "--exec-root", str(where.exec_root), "--pidfile",
               str(where.exec_root / "dockerd.pid"),
               "-H", where.host, "--log-level", "warn", *OWN_NETWORK_ONLY]
    if runtime:
        command += ["--add-runtime", f"{RUNTIME}={runtime}", "--default-runtime", RUNTIME]
    return command


def _answers(where: EnginePaths, docker: str) -> bool:
    try:
        info = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"],
                              env={**os.environ, "DOCKER_HOST": where.host}, capture_output=True,
                              text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return info.returncode == 0


def up() -> procs.ClusterState:
    """Install if need be and start the managed engine; the running one if it is up."""
    record = running()
    if record:
        return record
    if os.geteuid() != 0:
        raise UserError("the managed engine runs as root (dockerd); use "
                        "`aftershock engine up --engine=existing` with an engine you run")
    other = other_engine()
    if other:
        raise UserError(f"a container engine is already running here ({other}): the managed "
                        "engine would fight it for its network; use it with "
                        "`aftershock engine up --engine=existing`")
    where = paths()
    make_roots_own(where.root)  # before root installs, writes, reads or runs anything
    install()
    stale = state()
    if stale:  # its daemon died: clean what it left before starting again
        procs.remove_cluster(stale)
    stale = stale or _unclean(where)
    runtime = write_runtime(where)
    dockerd, docker = root_program("dockerd"), root_program("docker")
    workdir = procs.clusters_root() / NAME
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = procs.ClusterState(name=NAME, provider=NAME, owner_pid=None, owner_start=None,
                                created=time.time(), workdir=str(workdir), engine="docker",
                                server=where.host)
    _say(f"starting dockerd (data root {where.data}, socket {where.socket})")
    proc, daemon = procs.spawn("dockerd", daemon_command(where, runtime, dockerd), where.log,
                               env={"PATH": SYSTEM_PATH})  # its containerd and runc: root's
    record.processes["dockerd"] = daemon
    record.save()
    deadline = time.monotonic() + UP_TIMEOUT
    while not (where.socket.exists() and _answers(where, docker)):
        if proc.poll() is not None or time.monotonic() > deadline:
            procs.remove_cluster(record)
            raise ClusterError(f"dockerd did not answer within {UP_TIMEOUT:g}s; the end of "
                               f"{where.log}:\n{_tail(where.log)}")
        time.sleep(0.2)  # a daemon's readiness has no event to wait on
    if stale:  # the containers of a daemon that died are dead too: only their records remain
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([docker, "container", "prune", "-f"], capture_output=True,
                           timeout=120, env={**os.environ, "DOCKER_HOST": where.host})
    return record


def _unclean(where: EnginePaths) -> bool:
    """Whether the data root holds containers from a daemon that did not stop cleanly (its
    record already removed by `cluster gc`)."""
    containers = where.data / "containers"
    return containers.is_dir() and any(containers.iterdir())


def down() -> bool:
    """Remove the managed engine's containers and stop its daemon (the data root, with its
    images, stays for the next `engine up`). Whether there was one."""
    record = state()
    if record is None:
        return False
    if running():
        remove_containers(record.server)
    procs.remove_cluster(record)
    return True


def remove_containers(host: str) -> None:
    """Every container of the engine (a daemon that does not answer: its stop ends them)."""
    env = {**os.environ, "DOCKER_HOST": host}
    docker = shutil.which("docker", path=SYSTEM_PATH) or "docker"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        listing = subprocess.run([docker, "ps", "-aq"], env=env, capture_output=True,
                                 text=True, timeout=30)
        ids = listing.stdout.split()
        if ids:
            subprocess.run([docker, "rm", "-f", "-v", *ids], env=env, capture_output=True,
                           timeout=120)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@procs.teardown("engine")
def stop(record: procs.ClusterState) -> None:
    """End the daemon (it stops its containers and containerd), then whatever a daemon that
    died left: shims and containers still running under our exec root."""
    procs.terminate(list(record.processes.values()), grace=STOP_GRACE)
    # its own root (from its socket: an engine started before ENGINE_ROOT kept it in a cache),
    # when that is root's alone: a record names it, and anyone who could write the record
    # would choose what root unmounts
    recorded = Path(record.server.removeprefix("unix://")).parent if record.server else None
    where = EnginePaths(recorded) if recorded and root_owned(recorded) else paths()
    leftover_containers(where.exec_root)
    leftover_mounts((where.exec_root, where.data))
    shutil.rmtree(where.exec_root, ignore_errors=True)  # its sockets and pid file: stale now


def leftover_containers(exec_root: Path) -> None:
    """Containers of our engine whose daemon is gone: killed and deleted through runc's state
    under our exec root, then the shims that watched them."""
    runc = shutil.which("runc", path=SYSTEM_PATH)
    for root in exec_root.glob("runtime-*/*") if runc else ():
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            listing = subprocess.run([runc, "--root", str(root), "list", "-q"],
                                     capture_output=True, text=True, timeout=30)
            for container in listing.stdout.split():
                subprocess.run([runc, "--root", str(root), "delete", "--force", container],
                               capture_output=True, timeout=60)
    for pid, command in _processes():
        if "containerd-shim" in command[0] and str(exec_root) in " ".join(command):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


ENGINES = ("dockerd", "podman", "containerd")


def other_engine() -> str:
    """A container engine running that is not the managed one (dockerd, podman, a containerd
    of its own), as 'name pid N', or ''. The managed daemon's own containerd runs under its
    exec root, and is its."""
    ours = str(paths().root)
    for pid, command in _processes():
        name = Path(command[0]).name
        if name in ENGINES and not any(ours in part for part in command):
            if name == "containerd" and any("containerd-shim" in part for part in command):
                continue
            return f"{name} pid {pid}"
    return ""


def _processes() -> list[tuple[int, list[str]]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command and command[0]:
            found.append((int(entry.name), [part.decode(errors="replace") for part in command]))
    return found


def leftover_mounts(roots: tuple[Path, ...]) -> None:
    """Unmount (lazily, deepest first) what a daemon that died left mounted under ``roots``:
    container file systems, network namespaces, its own bind of the data root."""
    mounted = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if any(point == str(root) or point.startswith(f"{root}/") for root in roots):
            mounted.append(point)
    for point in sorted(mounted, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=30)
