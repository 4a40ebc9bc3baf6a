"""The embedded provider: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
one kwok (every node's kubelet) as local processes on 127.0.0.1, owned from Python.

Owning the processes (rather than driving kwokctl) gives exact flags (audit policy, node lease
and monitor periods), one recorded pid per component, and restarting a single component with
another kubeconfig — which the watch-delay fault needs for the controller-manager and scheduler.
How one kwok plays every node and still lets exactly one node fail: local_nodes.py.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aftershock.errors import ClusterError
from aftershock.go import toolchain
from aftershock.machine import certificates as pkimod
from aftershock.machine import processes as procs
from aftershock.machine.capabilities import Capability
from aftershock.machine.shape import SCHEDULER_BURST, SCHEDULER_QPS, NodeSpec, Shape
from aftershock.providers import gates
from aftershock.providers.base import ClusterInfo, ClusterRequest, kube_scheduler, register
from aftershock.providers.local_nodes import KUBELET, KUBELET_LABEL, RUNNING, START_TIMEOUT, Nodes

DATA = Path(__file__).parent / "data"
NODE_LEASE_SECONDS = 4  # kwok renews every second; see NODE_MONITOR_GRACE
NODE_MONITOR_GRACE = "5s"  # a node silent for this long turns NotReady (Unknown)
# A lease renewal costs the API server about 4 ms of CPU here (bench_scale.py: 0.8 cores idle
# at 100 nodes renewing every second): above this rate the leases of a cluster grow longer.
RENEWALS_PER_SECOND = 30
SERVICE_RANGE = "10.96.0.0/12"
REBINDABLE = ("kube-controller-manager", "kube-scheduler")  # nothing else knows their ports
PORT_RETRIES = 3  # starts again on fresh ports, when one was taken before it was bound
# kwok plays every node's kubelet, work that on a real cluster runs on other machines, so it runs
# at nice 10. With the kernel's autogroups on, that counts only against its session mates, and it
# leads its own session: against the API server it still takes a session's share. Setting the
# session's nice too (/proc/PID/autogroup) cut the recorder's lag at 1,000 nodes (p50 0.2 s ->
# 0.01 s), but it also reordered pod events enough that an explore finding anchored on the 5th
# MODIFIED pod event replayed 2 times in 4 instead of 4 in 4, so it is not done (yet).
NICE = {"kwok": 10}
# The scheduler binds at most 50 pods a second (its default QPS), so a controller-manager that
# creates pods faster adds nothing to pods per second, only a backlog that the API server must
# dispatch ahead of what the recorder waits for (bench_scale, 1,000 nodes, recorder lag p99: at
# 100 and burst 200, 1.63 and 2.04 s; at 50 and burst 100, 0.36 s, at 49.5 pods a second).
KCM_PACE = ("--kube-api-qps=50", "--kube-api-burst=100")
ISSUER = "https://kubernetes.default.svc.cluster.local"


def scheduler_flags(shape: Shape) -> list[str]:
    """kube-scheduler's client rate when the shape raises it from the scheduler's defaults, and
    the level it logs at when the shape names one."""
    verbosity = [] if shape.scheduler_verbosity is None else [f"--v={shape.scheduler_verbosity}"]
    if (shape.scheduler_qps, shape.scheduler_burst) == (SCHEDULER_QPS, SCHEDULER_BURST):
        return verbosity
    return [f"--kube-api-qps={shape.scheduler_qps}", f"--kube-api-burst={shape.scheduler_burst}",
            *verbosity]


def heartbeat(nodes: int) -> tuple[int, int]:
    """(node lease seconds, node monitor grace seconds) for a cluster of ``nodes``. kwok renews
    each lease every quarter of it: 4 s leases (a failure seen in 5 s) up to 30 nodes, then as
    long as keeps renewals near RENEWALS_PER_SECOND (100 nodes: 14 s; 1,000 nodes: 134 s), so
    a node failure is seen later in a larger cluster, as in a real one."""
    lease = max(NODE_LEASE_SECONDS, math.ceil(4 * nodes / RENEWALS_PER_SECOND))
    return lease, lease + 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def default_name() -> str:
    return f"as-{os.getpid()}-{int(time.time() * 1000) % 100000:05d}"


@dataclass(frozen=True)
class Paths:
    workdir: Path

    @property
    def pki(self) -> Path:
        return self.workdir / "pki"

    @property
    def logs(self) -> Path:
        return self.workdir / "logs"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    def component_kubeconfig(self, component: str) -> Path:
        return self.workdir / f"{component}.kubeconfig"

    @property
    def audit_log(self) -> Path:
        return self.workdir / "audit.log"

    @property
    def etcd_data(self) -> Path:
        return self.workdir / "etcd-data"

    def log(self, component: str) -> Path:
        return self.logs / f"{component}.log"


class LocalCluster(Nodes):
    """One embedded cluster. ``start()`` brings it up; ``down()`` removes every trace."""

    provider = "local"
    capabilities = frozenset({
        Capability.NODE_FAILURE, Capability.NODE_DELETE, Capability.COMPONENT_RESTART,
        Capability.WATCH_DELAY_FOR_COMPONENTS, Capability.DESTRUCTIVE, Capability.NODE_ADD,
    })

    def __init__(self, shape: Shape, name: str | None = None, *,
                 binaries: toolchain.Binaries | None = None, detached: bool = False):
        self.shape = shape
        self.name = name or default_name()
        self.binaries = binaries or toolchain.require(shape.kubernetes_version)
        self.paths = Paths(procs.clusters_root() / self.name)
        self.detached = detached
        self._popen: dict[str, subprocess.Popen] = {}
        self._kubeconfigs: dict[str, Path | None] = {}
        self._rebinds: dict[str, int] = {}
        owner_pid, owner_start = procs.current_owner()
        self.state = procs.ClusterState(
            name=self.name, provider="local", owner_pid=owner_pid, owner_start=owner_start,
            created=time.time(), workdir=str(self.paths.workdir), shape=shape.source,
            kubernetes_version=self.binaries.versions.kubernetes,
        )
        self._gates = gates.for_cluster(self.binaries.versions.kubernetes,
                                        shape.gang_scheduling, shape.source)
        self._pki: pkimod.Pki | None = None
        self.extra_nodes: dict[str, NodeSpec] = {}
        self.timings: dict[str, float] = {}

    # --- public handle ------------------------------------------------------------------

    @property
    def info(self) -> ClusterInfo:
        return ClusterInfo(self.name, "local", self.paths.kubeconfig, self.state.server, self.name)

    @property
    def server(self) -> str:
        return self.state.server

    @property
    def schedulers(self) -> list[dict[str, Any]]:
        return kube_scheduler(self.binaries.versions.kubernetes, self.provider,
                              self.shape.gang_scheduling)

    @property
    def audit_log(self) -> Path:
        return self.paths.audit_log

    def component_log(self, component: str) -> Path:
        return self.paths.log(component)

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> LocalCluster:
        """Start every component and wait until the shape's nodes are Ready. On any failure
        (or Ctrl-C) everything started so far is removed before the error propagates. A port
        chosen free and taken before its component bound it (another cluster starting beside
        this one) starts the cluster again on fresh ports, at most PORT_RETRIES times."""
        for attempt in range(PORT_RETRIES + 1):
            try:
                return self._start()
            except ClusterError as exc:
                if "address already in use" not in str(exc) or attempt == PORT_RETRIES:
                    raise
                self._rebinds.clear()
        raise AssertionError("unreachable")

    def _start(self) -> LocalCluster:
        if self.paths.workdir.exists():
            raise ClusterError(f"cluster '{self.name}' already exists ({self.paths.workdir})")
        began = time.monotonic()
        try:
            self.paths.workdir.mkdir(parents=True, mode=0o700)  # keys, tokens: ours alone
            self.state.save()
            self._prepare()
            for component in ("etcd", "kube-apiserver"):
                self._spawn(component)
                self._wait_healthy(component)
            for component in ("kube-controller-manager", "kube-scheduler", KUBELET):
                self._spawn(component)
            self._create_nodes()
            self._wait_components_healthy()
            self._wait_nodes_ready()
        except BaseException:
            self.down()
            raise
        self.timings["total"] = time.monotonic() - began
        if self.detached:
            self.state.owner_pid = self.state.owner_start = None
            self.state.save()
        return self

    def down(self) -> None:
        """End every process we started and remove the work dir. Safe to call twice."""
        procs.terminate(list(self.state.processes.values()))
        for proc in self._popen.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._popen.clear()
        shutil.rmtree(self.paths.workdir, ignore_errors=True)

    def stop_component(self, component: str, crash: bool = False) -> None:
        """End one component: SIGTERM, or at once with SIGKILL when it is to ``crash``."""
        record = self.state.processes.pop(component, None)
        if record:
            if crash:
                procs.kill([record])
            else:
                procs.terminate([record])
            proc = self._popen.pop(component, None)
            if proc:
                proc.wait()
            self.state.save()

    def start_component(self, component: str, kubeconfig: Path | None = None) -> None:
        """(Re)start one component, optionally with another kubeconfig (e.g. via a proxy)."""
        self._spawn(component, kubeconfig)
        self._wait_healthy(component)

    def restart_component(self, component: str, kubeconfig: Path | None = None) -> None:
        self.stop_component(component)
        self.start_component(component, kubeconfig)

    def running(self) -> dict[str, bool]:
        return {name: record.alive() for name, record in self.state.processes.items()}

    # --- internals ----------------------------------------------------------------------

    def _prepare(self) -> None:
        for name in ("etcd-client", "etcd-peer", "kube-apiserver", "kube-controller-manager",
                     "kube-scheduler"):
            self.state.ports[name] = free_port()
        self.state.server = f"https://127.0.0.1:{self.state.ports['kube-apiserver']}"
        self._pki = pkimod.create(self.paths.pki)
        write = pkimod.write_kubeconfig
        write(self.paths.kubeconfig, self._pki, pkimod.ADMIN, self.server, self.name)
        for component, who in (("kube-controller-manager", pkimod.CONTROLLER_MANAGER),
                               ("kube-scheduler", pkimod.SCHEDULER), ("kwok", pkimod.KWOK)):
            path = self.paths.component_kubeconfig(component)
            write(path, self._pki, who, self.server, self.name)
        self.state.kubeconfig = str(self.paths.kubeconfig)
        self.state.save()

    def _command(self, component: str, kubeconfig: Path | None = None) -> list[str]:
        assert self._pki is not None
        ports, pki = self.state.ports, self._pki
        if component == KUBELET:
            return self._kubelet_command(kubeconfig)
        kubeconfig = kubeconfig or self.paths.component_kubeconfig(component)
        binary = self.binaries.path(component)
        if component == "etcd":
            client = f"http://127.0.0.1:{ports['etcd-client']}"
            peer = f"http://127.0.0.1:{ports['etcd-peer']}"
            return [binary, "--name=aftershock", f"--data-dir={self.paths.etcd_data}",
                    f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
                    f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                    f"--initial-cluster=aftershock={peer}", "--unsafe-no-fsync=true",
                    "--quota-backend-bytes=4294967296", "--log-level=warn"]
        if component == "kube-apiserver":
            return [binary, f"--etcd-servers=http://127.0.0.1:{ports['etcd-client']}",
                    "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
                    f"--secure-port={ports['kube-apiserver']}",
                    f"--cert-dir={self.paths.pki}",
                    f"--tls-cert-file={pki.serving_cert}",
                    f"--tls-private-key-file={pki.serving_key}",
                    f"--client-ca-file={pki.ca_cert}",
                    f"--service-account-key-file={pki.sa_pub}",
                    f"--service-account-signing-key-file={pki.sa_key}",
                    f"--service-account-issuer={ISSUER}",
                    f"--service-cluster-ip-range={SERVICE_RANGE}",
                    "--authorization-mode=RBAC", "--allow-privileged=true", "--profiling=false",
                    f"--audit-policy-file={DATA / 'audit-policy.yaml'}",
                    f"--audit-log-path={self.paths.audit_log}", "--audit-log-format=json",
                    "--audit-log-maxsize=0", "--audit-log-maxbackup=1",
                    "--endpoint-reconciler-type=none",
                    "--default-not-ready-toleration-seconds="
                    f"{self.shape.not_ready_toleration_seconds}",
                    "--default-unreachable-toleration-seconds="
                    f"{self.shape.unreachable_toleration_seconds}",
                    *self._gates.flags(component)]
        served = [f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
                  f"--authorization-kubeconfig={kubeconfig}", "--bind-address=127.0.0.1",
                  f"--secure-port={ports.get(component, 0)}", "--leader-elect=false"]
        if component == "kube-controller-manager":
            return [binary, *served, "--use-service-account-credentials=true",
                    f"--service-account-private-key-file={pki.sa_key}",
                    f"--root-ca-file={pki.ca_cert}",
                    f"--cluster-signing-cert-file={pki.ca_cert}",
                    f"--cluster-signing-key-file={pki.ca_key}",
                    "--node-monitor-period=1s",
                    f"--node-monitor-grace-period={heartbeat(self.node_count)[1]}s",
                    *KCM_PACE,
                    *self._gates.flags(component)]
        if component == "kube-scheduler":
            return [binary, *served, *self._gates.flags(component),
                    *scheduler_flags(self.shape)]
        raise ValueError(f"unknown component {component}")

    def _kubelet_command(self, kubeconfig: Path | None) -> list[str]:
        """Every node whose kubelet label says running; each node's IP and pod range are in
        its own object (node_manifest), so these two are fallbacks only."""
        return [self.binaries.path("kwok"),
                f"--kubeconfig={kubeconfig or self.paths.component_kubeconfig('kwok')}",
                f"--config={DATA / 'kwok-stages.yaml'}",
                f"--manage-nodes-with-label-selector={KUBELET_LABEL}={RUNNING}",
                f"--node-lease-duration-seconds={heartbeat(self.node_count)[0]}",
                "--node-ip=10.0.0.1", "--cidr=10.128.0.0/24",
                "--v=WARN"]  # at INFO it writes a line per lease renewal

    def _spawn(self, component: str, kubeconfig: Path | None = None) -> None:
        env = {"HOME": str(self.paths.workdir)}  # nothing may read or write ~/.kube
        running = self.state.processes.get(component)
        if running is not None and running.alive():
            # one of each: a second controller manager (no leader election) would act while
            # the recorded one is stopped, and its record would be lost to cleanup
            self.stop_component(component)
        self._kubeconfigs[component] = kubeconfig
        command = self._command(component, kubeconfig)
        if component in NICE:
            command = ["nice", "-n", str(NICE[component]), *command]
        proc, record = procs.spawn(component, command, self.paths.log(component), env=env,
                                   cwd=self.paths.workdir)
        self._popen[component] = proc
        self.state.processes[component] = record
        self.state.save()

    def _fail(self, component: str, why: str) -> ClusterError:
        log = self.paths.log(component)
        tail = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
        joined = "\n  ".join(tail)
        return ClusterError(f"{component} {why}; last lines of {log}:\n  {joined}")

    def _wait(self, component: str, probe, timeout: float = START_TIMEOUT) -> None:
        began = time.monotonic()
        deadline = began + timeout
        while True:
            proc = self._popen.get(component)
            if proc is not None and proc.poll() is not None:
                if not self._rebind(component):
                    raise self._fail(component, f"exited with code {proc.returncode}")
                continue
            if probe():
                self.timings[component] = time.monotonic() - began
                return
            if time.monotonic() > deadline:
                raise self._fail(component, f"was not healthy within {timeout:.0f}s")
            time.sleep(0.02)  # process readiness has no event to wait on

    def _rebind(self, component: str) -> bool:
        """A serving port picked free can be taken (e.g. as a client's ephemeral port) before
        the component binds it: pick another and start again, a few times."""
        log = self.paths.log(component)
        tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
        retries = self._rebinds.get(component, 0)
        if component not in REBINDABLE or "address already in use" not in tail or retries >= 3:
            return False
        self._rebinds[component] = retries + 1
        self.state.ports[component] = free_port()
        self._spawn(component, self._kubeconfigs.get(component))
        return True

    def _admin_tls(self) -> ssl.SSLContext:
        assert self._pki is not None
        context = ssl.create_default_context(cafile=str(self._pki.ca_cert))
        context.load_cert_chain(str(self._pki.client_cert(pkimod.ADMIN)),
                                str(self._pki.client_key(pkimod.ADMIN)))
        return context

    def _wait_healthy(self, component: str) -> None:
        if component == KUBELET:
            return self._wait(component, lambda: True)
        if component == "etcd":
            url = f"http://127.0.0.1:{self.state.ports['etcd-client']}/health"
            return self._wait("etcd", lambda: _http_ok(url, None))
        if component == "kube-apiserver":
            context = self._admin_tls()
            return self._wait(component, lambda: _http_ok(f"{self.server}/readyz", context))
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        return self._wait(component, lambda: _http_ok(
            f"https://127.0.0.1:{self.state.ports[component]}/healthz", insecure))

    def _wait_components_healthy(self) -> None:
        for component in ("kube-controller-manager", "kube-scheduler"):
            self._wait_healthy(component)

    def _api(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            f"{self.server}{path}", method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        with urllib.request.urlopen(request, context=self._admin_tls(), timeout=30) as response:
            return json.loads(response.read() or b"{}")

def _http_ok(url: str, context: ssl.SSLContext | None) -> bool:
    try:
        with urllib.request.urlopen(url, context=context, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


class LocalProvider:
    name = "local"

    def __init__(self, kubernetes_version: str | None = None):
        self.kubernetes_version = kubernetes_version

    def up(self, shape: Shape, name: str | None = None, detached: bool = False) -> LocalCluster:
        version = shape.kubernetes_version or self.kubernetes_version
        binaries = toolchain.require(version)
        return LocalCluster(shape, name, binaries=binaries, detached=detached).start()


@register("local", capabilities=LocalCluster.capabilities, builds_toolchain=True)
def open_cluster(request: ClusterRequest, shape: Shape | None) -> LocalCluster:
    return LocalProvider(request.kubernetes_version).up(shape, request.name,
                                                         detached=request.detached)


def attach(name: str) -> procs.ClusterState:
    """The recorded state of a running local cluster by name."""
    workdir = procs.clusters_root() / name
    if not (workdir / procs.STATE_FILE).is_file():
        raise ClusterError(f"no cluster named '{name}' (see 'aftershock cluster list')")
    return procs.ClusterState.load(workdir)
