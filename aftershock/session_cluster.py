"""Choosing and opening the clusters a test session runs on: the one the options name, and one
per cluster shape a feature asks for with `@shape:<name>` (the project's clusters/<name>.yaml;
the project is pytest's rootdir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aftershock import kube
from aftershock.errors import UserError
from aftershock.providers.existing import open_existing
from aftershock.providers.kind import KindProvider
from aftershock.providers.local import LocalProvider
from aftershock.shape import default_shape, load_shape, project_shapes


def shape_file(name: str) -> Path:
    """clusters/<name>.yaml for a `@shape:<name>` tag; a clear error when there is none."""
    shapes = project_shapes()
    path = shapes / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in shapes.glob("*.yaml"))) or "none"
        raise UserError(f"tag @shape:{name}: no clusters/{name}.yaml in {shapes.parent} "
                        f"(known shapes: {known})")
    return path


def open_cluster(config: Any, shape: str | Path | None = None):
    option = config.option
    if option.aftershock_cluster == "existing":
        return open_existing(option.aftershock_kubeconfig, option.aftershock_context,
                             option.aftershock_allow_faults_on)
    path = shape or option.aftershock_shape
    chosen = load_shape(path) if path else default_shape()
    if option.aftershock_cluster == "kind":
        return KindProvider(option.aftershock_kubernetes_version).up(chosen)

    return LocalProvider(option.aftershock_kubernetes_version).up(chosen)


class ClusterPool:
    """The session's clusters (local or kind), started when first needed, one per shape; all
    removed at the end. An existing cluster is the only one: it takes no shape."""

    def __init__(self, config: Any):
        self.config = config
        self._clusters: dict[str, Any] = {}
        self.used: list[str] = []  # described when opened: still there after down()

    def get(self, shape: str | None = None):
        if self.config.option.aftershock_cluster == "existing":
            shape = None
        key = shape or "default"
        if key not in self._clusters:
            cluster = open_cluster(self.config, shape_file(shape) if shape else None)
            self._clusters[key] = cluster
            self.used.append(self.describe(cluster))
            info = cluster.info
            with kube.api_client(info.kubeconfig, info.context) as api:
                kube.sweep_cluster_scoped(api)  # what a killed run left behind
        return self._clusters[key]

    @staticmethod
    def describe(cluster) -> str:
        """Provider, name, Kubernetes version and shape: shown at the end of the run."""
        state = getattr(cluster, "state", None)
        known = state.kubernetes_version if state else ""
        version = f"Kubernetes v{known}" if known else "version not known"
        shape = cluster.shape.name if getattr(cluster, "shape", None) else "as found"
        return f"{cluster.info.provider} cluster {cluster.info.name}: {version}, shape {shape}"

    def down(self) -> None:
        for cluster in reversed(list(self._clusters.values())):
            cluster.down()
        self._clusters.clear()
