"""The implementation under test run observed, as `aftershock explore` runs it: restarted
behind a WatchDelay proxy that passes everything at once, logs every watch event it is sent
and every write it makes (the trace explore plans from), and fires the faults a plan anchors on
them (``faults.anchors``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client

from aftershock.faults.anchors import Anchored, EventAnchor, KillAfterWrite, Miss, Stall, ordinal
from aftershock.faults.watchdelay import Upstream, WatchDelay, sidecar
from aftershock.kube import door
from aftershock.kube.manifests import wait_rolled_out, wait_scaled_down
from aftershock.machine import processes

PROXY_LOG = "implementation-proxy.jsonl"


class Observed:
    """What both forms share: the proxy, armed with the faults, and the restarts a kill makes.
    A form says whose kubeconfig the proxy speaks with, how to restart through it, how to crash
    and start again, and how to go back."""

    name = "implementation"

    def __init__(self, faults: list[Anchored], workdir: Path,
                 on_fire: Callable[[str, float], None] | None = None):
        # absolute: the implementation is handed the kubeconfig written here, and starts in
        # its profile's own folder (a relative run dir would name no file there)
        self.faults, self.workdir = list(faults), workdir.absolute()
        self.on_fire = on_fire  # e.g. a mark on the timeline when a fault fires
        self.proxy: WatchDelay | None = None
        self.kubeconfig: Path | None = None
        self._restarts: list[threading.Thread] = []
        self.crash_errors: list[str] = []
        self._starting = threading.Lock()  # never two starts at once
        self._kills = 0

    @property
    def description(self) -> str:
        if not self.faults:
            return f"watches and writes of {self.name} observed"
        return f"{self.name}: " + "; ".join(map(describe, self.faults))

    @property
    def log(self) -> Path:
        return self.workdir / PROXY_LOG

    def apply(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        upstream = Upstream.from_kubeconfig(self.own_kubeconfig())
        self.proxy = WatchDelay(upstream, self.log, self.name).start()
        kills = any(isinstance(fault, KillAfterWrite) for fault in self.faults)
        self.proxy.anchor(self.faults, kill=self._crash if kills else None, on_fire=self.on_fire)
        self.kubeconfig = self.proxy.write_kubeconfig(self.workdir / "kubeconfig")
        self._restart_through_proxy()

    def _restart_through_proxy(self) -> None:
        """A kill anchored on a write the implementation makes while it starts lands while its
        start is still waited on: that start then fails by the kill's doing, and the start the
        kill asks for follows once this one has returned."""
        with self._starting:
            kills = self._kills
            try:
                self.restart()
            except Exception:
                if self._kills == kills:
                    raise

    def _crash(self) -> None:
        """Called on the proxy's thread right after the anchoring write was answered."""
        self._kills += 1
        self.crash()
        thread = threading.Thread(target=self._start_again, daemon=True, name="explore-restart")
        self._restarts.append(thread)
        thread.start()

    def _start_again(self) -> None:
        with self._starting:
            try:
                self.start_again()
            except Exception as exc:  # reported by the plan; the scenario goes on
                self.crash_errors.append(repr(exc))

    def revert(self) -> None:
        for thread in self._restarts:
            thread.join(timeout=60)
        with self._starting:  # a start the kill asked for, still running, ends first
            self.go_back()
        if self.proxy is not None:
            self.proxy.stop()

    # --- what a form says ---------------------------------------------------------------

    def own_kubeconfig(self) -> Path:
        raise NotImplementedError

    def restart(self) -> None:
        raise NotImplementedError

    def crash(self) -> None:
        raise NotImplementedError

    def start_again(self) -> None:
        raise NotImplementedError

    def go_back(self) -> None:
        raise NotImplementedError


class ObservedImplementation(Observed):
    """A process implementation restarts with a kubeconfig through the proxy; a kill is a
    SIGKILL at once, on the proxy's thread; reverting stops it (the scenario's own cleanup
    then has nothing left to stop)."""

    def __init__(self, implementation: Any, faults: list[Anchored], workdir: Path,
                 on_fire: Callable[[str, float], None] | None = None):
        super().__init__(faults, workdir, on_fire)
        self.implementation = implementation
        self.name = implementation.profile.name

    def own_kubeconfig(self) -> Path:
        return self.implementation.kubeconfig

    def restart(self) -> None:
        self.implementation.stop()
        self.implementation.start(self.kubeconfig)

    def crash(self) -> None:
        processes.kill(self.implementation.records)

    def start_again(self) -> None:
        self.implementation.stop()  # reaps what the crash killed, companions too
        self.implementation.start(self.kubeconfig)

    def go_back(self) -> None:
        self.implementation.stop()


class ObservedComponent(Observed):
    """A built-in controller: its control-plane component (e.g. kube-controller-manager)
    restarts through the proxy; a kill crashes it with SIGKILL and starts it again through the
    proxy; reverting restarts it direct."""

    def __init__(self, cluster: Any, component: str, faults: list[Anchored], workdir: Path,
                 on_fire: Callable[[str, float], None] | None = None):
        super().__init__(faults, workdir, on_fire)
        self.cluster, self.component, self.name = cluster, component, component

    def own_kubeconfig(self) -> Path:
        return self.cluster.paths.component_kubeconfig(self.component)

    def restart(self) -> None:
        self.cluster.restart_component(self.component, self.kubeconfig)

    def crash(self) -> None:
        """Nothing at once: a component's stop waits, and the proxy's thread must not."""

    def start_again(self) -> None:
        self.cluster.stop_component(self.component, crash=True)
        self.cluster.start_component(self.component, self.kubeconfig)

    def go_back(self) -> None:
        self.cluster.restart_component(self.component)


class ObservedInCluster(Observed):
    """An implementation in the cluster: its Deployment rolls out with the proxy as a sidecar
    (``faults.watchdelay.sidecar``) armed with the faults, and the sidecar's log, its stdout, is
    followed into the proxy log as it is written, so a fault is marked when it fires. A sidecar
    cannot kill the container beside it: at a kill it severs the implementation from the API
    server at once (nothing it sends after the anchoring write arrives), and the harness then
    deletes the pod, whose replacement runs behind a proxy that only observes. Reverting rolls
    the original pod template back."""

    def __init__(self, implementation: Any, faults: list[Anchored], workdir: Path,
                 on_fire: Callable[[str, float], None] | None = None):
        super().__init__(faults, workdir, on_fire)
        self.implementation = implementation
        self.name = implementation.profile.name
        self.original: dict[str, Any] | None = None
        self._followed: dict[str, threading.Thread] = {}
        self._log_lock = threading.Lock()

    def apply(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log.touch()
        sidecar.prepare(self.implementation)
        self.original = self._template(self.faults)
        self._follow_pods()

    def _template(self, faults: list[Anchored], wait: bool = True) -> dict[str, Any]:
        spec = self.implementation.spec
        original = self.original["template"] if self.original else None
        return sidecar.roll_out(self.implementation, lambda template: sidecar.with_sidecar(
            original or template, [], spec.container, anchors=faults), wait)

    def _follow_pods(self) -> None:
        for pod in self.implementation.pods():
            if pod not in self._followed:
                thread = threading.Thread(target=self._follow, args=(pod,), daemon=True,
                                          name=f"observed-{pod}")
                self._followed[pod] = thread
                thread.start()

    def _follow(self, pod: str) -> None:
        """The pod's sidecar log, line by line, into the proxy log, from its first line until
        the pod is gone."""
        implementation = self.implementation
        try:
            response = client.CoreV1Api(implementation.api).read_namespaced_pod_log(
                pod, implementation.namespace, container=sidecar.CONTAINER, follow=True,
                _preload_content=False)
        except client.exceptions.ApiException as exc:
            self.crash_errors.append(f"pod/{implementation.namespace}/{pod}: no proxy log "
                                     f"({exc.reason})")
            return
        partial = b""
        for chunk in response.stream(4096):
            partial += chunk
            *lines, partial = partial.split(b"\n")
            for line in lines:
                self._read(line)
        self._read(partial)

    def _read(self, line: bytes) -> None:
        if not line.strip():
            return
        with self._log_lock, self.log.open("ab") as out:
            out.write(line + b"\n")
        try:
            record = json.loads(line)
        except ValueError:
            return
        if record.get("event") != "anchor-fired":
            return
        if self.on_fire is not None:
            self.on_fire(record.get("fault", "?"), float(record.get("lasts") or 0))
        if record.get("kill"):
            self._crash()

    # --- the form -----------------------------------------------------------------------

    def crash(self) -> None:
        """The implementation, severed by its sidecar, goes now: the pods that replace it run
        behind a proxy that only observes. By Recreate, its old ReplicaSet is scaled to 0
        first; its pods are then deleted with no grace (deleted before, its ReplicaSet would
        make another, still armed)."""
        implementation = self.implementation
        doomed = implementation.pods()
        self._template([], wait=False)
        wait_scaled_down(implementation.api, implementation.namespace,
                         implementation.spec.deployment, doomed, implementation.spec.ready_timeout)
        corev1 = client.CoreV1Api(implementation.api)
        for pod in doomed:  # its ReplicaSet, scaled to 0, may have removed it already
            door.delete(corev1.delete_namespaced_pod, pod, implementation.namespace,
                        grace_period_seconds=0, missing_ok=True)

    def start_again(self) -> None:
        spec = self.implementation.spec
        wait_rolled_out(self.implementation.api, self.implementation.namespace,
                        spec.deployment, spec.ready_timeout)
        self._follow_pods()

    def revert(self) -> None:
        for thread in self._restarts:
            thread.join(timeout=120)
        if self.original is not None:
            original, self.original = self.original, None
            sidecar.roll_back(self.implementation, original)
            sidecar.unprepare(self.implementation)
        for thread in self._followed.values():
            thread.join(timeout=30)


def describe(fault: Anchored) -> str:
    if isinstance(fault, KillAfterWrite):
        what = " ".join(w for w in (fault.resource, fault.verb) if w) or "write"
        return f"killed and restarted after its {ordinal(fault.nth)} {what}"
    anchor: EventAnchor = fault.anchor
    at = f"its {ordinal(anchor.nth)} {anchor.type} {anchor.resource} event"
    if isinstance(fault, Stall):
        return f"{anchor.resource} watch stalls at {at} for {fault.seconds:g}s"
    assert isinstance(fault, Miss)
    return f"{anchor.resource} watch misses {fault.seconds:g}s from {at}, then relists"
