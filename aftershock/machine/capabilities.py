"""What a cluster may be able to do to itself, named once: a provider declares the ones it has,
a property the ones it needs, a step the one it uses."""

from __future__ import annotations

from enum import StrEnum


class Capability(StrEnum):
    NODE_FAILURE = "node_failure"
    NODE_DELETE = "node_delete"
    COMPONENT_RESTART = "component_restart"
    WATCH_DELAY_FOR_COMPONENTS = "watch_delay_for_components"
    LOAD_IMAGE = "load_image"
    DESTRUCTIVE = "destructive_faults"
    NODE_ADD = "node_add"
    CHAOS_MESH = "chaos_mesh"  # Chaos Mesh's controller can be installed (pod-kill)
    NODE_FILES = "node_files"  # a node's own files can be read (a real kubelet's state)
    NODE_AGENT = "node_agent"  # a node can reboot and its real kubelet restart
    CONTAINERS = "containers"  # a pod's containers run, and what they print can be read


class MissingCapability(Exception):
    """A step needs something the provider cannot do; the step is skipped with this reason."""

    def __init__(self, provider: str, capability: Capability, why: str = ""):
        self.provider = provider
        self.capability = capability
        detail = f": {why}" if why else ""
        super().__init__(f"provider '{provider}' lacks capability '{capability}'{detail}")
