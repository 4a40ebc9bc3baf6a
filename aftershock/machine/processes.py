"""Every process the harness starts is recorded (pid + kernel start time) so that cleanup ends
exactly what we started — on exit, on Ctrl-C, and by the next run if we were killed."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aftershock.machine.cache import cache_root, dead_process_scratch, start_time

STATE_FILE = "state.json"


def clusters_root() -> Path:
    return cache_root() / "clusters"


@dataclass(frozen=True)
class ProcessRecord:
    name: str
    pid: int
    start_time: int
    command: list[str]
    log: str

    def alive(self) -> bool:
        return start_time(self.pid) == self.start_time


@dataclass
class ClusterState:
    """What ``<clusters>/<name>/state.json`` records about one cluster."""

    name: str
    provider: str
    owner_pid: int | None
    owner_start: int | None
    created: float
    workdir: str
    kubeconfig: str = ""
    server: str = ""
    shape: str = ""
    kubernetes_version: str = ""
    engine: str = ""  # the container engine of a kind cluster
    engine_host: str = ""  # its DOCKER_HOST, when not the default (the managed engine)
    ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, ProcessRecord] = field(default_factory=dict)
    context: str = ""
    # What a run did to a cluster it does not own and has not undone yet, as plain data (key →
    # {"do": "uncordon", "node": ...}): `gc` undoes it when the run was killed.
    undo: dict[str, dict] = field(default_factory=dict)

    def owner_alive(self) -> bool:
        if self.owner_pid is None:
            return True
        return start_time(self.owner_pid) == self.owner_start

    def save(self) -> None:
        path = Path(self.workdir) / STATE_FILE
        scratch = path.with_suffix(".tmp")
        data = asdict(self)
        scratch.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(scratch, path)

    @classmethod
    def load(cls, workdir: Path) -> ClusterState:
        data = json.loads((workdir / STATE_FILE).read_text())
        data["processes"] = {k: ProcessRecord(**v) for k, v in data.get("processes", {}).items()}
        return cls(**data)


def adopt(state: ClusterState, key: str, record: ProcessRecord) -> None:
    """Record a process the harness started beside the cluster (an implementation under test),
    so that `cluster gc` ends it when the run that started it was killed."""
    state.processes[key] = record
    state.save()


def remember_undo(state: ClusterState, key: str, action: dict) -> None:
    state.undo[key] = action
    state.save()


def forget_undo(state: ClusterState, key: str) -> None:
    if state.undo.pop(key, None) is not None:
        state.save()


def release(state: ClusterState, key: str) -> None:
    if state.processes.pop(key, None) is not None:
        state.save()


def private_dir(state: ClusterState, name: str) -> Path:
    """A directory only this user may read, in the cluster's work dir (mode 0700): where
    credentials go (a service-account token's kubeconfig), never in a run dir."""
    workdir = Path(state.workdir)
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    workdir.chmod(0o700)
    path = workdir / "private" / name
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


@functools.cache
def current_owner() -> tuple[int, int | None]:
    return os.getpid(), start_time(os.getpid())


def spawn(name: str, command: list[str], log: Path, env: dict[str, str] | None = None,
          cwd: Path | None = None,
          pass_fds: tuple[int, ...] = ()) -> tuple[subprocess.Popen, ProcessRecord]:
    """Start one component in its own session (so it survives terminal Ctrl-C only by our
    choice: cleanup ends it), output appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True,
            pass_fds=pass_fds,
        )
    started = start_time(proc.pid)
    record = ProcessRecord(name, proc.pid, started or 0, command, str(log))
    return proc, record


def terminate(records: list[ProcessRecord], grace: float = 5.0) -> None:
    """SIGTERM each recorded process group that is still ours, then SIGKILL what remains."""
    ours = [record for record in records if record.alive()]
    for record in ours:
        _signal_group(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(record.alive() for record in ours):
        _reap(ours)
        time.sleep(0.05)  # process exit of a non-child has no event to wait on
    kill(ours)


def kill(records: list[ProcessRecord]) -> None:
    """SIGKILL each recorded process group that is still ours, with no warning (a crash, or
    what a SIGTERM left)."""
    ours = [record for record in records if record.alive()]
    for record in ours:
        _signal_group(record.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(record.alive() for record in ours):
        _reap(ours)
        time.sleep(0.02)  # likewise, after SIGKILL


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _reap(records: list[ProcessRecord]) -> None:
    """Collect our own exited children so they do not linger as zombies."""
    for record in records:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(record.pid, os.WNOHANG)


def list_states() -> list[ClusterState]:
    root = clusters_root()
    states = []
    for workdir in sorted(root.iterdir()) if root.is_dir() else []:
        if (workdir / STATE_FILE).is_file():
            try:
                states.append(ClusterState.load(workdir))
            except (ValueError, TypeError, KeyError):
                continue
    return states


# What each kind of record needs beyond ending its processes, registered by the provider that
# makes such records (``@teardown("kind")``): this module knows none of them. The providers
# package imports every provider, so the list is complete wherever a record is removed.
Teardown = Callable[[ClusterState], "dict[str, str] | None"]
TEARDOWNS: dict[str, Teardown] = {}
AFTER_TEARDOWN: dict[str, Teardown] = {}  # run once the record's processes are ended
SWEEPS: list[Callable[[], list[str]]] = []  # gc's extra sweeps: what they removed


def teardown(provider: str, after_processes: bool = False):
    """Register how a record of ``provider`` is undone (before its processes are ended, or
    after); it returns what could not be undone (its key → why), or None."""
    def register(func: Teardown) -> Teardown:
        (AFTER_TEARDOWN if after_processes else TEARDOWNS)[provider] = func
        return func
    return register


def sweep(func: Callable[[], list[str]]) -> Callable[[], list[str]]:
    """Register a sweep `gc` runs after removing dead runs' records."""
    SWEEPS.append(func)
    return func


def remove_cluster(state: ClusterState) -> dict[str, str]:
    """End what the record says was started, undo what it says was done to a cluster we do
    not own, remove its work dir. Returns what could not be undone (its key → why)."""
    failures: dict[str, str] = {}
    if state.undo and state.provider not in TEARDOWNS | AFTER_TEARDOWN:
        return {key: f"no teardown of the {state.provider} provider is registered in this "
                "process (gc through aftershock.providers.clusters)" for key in state.undo}
    if state.provider in TEARDOWNS:
        failures.update(TEARDOWNS[state.provider](state) or {})
    terminate(list(state.processes.values()))
    if state.provider in AFTER_TEARDOWN:
        failures.update(AFTER_TEARDOWN[state.provider](state) or {})
    shutil.rmtree(state.workdir, ignore_errors=True)
    return failures


@dataclass(frozen=True)
class GcResult:
    clusters: list[str]
    processes: list[str]
    leftovers: list[str]
    undone: list[str] = field(default_factory=list)
    not_undone: list[str] = field(default_factory=list)


def is_dead_run(state: ClusterState) -> bool:
    """Owned by a process that is gone, or a detached cluster whose control plane died."""
    if state.owner_pid is not None:
        return not state.owner_alive()
    if state.provider == "engine":  # the managed container engine: dead when its daemon is
        return not any(record.alive() for record in state.processes.values())
    core = [state.processes.get(name) for name in ("etcd", "kube-apiserver")]
    return any(record is None or not record.alive() for record in core)


def gc(min_age: float = 60.0) -> GcResult:
    """End the recorded processes of dead runs and remove their work dirs and temp dirs."""
    cleaned, killed, leftovers, undone, not_undone = [], [], [], [], []
    for state in list_states():
        if not is_dead_run(state):
            continue
        killed += [f"{r.name}[{r.pid}]" for r in state.processes.values() if r.alive()]
        attempted = list(state.undo)  # only a cluster opened as found keeps any
        failed = remove_cluster(state)
        undone += [f"{state.name}: {key}" for key in attempted if key not in failed]
        not_undone += [f"{state.name}: {key} ({why})" for key, why in failed.items()]
        cleaned.append(state.name)
    root = clusters_root()
    for workdir in sorted(root.iterdir()) if root.is_dir() else []:
        if not (workdir / STATE_FILE).exists() and time.time() - workdir.stat().st_mtime > min_age:
            shutil.rmtree(workdir, ignore_errors=True)
            leftovers.append(str(workdir))
    leftovers += _stale_build_dirs() + dead_process_scratch()
    for extra in SWEEPS:
        leftovers += extra()
    return GcResult(cleaned, killed, leftovers, undone, not_undone)


def _stale_build_dirs() -> list[str]:
    """Temp dirs of toolchain builds whose builder (pid in the name) is gone."""
    removed = []
    scratches = [path for where in ("bin", "kind/bin", "kind", "kind/chaos-mesh", "kind/helm",
                                   "kind/containerd")
                 for path in (cache_root() / where).glob(".tmp-*")]
    for scratch in scratches:
        parts = scratch.name.split("-pid")
        pid = parts[1].split("-")[0] if len(parts) > 1 else ""
        if not pid.isdigit() or start_time(int(pid)) is None:
            shutil.rmtree(scratch, ignore_errors=True)
            removed.append(str(scratch))
    return removed
