"""The resources the recorder lists and watches, and where the API serves them."""

from __future__ import annotations

from dataclasses import dataclass


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
    # What operators make beside their pods: an end state (E1) or a count of writes (E2) over
    # a kind nobody watched could only be unknown. A Secret is recorded without its values.
    Resource("services", "v1"),
    Resource("configmaps", "v1"),
    Resource("secrets", "v1"),
)


def custom(group: str, version: str, plural: str) -> Resource:
    return Resource(plural, f"{group}/{version}")
