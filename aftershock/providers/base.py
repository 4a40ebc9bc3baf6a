"""What a provider is: something that gives a running cluster, and says what it can do to it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

from aftershock.shape import Shape


class Capability(StrEnum):
    NODE_FAILURE = "node_failure"
    NODE_DELETE = "node_delete"
    COMPONENT_RESTART = "component_restart"
    WATCH_DELAY_FOR_COMPONENTS = "watch_delay_for_components"
    LOAD_IMAGE = "load_image"
    DESTRUCTIVE = "destructive_faults"
    NODE_ADD = "node_add"
    CHAOS_MESH = "chaos_mesh"  # Chaos Mesh's controller can be installed (pod-kill)


class MissingCapability(Exception):
    """A step needs something the provider cannot do; the step is skipped with this reason."""

    def __init__(self, provider: str, capability: Capability, why: str = ""):
        self.provider = provider
        self.capability = capability
        detail = f": {why}" if why else ""
        super().__init__(f"provider '{provider}' lacks capability '{capability}'{detail}")


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
