"""What a provider is: something that gives a running cluster, and says what it can do to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class Provider(Protocol):
    name: str

    def up(self, shape: Shape, name: str | None = None) -> Cluster: ...


def require(cluster: Cluster, capability: Capability) -> None:
    if capability not in cluster.capabilities:
        raise MissingCapability(cluster.info.provider, capability)
