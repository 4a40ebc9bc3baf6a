"""Fault: the implementation under test runs behind a WatchDelay proxy that passes everything
at once, logs every watch event it is sent and every write it makes (the trace `aftershock
explore` plans from), and fires the faults anchored on them (``faults.anchors``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aftershock.faults.anchors import Anchored, KillAfterWrite
from aftershock.faults.watchdelay import Upstream, WatchDelay

PROXY_LOG = "implementation-proxy.jsonl"


class ObservedImplementation:
    """A process implementation restarts with a kubeconfig through the proxy; reverting stops
    it (the scenario's own cleanup then has nothing left to stop)."""

    def __init__(self, implementation: Any, faults: list[Anchored], workdir: Path,
                 on_fire: Callable[[str], None] | None = None):
        self.implementation, self.faults, self.workdir = implementation, list(faults), workdir
        self.on_fire = on_fire  # e.g. a mark on the timeline when a fault fires
        self.proxy: WatchDelay | None = None
        self.kubeconfig: Path | None = None
        self._restarts: list[threading.Thread] = []
        self.crash_errors: list[str] = []

    @property
    def description(self) -> str:
        if not self.faults:
            return f"watches and writes of {self.implementation.profile.name} observed"
        return f"{self.implementation.profile.name}: " + "; ".join(map(describe, self.faults))

    @property
    def log(self) -> Path:
        return self.workdir / PROXY_LOG

    def apply(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        upstream = Upstream.from_kubeconfig(self.implementation.kubeconfig, self.workdir)
        self.proxy = WatchDelay(upstream, self.log, self.implementation.profile.name).start()
        kills = any(isinstance(fault, KillAfterWrite) for fault in self.faults)
        self.proxy.anchor(self.faults, kill=self._crash if kills else None, on_fire=self.on_fire)
        self.kubeconfig = self.proxy.write_kubeconfig(self.workdir / "kubeconfig")
        self.implementation.stop()
        self.implementation.start(self.kubeconfig)

    def _crash(self) -> None:
        """Called on the proxy's thread right after the anchoring write was answered: the
        process is killed at once, and started again (through the proxy) on another thread."""
        from aftershock.providers import processes

        record = self.implementation.record
        if record is not None:
            processes.kill([record])
        thread = threading.Thread(target=self._start_again, daemon=True,
                                  name="explore-restart")
        self._restarts.append(thread)
        thread.start()

    def _start_again(self) -> None:
        try:
            if self.implementation.process is not None:
                self.implementation.process.wait(timeout=10)
            self.implementation.start(self.kubeconfig)
        except Exception as exc:  # reported by the plan; the scenario goes on
            self.crash_errors.append(repr(exc))

    def revert(self) -> None:
        for thread in self._restarts:
            thread.join(timeout=self.implementation.profile.start.ready_timeout + 15)
        self.implementation.stop()
        if self.proxy is not None:
            self.proxy.stop()


def describe(fault: Anchored) -> str:
    from aftershock.faults.anchors import EventAnchor, Miss, Stall, ordinal

    if isinstance(fault, KillAfterWrite):
        what = " ".join(w for w in (fault.resource, fault.verb) if w) or "write"
        return f"killed and restarted after its {ordinal(fault.nth)} {what}"
    anchor: EventAnchor = fault.anchor
    at = f"its {ordinal(anchor.nth)} {anchor.type} {anchor.resource} event"
    if isinstance(fault, Stall):
        return f"{anchor.resource} watch stalls at {at} for {fault.seconds:g}s"
    assert isinstance(fault, Miss)
    return f"{anchor.resource} watch misses {fault.seconds:g}s from {at}, then relists"


class ObservedComponent:
    """The same for a built-in controller: its control-plane component (e.g.
    kube-controller-manager) restarts through the proxy; a kill crashes it with SIGKILL and
    starts it again through the proxy; reverting restarts it direct."""

    def __init__(self, cluster: Any, component: str, faults: list[Anchored], workdir: Path,
                 on_fire: Callable[[str], None] | None = None):
        self.cluster, self.component, self.faults = cluster, component, list(faults)
        self.on_fire = on_fire
        self.workdir = workdir
        self.proxy: WatchDelay | None = None
        self.kubeconfig: Path | None = None
        self._restarts: list[threading.Thread] = []
        self.crash_errors: list[str] = []

    @property
    def description(self) -> str:
        if not self.faults:
            return f"watches and writes of {self.component} observed"
        return f"{self.component}: " + "; ".join(map(describe, self.faults))

    @property
    def log(self) -> Path:
        return self.workdir / PROXY_LOG

    def apply(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        upstream = Upstream.from_kubeconfig(
            self.cluster.paths.component_kubeconfig(self.component), self.workdir)
        self.proxy = WatchDelay(upstream, self.log, self.component).start()
        kills = any(isinstance(fault, KillAfterWrite) for fault in self.faults)
        self.proxy.anchor(self.faults, kill=self._crash if kills else None, on_fire=self.on_fire)
        self.kubeconfig = self.proxy.write_kubeconfig(self.workdir / "kubeconfig")
        self.cluster.restart_component(self.component, self.kubeconfig)

    def _crash(self) -> None:
        thread = threading.Thread(target=self._crash_and_start, daemon=True,
                                  name="explore-crash")
        self._restarts.append(thread)
        thread.start()

    def _crash_and_start(self) -> None:
        try:
            self.cluster.stop_component(self.component, crash=True)
            self.cluster.start_component(self.component, self.kubeconfig)
        except Exception as exc:
            self.crash_errors.append(repr(exc))

    def revert(self) -> None:
        for thread in self._restarts:
            thread.join(timeout=60)
        self.cluster.restart_component(self.component)
        if self.proxy is not None:
            self.proxy.stop()
