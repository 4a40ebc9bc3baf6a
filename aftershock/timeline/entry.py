"""One line of the recorded history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Entry kinds
WATCH = "watch"  # an object event from a watch (type ADDED/MODIFIED/DELETED) or initial SYNC
GAP_START = "gap-start"  # history of `resource` unknown from here (410 Gone, a failed list)
# Re-listed: history of `resource` known again. The differences the re-list found are applied
# at once (extra["changes"]), so no state between the old and the new one is ever judged.
GAP_END = "gap-end"
AUDIT = "audit"  # an apiserver audit event: who did what
MARK = "mark"  # something the harness did (a step, a fault), for reports and ordering
ERROR = "error"  # the recorder failed on `resource` (a watch broke, a list failed)
ANOMALY = "anomaly"  # the stream of `resource` is not the history it claims (order broken)
# A wait for the namespace to settle ran out: an end state judged from here on is not the one
# the implementation settles on. A trouble, from this moment on, for the judges that read QUIET.
UNSETTLED = "unsettled"
# The key of a MARK's extra a judgement writes once every watch had caught up (or a gap was
# opened): the resources found behind. The record a judgement reads ends with it, a moment of
# the recorder's own, never a watch event's arrival.
BEHIND = "behind"
# The audit log was read before a judgement: extra["caught_up"] says whether it reached that
# moment (a judgement of who-did-what over a log that lags is not earned).
AUDIT_SYNC = "audit-sync"

# The `resource` of an ERROR on the audit log; judges of who did what read it.
AUDIT_LOG = "audit"
# The key of a MARK's extra that lists the schedulers the provider started (each a dict: name,
# the user it binds as, whether it is a gang scheduler, and by what): a fact the harness
# established about the cluster, for judges that excuse what only another scheduler prevents.
SCHEDULERS = "schedulers"
# The key of a MARK's extra that holds the version the API server reports (its gitVersion,
# e.g. "v1.37.2"): the Kubernetes a scenario's verdicts were reached on.
KUBERNETES = "kubernetes"
# What judges of an end state read besides their resources: that the namespace had settled.
QUIET = "quiet"
# What an application an operator manages says of itself (a probe of it, read on a schedule),
# recorded as objects of this resource (`sut/app_state.py`)
APP_STATES = "appstates"


@dataclass(slots=True)
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

    def row(self) -> list[Any]:
        """Every field, in FIELDS' order (how timeline.jsonl keeps it)."""
        return [self.seq, self.mono, self.wall, self.kind, self.resource, self.namespace,
                self.name, self.uid, self.rv, self.type, self.object, self.actor, self.verb,
                self.subresource, self.code, self.detail, self.extra]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        get = data.get  # positional: a long history is a million of these
        return cls(data["seq"], data["mono"], data["wall"], data["kind"], get("resource", ""),
                   get("namespace", ""), get("name", ""), get("uid", ""), get("rv", ""),
                   get("type", ""), get("object"), get("actor", ""), get("verb", ""),
                   get("subresource", ""), get("code", 0), get("detail", ""),
                   get("extra") or {})


FIELDS = ("seq", "mono", "wall", "kind", "resource", "namespace", "name", "uid", "rv", "type",
          "object", "actor", "verb", "subresource", "code", "detail", "extra")
SINGULAR = {
    "pods": "pod", "nodes": "node", "leases": "lease", "events": "event",
    "deployments": "deployment", "replicasets": "replicaset", "statefulsets": "statefulset",
    "jobs": "job", "persistentvolumeclaims": "pvc", "persistentvolumes": "pv",
    "resourceclaims": "resourceclaim", "resourceslices": "resourceslice",
    "deviceclasses": "deviceclass", "namespaces": "namespace",
    "controllerrevisions": "controllerrevision", APP_STATES: "appstate",
}


def singular_of(plural: str) -> str:
    """A custom resource's singular, as kubectl would print it: storageclusters → storagecluster,
    storageclasses → storageclass, policies → policy."""
    if plural.endswith("sses"):
        return plural[:-2]
    if plural.endswith("ies"):
        return plural[:-3] + "y"
    return plural.removesuffix("s")
