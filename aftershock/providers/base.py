"""What a provider is: something that gives a running cluster, and says what it can do to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from aftershock.capabilities import Capability, MissingCapability
from aftershock.shape import Shape


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
