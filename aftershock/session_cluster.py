"""The one door from a shape (or a shape file) to a running cluster: the CLI's `cluster up`,
the pytest session's clusters (one per `@shape:<name>` a feature asks for) and a notebook's
Session all open theirs through ``open_cluster``, with the project root passed in (pytest's
rootdir, or the working directory of a command or a notebook), whose clusters/ holds the
shapes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aftershock import kube
from aftershock.errors import UserError
from aftershock.providers.existing import open_existing
from aftershock.providers.kind import KindProvider
from aftershock.providers.local import LocalProvider
from aftershock.shape import (
    default_shape,
    find_root,
    load_shape,
    project_shapes,
    shipped_shapes,
)


@dataclass(frozen=True)
class ClusterRequest:
    """Which cluster: a provider (local, kind, existing) and, for the ones aftershock starts,
    a shape (a file; None is the project's default)."""

    provider: str = "local"
    shape: str | Path | None = None
    kubernetes_version: str | None = None
    name: str | None = None
    detached: bool = False  # outlives this process (`aftershock cluster up`)
    kubeconfig: str | None = None  # existing
    context: str | None = None  # existing
    allow_faults_on: Any = None  # existing
    gang_scheduling: bool = False  # a profile's need, on top of the shape's own fields

    @classmethod
    def from_options(cls, option: Any, shape: str | Path | None = None) -> ClusterRequest:
        """What pytest's --cluster, --shape, --kubernetes-version, ... options ask for."""
        return cls(option.aftershock_cluster, shape or option.aftershock_shape,
                   option.aftershock_kubernetes_version, kubeconfig=option.aftershock_kubeconfig,
                   context=option.aftershock_context,
                   allow_faults_on=option.aftershock_allow_faults_on)


def shape_file(name: str, project: Path, feature: Path | None = None) -> Path:
    """clusters/<name>.yaml for a `@shape:<name>` tag: the one of the project that owns the
    feature (the nearest folder up whose pyproject.toml names aftershock), else ``project``'s,
    else the one aftershock ships; a clear error when none has it."""
    owners = list(dict.fromkeys([*filter(None, [find_root(feature.resolve().parent)
                                                if feature else None]), project]))
    folders = list(dict.fromkeys([*(project_shapes(owner) for owner in owners),
                                  shipped_shapes()]))
    for folder in folders:
        path = folder / f"{name}.yaml"
        if path.is_file():
            return path
    known = ", ".join(sorted({p.stem for folder in folders
                              for p in folder.glob("*.yaml")})) or "none"
    where = " or ".join(str(folder) for folder in folders)
    raise UserError(f"tag @shape:{name}: no {name}.yaml in {where} (known shapes: {known})")


def open_cluster(request: ClusterRequest, project: Path):
    """Start (or, for an existing one, open) the cluster the request names."""
    if request.provider == "existing":
        return open_existing(request.kubeconfig, request.context, request.allow_faults_on)
    chosen = load_shape(request.shape) if request.shape else default_shape(project)
    if request.gang_scheduling and not chosen.gang_scheduling:
        chosen = replace(chosen, gang_scheduling=True)
    if request.provider == "kind":
        return KindProvider(request.kubernetes_version).up(chosen, request.name)
    return LocalProvider(request.kubernetes_version).up(chosen, request.name,
                                                         detached=request.detached)


class ClusterPool:
    """The session's clusters (local or kind), started when first needed, one per shape; all
    removed at the end. An existing cluster is the only one: it takes no shape."""

    def __init__(self, config: Any):
        self.config = config
        self.project = Path(config.rootpath)
        self._clusters: dict[str, Any] = {}
        self.used: list[str] = []  # described when opened: still there after down()

    def get(self, shape: str | None = None, gang_scheduling: bool = False,
            feature: Path | None = None):
        """The cluster of ``shape`` (as the project of ``feature`` has it); one a profile
        needs kube-scheduler's gangs on is a cluster of its own."""
        if self.config.option.aftershock_cluster == "existing":
            shape, gang_scheduling = None, False
        path = shape_file(shape, self.project, feature) if shape else None
        key = str(path or "default") + (" with gang scheduling" if gang_scheduling else "")
        if key not in self._clusters:
            request = replace(ClusterRequest.from_options(self.config.option, path),
                              gang_scheduling=gang_scheduling)
            cluster = open_cluster(request, self.project)
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
