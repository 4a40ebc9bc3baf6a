"""The existing provider: any kubeconfig/context. Destructive faults are refused unless the
context is named in --allow-faults-on."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from kubernetes.config.config_exception import ConfigException

from aftershock.errors import UserError
from aftershock.kube import api as kube
from aftershock.machine import processes as procs
from aftershock.machine import yamlsrc
from aftershock.machine.capabilities import Capability
from aftershock.machine.shape import Shape
from aftershock.providers.base import ClusterInfo, ClusterRequest, register


def current_context(kubeconfig: Path) -> str:
    doc = yamlsrc.load(kubeconfig)
    if not isinstance(doc.data, dict):
        raise doc.error("a kubeconfig is a mapping (apiVersion, clusters, users, contexts)")
    context = doc.data.get("current-context")
    if not context:
        raise doc.error("kubeconfig has no current-context; pass --context", "current-context")
    return str(context)


def _named(doc: yamlsrc.Located, section: str, name: str, field: str) -> dict:
    """The ``field`` mapping of the entry called ``name`` in the list ``section``, as kubectl
    reads it; one line naming where it is wrong if it is not there."""
    entries = doc.data.get(section)
    if not isinstance(entries, list):
        raise doc.error(f"kubeconfig: '{section}' must be a list of named entries", section)
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or "name" not in entry:
            raise doc.error(f"kubeconfig: each of '{section}' needs a name and a {field}",
                            section, index)
        if str(entry["name"]) == name:
            value = entry.get(field)
            value = {} if value is None else value  # as kubectl reads an empty entry
            if not isinstance(value, dict):
                raise doc.error(f"kubeconfig: {section[:-1]} '{name}' needs a '{field}' mapping",
                                section, index, field)
            return value
    raise doc.error(f"kubeconfig: no {section[:-1]} named '{name}'", section)


def _check_structure(kubeconfig: Path, context: str) -> None:
    doc = yamlsrc.load(kubeconfig)
    if not isinstance(doc.data, dict):
        raise doc.error("a kubeconfig is a mapping (apiVersion, clusters, users, contexts)")
    entry = _named(doc, "contexts", context, "context")
    for section in ("clusters", "users"):
        name = entry.get(section[:-1])
        if not isinstance(name, str) or not name:
            raise doc.error(f"kubeconfig: context '{context}' names no {section[:-1]}",
                            "contexts")
        found = _named(doc, section, name, section[:-1])
        if section == "clusters" and not isinstance(found.get("server"), str):
            raise doc.error(f"kubeconfig: cluster '{name}' needs a server URL", section)


def check_kubeconfig(kubeconfig: Path, context: str) -> None:
    """What the client reads of it (its context, cluster, user) is there: one line naming
    file:line if not."""
    _check_structure(kubeconfig, context)
    try:
        kube.load_config(kubeconfig, context)
    except (ConfigException, ValueError, TypeError, KeyError, AttributeError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(f"kubeconfig cannot be used (context '{context}'): {why}",
                        path=str(kubeconfig), line=1) from None


@dataclass
class ExistingCluster:
    kubeconfig: Path
    context: str
    allow_faults_on: tuple[str, ...] = ()
    _state: procs.ClusterState | None = field(default=None, init=False, repr=False)

    @property
    def info(self) -> ClusterInfo:
        return ClusterInfo(self.context, "existing", self.kubeconfig, "", self.context)

    @property
    def capabilities(self) -> frozenset[Capability]:
        if self.context in self.allow_faults_on:
            return frozenset({Capability.DESTRUCTIVE, Capability.CONTAINERS})
        return frozenset({Capability.CONTAINERS})

    @property
    def shape(self) -> Shape | None:
        return None

    @property
    def state(self) -> procs.ClusterState:
        """What the harness starts beside this cluster (implementations under test, their
        credentials), recorded as for a cluster of ours, so `cluster gc` ends it when the run
        that started it was killed. Made when first needed."""
        if self._state is None:
            owner, started = procs.current_owner()
            name = f"existing-{owner}-{int(time.time() * 1000) % 100000:05d}"
            workdir = procs.clusters_root() / name
            workdir.mkdir(parents=True, mode=0o700)
            self._state = procs.ClusterState(name, "existing", owner, started, time.time(),
                                             str(workdir), str(self.kubeconfig),
                                             context=self.context)
            self._state.save()
        return self._state

    def remember_undo(self, key: str, action: dict) -> None:
        procs.remember_undo(self.state, key, action)

    def forget_undo(self, key: str) -> None:
        procs.forget_undo(self.state, key)

    def down(self) -> None:
        """Never stops someone else's cluster: only what the harness started beside it."""
        if self._state is not None:
            procs.terminate(list(self._state.processes.values()))
            shutil.rmtree(self._state.workdir, ignore_errors=True)
            self._state = None


@procs.teardown("existing", after_processes=True)
def undo_recorded(state: procs.ClusterState) -> dict[str, str]:
    """What a killed run left on a cluster it reused, undone as its record says: its cordons
    lifted, its node labels put back, its namespaces (and the cluster-scoped objects made for
    them) removed. Returns what could not be undone (its key → why)."""
    failures: dict[str, str] = {}
    if not state.undo:
        return failures
    try:
        api = kube.api_client(state.kubeconfig, state.context or None)
    except Exception as exc:  # the kubeconfig is gone or unusable: nothing can be undone
        return dict.fromkeys(state.undo, str(exc))
    with api:
        for key, action in state.undo.items():
            try:
                if action["do"] == "uncordon":
                    kube.uncordon(api, action["node"])
                elif action["do"] == "label":
                    with kube.suppress_not_found():
                        kube.set_node_label(api, action["node"], action["key"],
                                            action["value"])
                elif action["do"] == "retire_namespace":
                    kube.retire_namespace(api, action["namespace"])
                elif action["do"] == "delete_object":
                    # recorded before the object is made, and removed only after its delete:
                    # a run killed in between may have made it or deleted it already
                    kube.delete_object(api, action["api_version"], action["kind"],
                                       action["name"], missing_ok=True)
            except Exception as exc:  # each is tried; what fails is reported
                failures[key] = str(exc)
    return failures


def open_existing(kubeconfig: str | None, context: str | None,
                  allow_faults_on: list[str]) -> ExistingCluster:
    path = Path(kubeconfig).expanduser() if kubeconfig else Path.home() / ".kube" / "config"
    if not path.is_file():
        raise UserError("no such kubeconfig (pass --kubeconfig)", path=str(path))
    context = context or current_context(path)
    check_kubeconfig(path, context)
    return ExistingCluster(path, context, tuple(allow_faults_on))


def _check(request: ClusterRequest) -> None:
    """The kubeconfig and context read now, not at the first scenario."""
    open_existing(request.kubeconfig, request.context, request.allow_faults_on or [])


@register("existing", capabilities=frozenset({Capability.DESTRUCTIVE, Capability.CONTAINERS}),
          as_found=True,
          check=_check)
def open_cluster(request: ClusterRequest, shape: Shape | None) -> ExistingCluster:
    return open_existing(request.kubeconfig, request.context, request.allow_faults_on or [])
