"""Installing and running an implementation in the cluster (a profile's ``install_in_cluster``):
its image built if asked (from a Dockerfile, or the profile's built program alone in an image
made here) and loaded into the nodes, its manifests applied or its helm chart installed (with
the helm built here) in the scenario's namespace under its own ServiceAccount (so the audit log
names it), and its Deployment or DaemonSet waited for. Stopping scales a Deployment to zero and
keeps a DaemonSet off every node, keeping its pods' logs."""

from __future__ import annotations

import base64
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client, watch

from aftershock.containers.images import archive, python_base
from aftershock.containers.images.base import say_to_stderr
from aftershock.go import builds as gobuild
from aftershock.go import helm
from aftershock.kube import api as kube
from aftershock.kube import door, writes
from aftershock.kube.manifests import (
    apply_manifest,
    crd_names,
    retire_other_profiles,
    wait_collector_knows,
    wait_rolled_out,
)
from aftershock.machine import certificates as pki
from aftershock.machine import yamlsrc
from aftershock.profile.load import Helm, InCluster, Profile
from aftershock.profile.placeholders import fill
from aftershock.providers import kind_argv as cmd
from aftershock.sut import grants


def placeholders(spec: InCluster, namespace: str, ca_bundle: str = "") -> dict[str, str]:
    return {"namespace": namespace, "image": spec.image, "service_account": spec.service_account,
            "ca_bundle": ca_bundle}


def helm_install(helm: str, chart: Helm, release: str, chart_ref: str, namespace: str,
                 kubeconfig: Path, context: str, values: list[Path], settings: dict[str, str],
                 timeout: float) -> str:
    """``helm upgrade --install`` of the chart into ``namespace``, waited on, through the
    door; helm's output."""
    options = ["--namespace", namespace, "--kubeconfig", str(kubeconfig), "--kube-context",
               context, "--wait", "--timeout", f"{int(timeout)}s"]
    if chart.repo:
        options += ["--repo", chart.repo]
    if chart.version:
        options += ["--version", chart.version]
    for path in values:
        options += ["--values", str(path)]
    for key, value in settings.items():
        options += ["--set", f"{key}={value}"]
    return door.helm(helm, "upgrade", "--install", release, chart_ref, *options,
                     timeout=timeout + 60)


def helm_uninstall(helm: str, release: str, namespace: str, kubeconfig: Path,
                   context: str, *, missing_ok: bool) -> str:
    """``helm uninstall`` of the release, waited on, through the door."""
    return door.helm(helm, "uninstall", release, "--namespace", namespace, "--kubeconfig",
                     str(kubeconfig), "--kube-context", context, "--wait", timeout=600,
                     missing_ok=missing_ok)


def dockerfile(profile: Profile) -> Path | None:
    spec = profile.in_cluster
    if spec is None or spec.build_context is None:
        return None
    context = profile.resolve(spec.build_context)
    return profile.resolve(spec.dockerfile) if spec.dockerfile else context / "Dockerfile"


def build_command(profile: Profile, engine: str) -> list[str] | None:
    spec, path = profile.in_cluster, dockerfile(profile)
    if spec is None or spec.build_context is None or path is None:
        return None
    return cmd.build_image(engine, spec.image, path, profile.resolve(spec.build_context))


def rendered_manifests(profile: Profile, namespace: str,
                       ca_bundle: str = "") -> list[dict[str, Any]]:
    """Every document of every manifest, {namespace}, {image}, {service_account} and
    {ca_bundle} filled in."""
    spec = profile.in_cluster
    assert spec is not None
    values = placeholders(spec, namespace, ca_bundle)
    documents = []
    for manifest in spec.manifests:
        path = profile.resolve(manifest)
        documents += yamlsrc.manifests(path, fill(path.read_text(), values))
    return documents


@dataclass
class InClusterImplementation:
    profile: Profile
    cluster: Any  # a provider with load_image (kind)
    api: client.ApiClient
    namespace: str
    workdir: Path
    helm: str | None = None  # the helm built here unless given
    replicas: int = 1
    starts: list[float] = field(default_factory=list)
    # installed beside the implementation under test (a second driver): the other profiles'
    # CRDs, the one under test's among them, are kept
    companion: bool = False

    @property
    def spec(self) -> InCluster:
        assert self.profile.in_cluster is not None
        return self.profile.in_cluster

    @property
    def actor(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.spec.service_account}"

    @property
    def kubeconfig(self) -> Path:
        """For commands the profile runs from the host (e.g. a data probe)."""
        return self.cluster.info.kubeconfig

    @property
    def node_data(self) -> Path:
        """``{node_data}``: each node's directory for node-local data (``<node_data>/<node>``,
        bind-mounted into the node), read on the host."""
        return self.cluster.paths.host.node_data

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.profile.name}.log"

    @property
    def release(self) -> str:
        helm = self.spec.helm
        return (helm.release if helm and helm.release else None) or self.profile.name

    def install(self) -> None:
        self._load_image()
        grants.grant(self.api, self.namespace, self.spec.service_account, self.profile.rbac,
                     self.profile.cluster_rules())
        docs = [doc for manifest in self.profile.manifests  # what any form needs first: CRDs
                for doc in yamlsrc.manifests(self.profile.resolve(manifest))]
        if not self.companion:
            retire_other_profiles(self.api, self.profile.name, crd_names(docs))
        new_kinds = False
        for doc in docs:
            new_kinds = apply_manifest(self.api, doc, self.namespace,
                                       self.profile.name) or new_kinds
        if new_kinds:  # an owner of a new kind must not leave its dependents behind
            wait_collector_knows(self.api, self.namespace)
        ca_bundle = self._serving_certificate()
        if self.spec.helm is None:
            for doc in rendered_manifests(self.profile, self.namespace, ca_bundle):
                apply_manifest(self.api, doc, self.namespace)
        else:
            self._helm_install()
        self._wait_rolled_out()
        self.starts.append(time.monotonic())

    def _serving_certificate(self) -> str:
        """The TLS Secret the profile names, for a webhook server in its pods (its CA as
        {ca_bundle}); empty when it names none."""
        secret = self.spec.serving_certificate
        if secret is None:
            return ""
        service = self.spec.workload[1]
        with tempfile.TemporaryDirectory(prefix="serving-", dir=self.workdir) as out:
            ca_bundle = pki.serving_pair(Path(out), (f"{service}.{self.namespace}.svc",
                                                      f"{service}.{self.namespace}", service))
            data = {name: base64.b64encode((Path(out) / name).read_bytes()).decode()
                    for name in ("tls.crt", "tls.key", "ca.crt")}
        door.call(client.CoreV1Api(self.api).create_namespaced_secret, self.namespace,
                  {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                   "metadata": {"name": secret}, "data": data})
        return ca_bundle

    def _load_program(self, tag: str, build: gobuild.Build, program: str,
                      entrypoint: tuple[str, ...] = ()) -> None:
        """One built program alone in an image written here, into the cluster."""
        image = archive.Image(tag, (archive.Entry(program, gobuild.ensure(build)),
                                    archive.Entry("/tmp/.keep", data=b"", mode=0o644)),
                              entrypoint=entrypoint)
        with tempfile.TemporaryDirectory(prefix="image-", dir=self.workdir) as out:
            path = Path(out) / "image.tar"
            archive.write(image, path)
            self.cluster.load_image_archive(path)

    def _load_image(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for extra in self.spec.images:
            self._load_program(extra.image, extra.build, extra.program, extra.entrypoint)
        if self.spec.program is not None:
            assert self.profile.build is not None  # the profile's loader checked
            self._load_program(self.spec.image, self.profile.build, self.spec.program)
            return
        engine = getattr(self.cluster, "engine", "docker")
        build = build_command(self.profile, engine)
        if build is not None:
            python_base.ensure_for(engine, dockerfile(self.profile))
            cmd.run(build, timeout=1800)
        self.cluster.load_image(self.spec.image)

    def _wait_rolled_out(self) -> None:
        kind, name = self.spec.workload
        wait_rolled_out(self.api, self.namespace, name, self.spec.ready_timeout, kind)

    def _helm(self) -> str:
        return self.helm or str(helm.ensure(say_to_stderr))

    def _helm_install(self) -> str:
        chart = self.spec.helm
        assert chart is not None
        local = self.profile.resolve(chart.chart)
        values = placeholders(self.spec, self.namespace)
        return helm_install(
            self._helm(), chart, self.release, str(local) if local.exists() else chart.chart,
            self.namespace, self.cluster.info.kubeconfig, self.cluster.info.context or "",
            [self.profile.resolve(path) for path in chart.values],
            {key: fill(value, values) for key, value in chart.settings.items()},
            self.spec.ready_timeout)

    def uninstall(self) -> None:
        if self.spec.daemonset:
            self._serve_until_pods_gone()
        if self.spec.helm is not None:
            info = self.cluster.info
            # the uninstall runs even when the install stopped before helm made the release
            helm_uninstall(self._helm(), self.release, self.namespace, info.kubeconfig,
                           info.context or "", missing_ok=True)
        if self.profile.cluster_rules():
            grants.revoke_cluster_rules(self.api, self.namespace, self.spec.service_account)

    def _serve_until_pods_gone(self) -> None:
        """A node agent outlives the pods it serves: the scenario's other pods go first, with
        what made them (a Deployment would make new ones), so the kubelet tears down what the
        agent set up for them (a DRA driver unprepares their claims) while the agent still
        answers."""
        corev1 = client.CoreV1Api(self.api)
        ours = set(self.pods())
        listed = corev1.list_namespaced_pod(self.namespace)
        others = {p.metadata.name: p for p in listed.items if p.metadata.name not in ours
                  and not (self.companion and _of_daemonset(p))}  # the others' agents stay
        if not others:
            return
        dynamic = kube.dynamic_client(self.api)
        for owner in {top_owner(dynamic, self.namespace, self.api.sanitize_for_serialization(p))
                      for p in others.values()}:
            api_version, kind, name = owner
            # the implementation, or the garbage collector, may have removed it since the list
            writes.delete(dynamic.resources.get(api_version=api_version, kind=kind), name,
                          self.namespace, body={"propagationPolicy": "Background"},
                          missing_ok=True)
        left = set(others)
        stream = watch.Watch()
        for event in stream.stream(corev1.list_namespaced_pod, self.namespace,
                                   resource_version=listed.metadata.resource_version,
                                   timeout_seconds=int(self.spec.ready_timeout)):
            name = event["object"].metadata.name
            if event["type"] == "DELETED":
                left.discard(name)
            elif event["type"] == "ADDED" and name not in ours:
                left.add(name)  # made before its owner went
            if not left:
                stream.stop()
                return

    def start(self, kubeconfig: Path | None = None) -> None:
        if kubeconfig is not None:
            raise ValueError("an in-cluster implementation is delayed by a sidecar, not a "
                             "kubeconfig (aftershock.faults.watchdelay.sidecar)")
        self._scale(self.replicas)
        self._wait_rolled_out()
        self.starts.append(time.monotonic())

    def stop(self) -> None:
        self.save_logs()
        self._scale(0)
        self._wait_rolled_out()

    def save_logs(self, container: str | None = None, into: Path | None = None,
                  headers: bool = True) -> None:
        """Append the current pods' logs (the implementation's container by default), each
        after a line naming its pod unless ``headers`` is off (a JSON-lines log)."""
        corev1 = client.CoreV1Api(self.api)
        target = into or self.log
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a") as out:
            for pod in self.pods():
                try:
                    text = corev1.read_namespaced_pod_log(
                        pod, self.namespace, container=container or self.spec.container)
                except client.exceptions.ApiException as exc:
                    text = "" if not headers else f"(no log: {exc.reason})\n"
                out.write(f"--- pod/{pod}\n{text}" if headers else text)

    def save_node_logs(self) -> None:
        """What the workloads it made log on the nodes' own disks (``node_logs``, e.g. each
        AIStore target's log), copied beside its log as node-logs/<node>/. Where the logs are
        kept per namespace (AIStore's are), only this scenario's namespace is copied: a cluster
        explore reuses still holds the earlier scenarios' logs."""
        if not self.spec.node_logs or not self.node_data.is_dir():
            return
        for node in sorted(p for p in self.node_data.iterdir() if p.is_dir()):
            source = node / self.spec.node_logs
            into = self.workdir / "node-logs" / node.name
            if (source / self.namespace).is_dir():
                source, into = source / self.namespace, into / self.namespace
            if source.is_dir():
                shutil.copytree(source, into, dirs_exist_ok=True)

    def pods(self) -> list[str]:
        kind, name = self.spec.workload
        apps = client.AppsV1Api(self.api)
        read = (apps.read_namespaced_daemon_set if kind == "DaemonSet" else
                apps.read_namespaced_deployment)
        workload = read(name, self.namespace)
        labels = ",".join(f"{k}={v}" for k, v in workload.spec.selector.match_labels.items())
        pods = client.CoreV1Api(self.api).list_namespaced_pod(self.namespace,
                                                              label_selector=labels)
        return sorted(pod.metadata.name for pod in pods.items)

    def _scale(self, replicas: int) -> None:
        """A Deployment to ``replicas``; a DaemonSet kept off every node (0) or let back."""
        kind, name = self.spec.workload
        apps = client.AppsV1Api(self.api)
        if kind == "Deployment":
            door.call(apps.patch_namespaced_deployment_scale, name, self.namespace,
                      {"spec": {"replicas": replicas}})
            return
        door.call(apps.patch_namespaced_daemon_set, name, self.namespace, {"spec": {"template": {
            "spec": {"nodeSelector": {STOPPED: None if replicas else "true"}}}}})


def _of_daemonset(pod: Any) -> bool:
    return any(ref.kind == "DaemonSet" for ref in pod.metadata.owner_references or ())


def top_owner(dynamic: Any, namespace: str, obj: dict[str, Any]) -> tuple[str, str, str]:
    """(apiVersion, kind, name) of what ultimately made ``obj`` (a pod's ReplicaSet's
    Deployment), following controller references; the object itself when nothing did."""
    meta = obj.get("metadata") or {}
    seen = (obj.get("apiVersion") or "v1", obj.get("kind") or "Pod", meta.get("name", ""))
    for _ in range(8):  # owner chains are short; a loop of references ends here
        ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if ref is None or ref.get("kind") == "Node":  # a static pod's mirror: the node's own
            return seen
        seen = (ref["apiVersion"], ref["kind"], ref["name"])
        try:
            owner = dynamic.resources.get(api_version=ref["apiVersion"], kind=ref["kind"]).get(
                name=ref["name"], namespace=namespace)
        except client.exceptions.ApiException:
            return seen
        meta = owner.to_dict().get("metadata") or {}
    return seen


STOPPED = "aftershock.io/implementation-stopped"  # no node has it: a DaemonSet's pods all go
