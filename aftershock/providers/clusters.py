"""The one door from a shape (or a shape file) to a running cluster: the CLI's `cluster up`,
the pytest session's clusters (one per `@shape:<name>` a feature asks for) and a notebook's
Session all open theirs through ``open_cluster``, with the project root passed in (pytest's
rootdir, or the working directory of a command or a notebook), whose clusters/ holds the
shapes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from aftershock.errors import UserError
from aftershock.kube import api as kube
from aftershock.machine import processes
from aftershock.machine.shape import (
    default_shape,
    find_root,
    load_shape,
    project_shapes,
    shipped_shapes,
)
from aftershock.providers.base import ClusterRequest
from aftershock.providers.base import get as provider_named


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
    """Start (or, for a provider that opens one as found, open) the cluster the request
    names, by the provider its module registered under that name."""
    provider = provider_named(request.provider)
    if provider.as_found:
        return provider.open(request, None)
    chosen = load_shape(request.shape) if request.shape else default_shape(project)
    if request.gang_scheduling and not chosen.gang_scheduling:
        chosen = replace(chosen, gang_scheduling=True)
    return provider.open(request, chosen)


class ClusterPool:
    """The session's clusters (of the provider --cluster names), started when first needed,
    one per shape; all removed at the end. A cluster opened as found is the only one: it
    takes no shape."""

    def __init__(self, config: Any):
        self.config = config
        self.project = Path(config.rootpath)
        self._clusters: dict[str, Any] = {}
        self.used: list[str] = []  # described when opened: still there after down()

    def get(self, shape: str | None = None, gang_scheduling: bool = False,
            feature: Path | None = None):
        """The cluster of ``shape`` (as the project of ``feature`` has it); one a profile
        needs kube-scheduler's gangs on is a cluster of its own."""
        if provider_named(self.config.option.aftershock_cluster).as_found:
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


def gc(min_age: float = 60.0) -> processes.GcResult:
    """What dead runs left, removed: ``processes.gc`` with every provider's teardown
    registered (importing this package imported them), so a dead run's kind cluster is deleted
    and its undo records on an existing cluster undone."""
    return processes.gc(min_age)


def remove(state: processes.ClusterState) -> dict[str, str]:
    """One recorded cluster removed by its own provider's teardown; what could not be undone."""
    return processes.remove_cluster(state)
