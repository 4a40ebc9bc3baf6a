"""Installing and running an implementation in the cluster (a profile's ``install_in_cluster``):
its image built if asked and loaded into the nodes, its manifests applied or its helm chart
installed in the scenario's namespace under its own ServiceAccount (so the audit log names it),
and its Deployment waited for. Stopping scales it to zero, keeping its pods' logs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from aftershock import door, yamlsrc
from aftershock.manifests import apply_manifest, wait_collector_knows, wait_rolled_out
from aftershock.providers import kind_commands as cmd
from aftershock.providers.kindimage import python_base
from aftershock.sut import grants
from aftershock.sut.placeholders import fill
from aftershock.sut.profile import Helm, InCluster, Profile


def placeholders(spec: InCluster, namespace: str) -> dict[str, str]:
    return {"namespace": namespace, "image": spec.image, "service_account": spec.service_account}


def helm_install(helm: str, chart: Helm, release: str, chart_ref: str, namespace: str,
                 kubeconfig: Path, context: str, values: list[Path], settings: dict[str, str],
                 timeout: float) -> list[str]:
    argv = [helm, "upgrade", "--install", release, chart_ref, "--namespace", namespace,
            "--kubeconfig", str(kubeconfig), "--kube-context", context,
            "--wait", "--timeout", f"{int(timeout)}s"]
    if chart.repo:
        argv += ["--repo", chart.repo]
    if chart.version:
        argv += ["--version", chart.version]
    for path in values:
        argv += ["--values", str(path)]
    for key, value in settings.items():
        argv += ["--set", f"{key}={value}"]
    return argv


def helm_uninstall(helm: str, release: str, namespace: str, kubeconfig: Path,
                   context: str) -> list[str]:
    return [helm, "uninstall", release, "--namespace", namespace, "--kubeconfig",
            str(kubeconfig), "--kube-context", context, "--wait"]


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


def rendered_manifests(profile: Profile, namespace: str) -> list[dict[str, Any]]:
    """Every document of every manifest, {namespace}, {image} and {service_account} filled in."""
    spec = profile.in_cluster
    assert spec is not None
    values = placeholders(spec, namespace)
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
    helm: str = "helm"
    replicas: int = 1
    starts: list[float] = field(default_factory=list)

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
    def log(self) -> Path:
        return self.workdir / f"{self.profile.name}.log"

    @property
    def release(self) -> str:
        helm = self.spec.helm
        return (helm.release if helm and helm.release else None) or self.profile.name

    def install(self) -> None:
        engine = getattr(self.cluster, "engine", "docker")
        build = build_command(self.profile, engine)
        if build is not None:
            python_base.ensure_for(engine, dockerfile(self.profile))
            cmd.run(build, timeout=1800)
        self.cluster.load_image(self.spec.image)
        grants.grant(self.api, self.namespace, self.spec.service_account, self.profile.rbac,
                     self.profile.cluster_rbac)
        new_kinds = False
        for manifest in self.profile.manifests:  # what any form needs first, e.g. CRDs
            for doc in yamlsrc.manifests(self.profile.resolve(manifest)):
                new_kinds = apply_manifest(self.api, doc, self.namespace) or new_kinds
        if new_kinds:  # an owner of a new kind must not leave its dependents behind
            wait_collector_knows(self.api, self.namespace)
        if self.spec.helm is None:
            for doc in rendered_manifests(self.profile, self.namespace):
                apply_manifest(self.api, doc, self.namespace)
        else:
            cmd.run(self._helm_install(), timeout=self.spec.ready_timeout + 60)
        wait_rolled_out(self.api, self.namespace, self.spec.deployment, self.spec.ready_timeout)
        self.starts.append(time.monotonic())

    def _helm_install(self) -> list[str]:
        chart = self.spec.helm
        assert chart is not None
        local = self.profile.resolve(chart.chart)
        values = placeholders(self.spec, self.namespace)
        return helm_install(
            self.helm, chart, self.release, str(local) if local.exists() else chart.chart,
            self.namespace, self.cluster.info.kubeconfig, self.cluster.info.context or "",
            [self.profile.resolve(path) for path in chart.values],
            {key: fill(value, values) for key, value in chart.settings.items()},
            self.spec.ready_timeout)

    def uninstall(self) -> None:
        if self.spec.helm is not None:
            info = self.cluster.info
            cmd.run(helm_uninstall(self.helm, self.release, self.namespace, info.kubeconfig,
                                   info.context or ""))
        if self.profile.cluster_rbac:
            grants.revoke_cluster_rules(self.api, self.namespace, self.spec.service_account)

    def start(self, kubeconfig: Path | None = None) -> None:
        if kubeconfig is not None:
            raise ValueError("an in-cluster implementation is delayed by a sidecar, not a "
                             "kubeconfig (aftershock.faults.watchdelay.sidecar)")
        self._scale(self.replicas)
        wait_rolled_out(self.api, self.namespace, self.spec.deployment, self.spec.ready_timeout)
        self.starts.append(time.monotonic())

    def stop(self) -> None:
        self.save_logs()
        self._scale(0)
        wait_rolled_out(self.api, self.namespace, self.spec.deployment, self.spec.ready_timeout)

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

    def pods(self) -> list[str]:
        deployment = client.AppsV1Api(self.api).read_namespaced_deployment(
            self.spec.deployment, self.namespace)
        labels = ",".join(f"{k}={v}" for k, v in deployment.spec.selector.match_labels.items())
        pods = client.CoreV1Api(self.api).list_namespaced_pod(self.namespace,
                                                              label_selector=labels)
        return sorted(pod.metadata.name for pod in pods.items)

    def _scale(self, replicas: int) -> None:
        door.call(client.AppsV1Api(self.api).patch_namespaced_deployment_scale,
                  self.spec.deployment, self.namespace, {"spec": {"replicas": replicas}})


