"""Installing and running an implementation under test as an out-of-cluster process under its
own ServiceAccount (so the audit log names it), optionally behind a WatchDelay proxy."""

from __future__ import annotations

import base64
import socket
import subprocess
import sys
import tempfile  # which `cluster gc` removes once the process is gone
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from aftershock.go.builds import ensure
from aftershock.kube import door, manifests
from aftershock.kube.manifests import apply_manifest
from aftershock.machine import cache, processes, yamlsrc
from aftershock.machine import certificates as pki
from aftershock.profile.load import Profile
from aftershock.profile.placeholders import fill, fill_all
from aftershock.sut import grants, made, readiness


@dataclass
class Implementation:
    profile: Profile
    api: client.ApiClient
    namespace: str
    workdir: Path
    server: str
    ca_data: str
    # The cluster's recorded state: its process is adopted there (so `cluster gc` ends it after
    # a SIGKILL of the run) and its credentials go to the cluster's private dir, not workdir.
    state: processes.ClusterState | None = None
    # {host}: this machine as the cluster reaches it (its webhooks listen and are called there)
    host: str = "127.0.0.1"
    kubeconfig: Path | None = None
    token: str = ""
    process: subprocess.Popen | None = None
    record: processes.ProcessRecord | None = None
    companions: list[tuple[str, subprocess.Popen, processes.ProcessRecord]] = field(
        default_factory=list)
    starts: list[float] = field(default_factory=list)
    # What it is given at its first start and keeps across restarts: {port_<name>}, {tls_dir},
    # {ca_bundle}, {files}; and the manifests applied once it was ready.
    given: dict[str, str] = field(default_factory=dict)
    applied: list[dict[str, Any]] = field(default_factory=list)
    # The API server's audit log, and where it ended when it was installed: what it makes
    # outside its namespace is found there by its identity, and goes when it is uninstalled.
    audit_log: Path | None = None
    audit_from: int = 0

    @property
    def actor(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.profile.start.service_account}"

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.profile.name}.log"

    @property
    def key(self) -> str:
        """Its name among the cluster's recorded processes."""
        return f"implementation/{self.namespace}/{self.profile.name}"

    @property
    def node_data(self) -> Path:
        """``{node_data}``: one directory per node under it (``<node_data>/<node>``), on a
        kind cluster each bind-mounted into its node at NODE_DATA_IN_NODE, so what an
        implementation keeps there lies on the node's own disk (kwok's nodes have none: a
        directory beside the cluster)."""
        root = Path(self.state.workdir) if self.state is not None else self.workdir
        return root / "node-data"

    def _private(self) -> Path:
        if self.state is None:  # no cluster to keep it in: this process's own scratch, 0700,

            scratch = cache.scratch_for_this_process("credentials")
            return Path(tempfile.mkdtemp(prefix=f"{self.namespace}-", dir=scratch))
        return processes.private_dir(self.state, self.namespace)

    def install(self) -> None:
        self.audit_from = made.audit_size(self.audit_log)
        docs = [doc for manifest in self.profile.manifests
                for doc in yamlsrc.manifests(self.profile.resolve(manifest))]
        manifests.retire_other_profiles(self.api, self.profile.name, manifests.crd_names(docs))
        new_kinds = False
        for doc in docs:
            new_kinds = apply_manifest(self.api, doc, self.namespace,
                                       self.profile.name) or new_kinds
        if new_kinds:  # an owner of a new kind must not leave its dependents behind
            manifests.wait_collector_knows(self.api, self.namespace)
        self._service_account()

    def _service_account(self) -> None:
        name = self.profile.start.service_account
        grants.grant(self.api, self.namespace, name, self.profile.rbac, self.cluster_rules)
        self.token = token = door.call(
            client.CoreV1Api(self.api).create_namespaced_service_account_token, name,
            self.namespace, {"spec": {"expirationSeconds": 3600}}).status.token
        self.kubeconfig = self._private() / f"{self.profile.name}.kubeconfig"
        self.kubeconfig.touch(mode=0o600)
        self.kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": self.server,
                                                   "certificate-authority-data": self.ca_data}}],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u",
                                                   "namespace": self.namespace}}],
            "current-context": "c"}))

    @property
    def cluster_rules(self) -> tuple[dict[str, Any], ...]:
        return self.profile.cluster_rules()

    def uninstall(self) -> None:
        """After it has stopped: what it made cluster-wide goes first (a webhook of its own,
        its server gone, would refuse the rest), then what it was given."""
        if self.audit_log is not None and self.audit_log.exists():
            made.remove(self.api, made.made_by(self.audit_log, self.actor, self.audit_from))
        self.remove_start_manifests()
        if self.cluster_rules:
            grants.revoke_cluster_rules(self.api, self.namespace,
                                        self.profile.start.service_account)

    def start(self, kubeconfig: Path | None = None) -> None:
        """Start the process (through ``kubeconfig`` if given, e.g. a proxy's) and wait until
        it says it is ready."""
        start = self.profile.start
        values = {"kubeconfig": str(kubeconfig or self.kubeconfig), "namespace": self.namespace,
                  "python": sys.executable, "workdir": str(self.workdir),
                  "node_data": str(self.node_data), "host": self.host,
                  **self.profile.module_values()}
        if self.profile.build is not None:
            values["binary"] = str(ensure(self.profile.build))
        for name, build in self.profile.more_builds.items():
            values[f"binary_{name}"] = str(ensure(build))
        values.update(self._given(values))
        cwd = self.profile.resolve(start.cwd)
        offset = self.log.stat().st_size if self.log.exists() else 0
        for companion in start.companions:
            self._spawn(f"{self.profile.name}-{companion.name}", companion.command,
                        companion.env, values, cwd)
        self.process, self.record = self._spawn(self.profile.name, start.command, start.env,
                                                values, cwd)
        self.starts.append(time.monotonic())
        self._wait_ready(offset, values)
        self._apply_start_manifests(values)

    def _spawn(self, name: str, command: tuple[str, ...], env: dict[str, str],
               values: dict[str, str], cwd: Path):
        """One of its processes, its output in the implementation's log, recorded with the
        cluster (a companion under its own key) so `cluster gc` ends it after a SIGKILL."""
        started = processes.spawn(name, fill_all(command, values), self.log, cwd=cwd,
                                  env={k: fill_all([v], values)[0] for k, v in env.items()})
        key = self.key if name == self.profile.name else f"{self.key}/{name}"
        if name != self.profile.name:
            self.companions.append((key, *started))
        if self.state is not None:
            processes.adopt(self.state, key, started[1])
        return started

    def _given(self, values: dict[str, str]) -> dict[str, str]:
        """Free ports and a serving key pair, made at the first start and kept across restarts;
        its files, written at each start (a restart behind a proxy has another kubeconfig)."""
        start = self.profile.start
        if not self.given and (start.ports or start.serving_certificate or start.files):
            self.given = {f"port_{name}": str(free_port()) for name in start.ports}
            private = self._private()
            if start.serving_certificate:
                tls = private / f"{self.profile.name}-tls"
                self.given["ca_bundle"] = pki.serving_pair(
                    tls, tuple(dict.fromkeys((self.host, "127.0.0.1", "localhost"))))
                self.given["tls_dir"] = str(tls)
            if start.files:
                folder = private / f"{self.profile.name}-files"
                folder.mkdir(mode=0o700, exist_ok=True)
                self.given["files"] = str(folder)
        for name, template in start.files.items():
            text = self.profile.resolve(template).read_text()
            (Path(self.given["files"]) / name).write_text(fill(text, {**values, **self.given}))
        return self.given

    def _apply_start_manifests(self, values: dict[str, str]) -> None:
        if self.applied:
            return
        for manifest in self.profile.start.manifests:
            text = fill(self.profile.resolve(manifest).read_text(), values)
            for doc in yaml.safe_load_all(text):
                if doc:
                    manifests.put(self.api, doc, self.namespace)
                    self.applied.append(doc)

    def remove_start_manifests(self) -> None:
        """What it was given once it was ready goes with it (newest first)."""
        while self.applied:
            manifests.remove_if_present(self.api, self.applied.pop(), self.namespace)

    def _wait_ready(self, offset: int, values: dict[str, str]) -> None:
        start = self.profile.start
        deadline = time.monotonic() + start.ready_timeout
        missing = ["a first look"]
        while time.monotonic() < deadline:
            for name, process in [(self.profile.name, self.process),
                                  *[(key.rsplit("/", 1)[-1], p)
                                    for key, p, _ in self.companions]]:
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited with {process.returncode}: "
                                       + self.log.read_text()[-2000:])
            missing = readiness.waiting_for(start, self.log, offset, self.api, self.namespace,
                                            values)
            if not missing:
                return
            time.sleep(0.05)  # a log, a URL or a lease of another process: nothing to wait on
        raise RuntimeError(f"{self.profile.name} was not ready within "
                           f"{start.ready_timeout:.0f}s: no {'; no '.join(missing)}")

    @property
    def records(self) -> list[processes.ProcessRecord]:
        """Its processes: the main one and its companions."""
        return [r for r in [self.record, *[r for _, _, r in self.companions]] if r]

    def stop(self) -> None:
        if self.records:
            processes.terminate(self.records, grace=self.profile.start.stop_grace)
        for process in [self.process, *[p for _, p, _ in self.companions]]:
            if process is not None:
                process.wait(timeout=10)
        if self.state is not None:
            for key in [self.key, *[k for k, _, _ in self.companions]]:
                processes.release(self.state, key)
        self.process = self.record = None
        self.companions = []


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ca_data(kubeconfig: Path) -> tuple[str, str]:
    """The server and CA bundle of a kubeconfig, for the implementation's own kubeconfig."""
    config = yaml.safe_load(kubeconfig.read_text())
    current = config["current-context"]
    context = next(c["context"] for c in config["contexts"] if c["name"] == current)
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    data = cluster.get("certificate-authority-data") or base64.b64encode(
        Path(cluster["certificate-authority"]).read_bytes()).decode()
    return cluster["server"], data
