"""The resources the recorder lists and watches, and where the API serves them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Resource:
    name: str  # plural, as in the API path and the audit log's objectRef.resource
    group_version: str  # "v1" for core, else "group/version"
    # Older versions to use where this one is not served (DRA is v1beta2 before 1.34).
    fallbacks: tuple[str, ...] = ()

    def candidates(self) -> list[Resource]:
        return [self, *(Resource(self.name, version) for version in self.fallbacks)]

    @property
    def path(self) -> str:
        if self.group_version == "v1":
            return f"/api/v1/{self.name}"
        return f"/apis/{self.group_version}/{self.name}"


DEFAULT_RESOURCES = (
    Resource("pods", "v1"),
    Resource("nodes", "v1"),
    Resource("namespaces", "v1"),
    Resource("leases", "coordination.k8s.io/v1"),
    Resource("events", "v1"),
    Resource("deployments", "apps/v1"),
    Resource("replicasets", "apps/v1"),
    Resource("statefulsets", "apps/v1"),
    Resource("controllerrevisions", "apps/v1"),  # a StatefulSet's or DaemonSet's revisions
    Resource("jobs", "batch/v1"),
    Resource("persistentvolumeclaims", "v1"),
    Resource("persistentvolumes", "v1"),
    Resource("resourceclaims", "resource.k8s.io/v1", ("resource.k8s.io/v1beta2",)),
    Resource("resourceslices", "resource.k8s.io/v1", ("resource.k8s.io/v1beta2",)),
    Resource("deviceclasses", "resource.k8s.io/v1", ("resource.k8s.io/v1beta2",)),
    # An administrator's device taints (KEP-5055): v1 from 1.37, off by default before.
    Resource("devicetaintrules", "resource.k8s.io/v1",
             ("resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3")),
    # What operators make beside their pods: an end state (E1) or a count of writes (E2) over
    # a kind nobody watched could only be unknown. A Secret is recorded without its values.
    Resource("services", "v1"),
    Resource("configmaps", "v1"),
    Resource("secrets", "v1"),
)


def custom(group: str, version: str, plural: str) -> Resource:
    return Resource(plural, f"{group}/{version}")


# What lets a role's holder change objects of a kind (subresources count as their resource).
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection", "*"})


def written_by(rules: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(API group, plural) of every kind RBAC rules let their holder write, in the order they
    are named. A wildcard resource names no kind to record and is left out; a wildcard group
    ("*") is any group that serves the plural."""
    found: dict[tuple[str, str], None] = {}
    for rule in rules:
        if not WRITE_VERBS & set(rule.get("verbs") or ()):
            continue
        for group in rule.get("apiGroups") or [""]:
            for name in rule.get("resources") or ():
                plural = name.split("/", 1)[0]
                if plural and plural != "*":
                    found[(group, plural)] = None
    return list(found)


def named(kind: str) -> tuple[str, str]:
    """'roles.rbac.authorization.k8s.io' → ('rbac.authorization.k8s.io', 'roles'); 'pods' →
    ('', 'pods'): how kubectl names a kind, and how a feature's @records tag does."""
    plural, _, group = kind.partition(".")
    return group, plural


def spelled(group: str, plural: str) -> str:
    return f"{plural}.{group}" if group else plural
