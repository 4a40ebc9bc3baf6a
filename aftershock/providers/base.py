"""What a provider is: something that gives a running cluster, and says what it can do to it;
and the registry every other part asks for one by name (``get``, ``names``), which each
provider's own module fills (``register``)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from aftershock.errors import UserError
from aftershock.machine.capabilities import Capability, MissingCapability
from aftershock.machine.shape import Shape


@dataclass(frozen=True)
class ClusterRequest:
    """Which cluster: a provider (local, kind, existing, or one a project registers) and, for
    the ones aftershock starts, a shape (a file; None is the project's default)."""

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


def _nothing(request: ClusterRequest) -> None:
    return None


@dataclass(frozen=True)
class Registered:
    """A provider as the rest of aftershock knows it: by its name and these facts, never by a
    list of names kept elsewhere."""

    name: str
    open: Callable[[ClusterRequest, Shape | None], Cluster]
    capabilities: frozenset[Capability]  # the most its clusters can have
    as_found: bool = False  # opens a cluster as it is: no shape, no Kubernetes version
    builds_toolchain: bool = False  # runs the control-plane binaries built here, per version
    check: Callable[[ClusterRequest], None] = field(default=_nothing)  # before anything starts


PROVIDERS: dict[str, Registered] = {}


def register(name: str, *, capabilities: frozenset[Capability], as_found: bool = False,
             builds_toolchain: bool = False,
             check: Callable[[ClusterRequest], None] = _nothing) -> Callable:
    """Decorates the function that opens a cluster of the provider ``name``."""
    def wrap(opener: Callable[[ClusterRequest, Shape | None], Cluster]) -> Callable:
        PROVIDERS[name] = Registered(name, opener, frozenset(capabilities), as_found,
                                     builds_toolchain, check)
        return opener
    return wrap


def names() -> list[str]:
    return sorted(PROVIDERS)


def get(name: str) -> Registered:
    """The provider ``name``; a name none registered is one line naming the known ones."""
    if name in PROVIDERS:
        return PROVIDERS[name]
    close = difflib.get_close_matches(name, names(), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UserError(f"--cluster {name}: no such provider{hint}; known: {', '.join(names())}")


@dataclass(frozen=True)
class ClusterInfo:
    """What every cluster handle exposes, whatever started it."""

    name: str
    provider: str
    kubeconfig: Path
    server: str
    context: str | None = None


@runtime_checkable
class Cluster(Protocol):
    """A running cluster: the harness talks to it only through its kubeconfig."""

    @property
    def info(self) -> ClusterInfo: ...

    @property
    def capabilities(self) -> frozenset[Capability]: ...

    @property
    def shape(self) -> Shape | None: ...

    def down(self) -> None: ...


@runtime_checkable
class CallsBackElsewhere(Protocol):
    """A cluster whose API server reaches this machine at another address than 127.0.0.1 (kind:
    the nodes' default route); a webhook a local process serves listens and is called there."""

    @property
    def host(self) -> str: ...


def host_of(cluster: Cluster) -> str:
    """``{host}`` in a profile: this machine as the cluster's API server reaches it."""
    return cluster.host if isinstance(cluster, CallsBackElsewhere) else "127.0.0.1"


def kube_scheduler(version: str, provider: str, gang: bool = False) -> list[dict[str, Any]]:
    """What a provider that starts the cluster's one scheduler itself knows of it: kube-scheduler
    with its default profile, as the user its certificate names; it binds pod by pod unless the
    shape turned its built-in gang scheduling on (the Workload API's gates). A fact the harness
    established, recorded on every scenario's timeline (judges excuse a gang recycle only on
    it, never on a profile's word)."""
    mode = "its gang scheduling on (Workload API)" if gang else \
        "its default profile (no gang scheduling)"
    return [{"name": "default-scheduler", "user": "system:kube-scheduler", "gang": gang,
             "by": f"kube-scheduler {version} with {mode}, started by the {provider} provider"}]


@runtime_checkable
class Provider(Protocol):
    name: str

    def up(self, shape: Shape, name: str | None = None) -> Cluster: ...


def require(cluster: Cluster, capability: Capability) -> None:
    if capability not in cluster.capabilities:
        raise MissingCapability(cluster.info.provider, capability)
