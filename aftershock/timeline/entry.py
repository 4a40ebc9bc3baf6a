"""One line of the recorded history."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Entry kinds
WATCH = "watch"  # an object event from a watch (type ADDED/MODIFIED/DELETED) or initial SYNC
GAP_START = "gap-start"  # history of `resource` unknown from here (410 Gone, watch lost)
GAP_END = "gap-end"  # re-listed: history of `resource` known again
AUDIT = "audit"  # an apiserver audit event: who did what
MARK = "mark"  # something the harness did (a step, a fault), for reports and ordering


@dataclass
class Entry:
    seq: int
    mono: float  # the recorder's clock (seconds, monotonic): every judgement uses this
    wall: float  # seconds since the epoch, for humans and for joining logs
    kind: str
    resource: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    rv: str = ""
    type: str = ""
    object: dict[str, Any] | None = None
    actor: str = ""  # audit: username
    verb: str = ""  # audit: verb
    subresource: str = ""
    code: int = 0  # audit: response code
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource, self.namespace, self.name)

    @property
    def ref(self) -> str:
        """The object as kubectl names it: pod/ns/name, node/n1."""
        singular = SINGULAR.get(self.resource) or singular_of(self.resource)
        return f"{singular}/{self.namespace}/{self.name}" if self.namespace else \
            f"{singular}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {key: value for key, value in data.items() if value not in ("", None, 0, {})
                or key in ("seq", "mono", "wall", "kind")}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(**data)


SINGULAR = {
    "pods": "pod", "nodes": "node", "leases": "lease", "events": "event",
    "deployments": "deployment", "replicasets": "replicaset", "statefulsets": "statefulset",
    "jobs": "job", "persistentvolumeclaims": "pvc", "persistentvolumes": "pv",
    "resourceclaims": "resourceclaim", "resourceslices": "resourceslice",
    "deviceclasses": "deviceclass", "namespaces": "namespace",
}


def singular_of(plural: str) -> str:
    """A custom resource's singular, as kubectl would print it: storageclusters → storagecluster,
    storageclasses → storageclass."""
    if plural.endswith("sses"):
        return plural[:-2]
    return plural.removesuffix("s")
