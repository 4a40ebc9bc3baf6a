"""Histories for the metamorphic fuzz of the judges (tests/unit/test_metamorphic.py and
benchmarks/bench_metamorphic.py): what happened in a cluster (a ``Truth``: every write on the
cluster's clock in etcd's order, every audited request, the harness's marks, where the
recorder's watches broke), and what a recorder makes of it (``record``): watch events that
arrive when they arrive, an audit log read a moment later, gaps closed by a re-list.

The same truth recorded twice, with other delays and another interleaving of the streams,
is the same history to a judge that reads the cluster's order and clock; so is a truth with an
unrelated life added under a used name, or unrelated objects and requests beside it; and a
truth recorded with a stretch lost to a gap can only leave a verdict unknown."""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from aftershock.timeline.entry import (
    ANOMALY,
    AUDIT,
    AUDIT_SYNC,
    ERROR,
    GAP_END,
    GAP_START,
    MARK,
    WATCH,
    Entry,
)

NS, ELSEWHERE = "ns", "elsewhere"
EPOCH = 1e9  # the cluster's wall clock at time 0
PODS = ("web-0", "web-1", "web-2", "db-0", "data-0", "data-1", "data-2")
NODES = ("n1", "n2", "n3")
NAMES = {"pods": PODS, "nodes": NODES, "resourceclaims": ("c0", "c1"), "gangs": ("train", "web"),
         "events": ("e0", "e1"), "statefulsets": ("data",), "storageclusters": ("data",),
         "noderecords": ("r0", "r1"), "persistentvolumeclaims": ("data-data-0", "data-data-2"),
         "persistentvolumes": ("pv-0",), "deployments": ("web",),
         "resourceslices": ("n1-d", "n2-d"), "podgroups": ("web",), "queues": ("team",)}
# What the judges of one family read together, beside pods.
FAMILIES = (("podgroups", "queues", "nodes"), ("gangs", "events"),
            ("resourceclaims", "resourceslices", "nodes"), ("statefulsets", "storageclusters"),
            ("persistentvolumeclaims", "persistentvolumes", "statefulsets"),
            ("noderecords", "nodes"), ("deployments",), ("nodes",))
CLUSTER_SCOPED = ("nodes", "persistentvolumes", "resourceslices", "queues")
ACTORS = ("ctl", "other", "system:serviceaccount:kube-system:generic-garbage-collector")
MAX_LAG = 2.0  # the most a watch event arrives after it was written
AUDIT_LAG = 0.5  # the most the audit log is read after a request completed


def second(at: float) -> str:
    """The whole second the API server stamps a write at ``at`` with."""
    import datetime as dt

    return dt.datetime.fromtimestamp(EPOCH + math.floor(at), dt.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def stamp(at: float) -> str:
    """A moment of the cluster as the audit log stamps it (microseconds)."""
    import datetime as dt

    return dt.datetime.fromtimestamp(EPOCH + at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _pod(name: str, uid: str, draw) -> dict:
    app = name.rsplit("-", 1)[0]
    meta = {"name": name, "namespace": NS, "uid": uid,
            "labels": {"app": app, "app.kubernetes.io/name": app, "group": "0"}}
    if draw(st.integers(0, 5)) == 0:
        meta["deletionTimestamp"] = second(0)
    ready = draw(st.booleans())
    spec = {"nodeName": draw(st.sampled_from(("", *NODES))),
            "containers": [{"name": "w", "resources": {"requests": {
                "cpu": draw(st.sampled_from(("300m", "600m")))}}}]}
    if draw(st.integers(0, 2)):  # a pod without a claim is placed by its requests alone (B6)
        spec["resourceClaims"] = [{"name": "d", "resourceClaimName": "c0"}]
    return {"metadata": meta, "spec": spec,
            "status": {"phase": draw(st.sampled_from(("Running", "Pending", "Succeeded"))),
                       "conditions": [{"type": "Ready", "status": str(ready)}],
                       "containerStatuses": [{"name": "w", "state": draw(st.sampled_from((
                           {"running": {"startedAt": second(0)}},
                           {"running": {"startedAt": second(5)}},
                           {"waiting": {"reason": "CreateContainerError"}})))}]}}


def make(resource: str, name: str, uid: str, draw) -> dict:
    """One state of an object, drawn."""
    meta = {"name": name, "namespace": "" if resource in CLUSTER_SCOPED else NS, "uid": uid}
    status = draw(st.sampled_from(("True", "False")))
    at = second(draw(st.sampled_from((0, 10))))
    if resource == "pods":
        return _pod(name, uid, draw)
    if resource == "nodes":
        return {"metadata": meta, "spec": {"unschedulable": draw(st.booleans())},
                "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"},
                           "conditions": [
                    {"type": "Ready", "status": status, "lastTransitionTime": at}]}}
    if resource == "resourceclaims":
        pool = draw(st.sampled_from(NODES))
        return {"metadata": meta, "status": {
            "allocation": {"devices": {"results": [{"driver": "d", "pool": pool,
                                                    "device": draw(st.sampled_from("ab"))}]}},
            "reservedFor": [{"uid": f"uid-{draw(st.sampled_from(PODS))}"}]}}
    if resource == "gangs":
        return {"metadata": meta, "spec": {"groups": 1, "minAvailable": 2},
                "status": {"groups": [{"index": 0, "conditions": [
                    {"type": "Breached", "status": status, "lastTransitionTime": at}]}]}}
    if resource == "events":
        return {"metadata": meta, "involvedObject": {"name": "train"},
                "reason": draw(st.sampled_from(("GangTerminated", "ScheduledZero", "DataWiped")))}
    if resource == "statefulsets":
        return {"metadata": meta, "spec": {"replicas": draw(st.integers(1, 3))}}
    if resource == "storageclusters":
        return {"metadata": meta, "status": {"members": [0, 1], "finished": [2]}}
    if resource == "resourceslices":
        return {"metadata": meta, "spec": {"driver": "d", "nodeName": name.split("-")[0],
                                           "pool": {"name": draw(st.sampled_from(NODES))},
                                           "devices": [{"name": device} for device in draw(
                                               st.lists(st.sampled_from(("g0", "g1")),
                                                        max_size=2))]}}
    if resource == "deployments":  # Kubernetes omits a zero counter, and a list may lack
        obj = {"metadata": meta, "spec": {"replicas": 3}, "status": {}}  # an element
        ready = draw(st.sampled_from((None, 0, 1, 3)))
        if ready is not None:
            obj["status"]["readyReplicas"] = ready
        if draw(st.booleans()):
            obj["status"]["conditions"] = [{"type": "Available", "status": status}]
        return obj
    if resource == "podgroups":
        return {"metadata": meta, "spec": {"minMember": draw(st.integers(1, 3)),
                                           "queue": "team"}}
    if resource == "queues":
        return {"metadata": meta, "spec": {"limits": {
            "cpu": draw(st.sampled_from(("1", "500m", "-1")))}}}
    if resource == "noderecords":
        return {"metadata": meta, "spec": {"index": draw(st.integers(0, 2)),
                                           "node": draw(st.sampled_from(NODES))},
                "status": {"touched": at}}
    return {"metadata": meta, "spec": {"volumeName": "pv-0"}}


@dataclass
class Write:
    """One change committed to etcd: its revision, when (the cluster's clock), what."""

    rv: int
    t: float
    resource: str
    namespace: str
    name: str
    uid: str
    type: str
    obj: dict
    written: float  # the second its object's newest managedFields stamp says (wall - EPOCH)
    marked: bool = False  # it set the deletion mark (a graceful delete's, or an eviction's)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource, self.namespace, self.name)


@dataclass
class Request:
    """One audited request: received and completed (the cluster's clock)."""

    received: float
    done: float
    verb: str
    resource: str
    namespace: str
    name: str
    subresource: str
    actor: str
    code: int
    uid: str = ""
    labels: dict = field(default_factory=dict)


@dataclass
class Gap:
    """The recorder's watch of ``resource`` broke at ``opened`` (everything it had delivered
    of it came before) and a re-list closed it at ``closed`` (None: never)."""

    resource: str
    opened: float
    closed: float | None


@dataclass
class Truth:
    writes: list[Write]
    requests: list[Request]
    marks: list[tuple[float, str, dict]]
    recorded: set[str]
    audited: bool
    gaps: list[Gap]
    troubles: list[tuple[str, str, float]]  # (ERROR or ANOMALY, resource, when)
    end: float
    caught_up: bool = True
    said: bool = True  # the recorder said what it records (a "recording" mark)
    node_state: list[dict] = field(default_factory=list)  # node-1's checkpoint, read there
    prepare_log: list[dict] = field(default_factory=list)  # a driver's word on node n1
    results: list[dict] = field(default_factory=list)  # a data probe's reads

    def judges(self) -> dict[str, Any]:
        """The moments a judgement's parameters may name: each a moment of the truth."""
        moments = sorted({0.0, *(w.t for w in self.writes), *(m[0] for m in self.marks),
                          self.end})
        return {"moments": moments}


@st.composite
def truths(draw, steps: int = 40) -> Truth:
    """What happened in a cluster: writes of a few resources, each with the request that made
    it some of the time (and refused ones), faults fired, gaps in the recorder's watches."""
    writes: list[Write] = []
    requests: list[Request] = []
    marks: list[tuple[float, str, dict]] = []
    gaps: list[Gap] = []
    troubles: list[tuple[str, str, float]] = []
    t, rv = 0.1, 100
    uids: dict[tuple[str, str, str], str] = {}
    states: dict[tuple[str, str, str], Write] = {}
    lives = [0]
    recorded, audited, said = set(NAMES), True, True
    if draw(st.integers(0, 3)) == 0:  # a recorder that left some out
        recorded = draw(st.sets(st.sampled_from(sorted(NAMES)), min_size=1))
        audited = draw(st.booleans())
    elif draw(st.integers(0, 6)) == 0:  # one that did not say what it records
        said = False
    # pods, which most judges read, and a few more, so that what a check reads changes often
    # enough to judge
    families = draw(st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=2))
    others = sorted({r for family in families for r in family} & recorded) or \
        sorted(recorded - {"pods"})[:1] or ["pods"]
    active = sorted({"pods", *others}) if "pods" in recorded or draw(st.booleans()) else others
    open_gaps: dict[str, Gap] = {}
    for _ in range(draw(st.integers(3, steps))):
        t += draw(st.sampled_from((0.0, 0.05, 0.4, 1.0, 3.0)))
        what = draw(st.sampled_from(("write",) * 12 + ("gap", "close", "close", "error",
                                                       "refused", "fault")))
        resource = draw(st.sampled_from(active))
        name = draw(st.sampled_from(NAMES[resource]))
        if what == "write":
            rv += 1
            key = (resource, "" if resource in CLUSTER_SCOPED else NS, name)
            write = _write(draw, rv, t, key, uids, states, lives)
            writes.append(write)
            if resource != "events":  # the audit policy records every write but Events'
                requests.append(_request(draw, write))
        elif what == "gap" and resource not in open_gaps:
            open_gaps[resource] = Gap(resource, t, None)
            gaps.append(open_gaps[resource])
        elif what == "close" and resource in open_gaps:
            open_gaps.pop(resource).closed = t + 0.01
        elif what == "error":
            troubles.append((draw(st.sampled_from((ERROR, ANOMALY))), resource, t))
        elif what == "refused":  # refused, or accepted and changing nothing
            requests.append(Request(t, t + 0.002, "patch", "pods", NS,
                                    draw(st.sampled_from(PODS)), "",
                                    draw(st.sampled_from(ACTORS[:2])),
                                    draw(st.sampled_from((409, 409, 200)))))
        elif what == "fault":
            marks.append((t, "fired: a stall", {"lasts": draw(st.sampled_from((0.0, 2.0)))}))
    end = t + 1.0
    return Truth(writes, requests, marks, recorded, audited, gaps, troubles, end,
                 caught_up=draw(st.integers(0, 3)) > 0, said=said,
                 node_state=_checkpoints(draw, end), prepare_log=_prepares(draw, end),
                 results=[{"object": "o", "status": draw(st.sampled_from(
                     ("ok", "not_found", "error"))), "detail": ""}] if draw(st.booleans())
                 else [])


def _checkpoint(claims: list[tuple[str, list[str], list[str]]]) -> str:
    """The kubelet's DRA checkpoint with these claims (name, devices, pod UIDs) of NS."""
    import json
    import zlib

    entries = [{"ClaimUID": f"uid-{name}", "ClaimName": name, "Namespace": NS,
                "PodUIDs": {uid: {} for uid in pods},
                "DriverState": {"d": {"Devices": [
                    {"PoolName": "n1", "DeviceName": device, "RequestNames": ["r"],
                     "CDIDeviceIDs": [f"k8s.d/dev={device}"]} for device in devices]}}}
               for name, devices, pods in claims]
    data = json.dumps({"kind": "DRACheckpoint", "ClaimInfoStateList": entries})
    return json.dumps({"Data": data, "Checksum": zlib.crc32(data.encode())})


def _checkpoints(draw, end: float) -> list[dict]:
    """node n1's read loop: a copy of its checkpoint each second, the claims drawn."""
    copies = []
    for at in range(int(end) + 2):
        claims = [(claim, draw(st.lists(st.sampled_from("ab"), max_size=2)),
                   draw(st.lists(st.sampled_from([f"uid-{p}" for p in PODS]), max_size=2)))
                  for claim in draw(st.lists(st.sampled_from(("c0", "c1")), max_size=2,
                                             unique=True))]
        copies.append({"time": EPOCH + at, "node": "n1", "text": _checkpoint(claims)})
    return copies


def _prepares(draw, end: float) -> list[dict]:
    return [{"time": EPOCH + draw(st.floats(0, end)), "node": "n1", "pool": "n1",
             "device": draw(st.sampled_from("ab")), "claim": claim, "claim_uid": f"uid-{claim}",
             "action": draw(st.sampled_from(("prepare", "unprepare")))}
            for claim in draw(st.lists(st.sampled_from(("c0", "c1")), max_size=4))]


def _write(draw, rv: int, t: float, key: tuple[str, str, str], uids: dict,
           states: dict, lives: list[int]) -> Write:
    """The next change of ``key``: made (a new life), changed, or deleted."""
    resource, namespace, name = key
    previous = states.get(key)
    if previous is None or previous.type == "DELETED":
        lives[0] += 1
        # uids are unique in a cluster, across lives and resources; a pod's or a claim's first
        # life has the uid other objects refer to it by (reservedFor, a checkpoint's PodUIDs)
        first = f"uid-{name}" if resource in ("pods", "resourceclaims") else \
            f"uid-{resource}-{name}"
        uids[key] = first if key not in uids else f"{first}.{lives[0]}"
        kind = "ADDED"
    else:
        kind = draw(st.sampled_from(("MODIFIED", "MODIFIED", "DELETED")))
    obj = make(resource, name, uids[key], draw) if kind != "DELETED" else \
        copy.deepcopy(previous.obj)
    if kind == "ADDED":
        obj["metadata"].pop("deletionTimestamp", None)  # nothing is made being deleted
    was = ((previous.obj if previous else {}).get("metadata") or {}).get("deletionTimestamp")
    if was and kind == "MODIFIED":
        obj["metadata"]["deletionTimestamp"] = was  # a deletion mark is never taken back
    marked = kind == "MODIFIED" and bool(obj["metadata"].get("deletionTimestamp")) and not was
    # a manager's write stamps the second it made it in; a deletion or its mark stamps nothing
    written = previous.written if (kind == "DELETED" or marked) and previous is not None \
        else float(math.floor(t))
    write = Write(rv, t, resource, namespace, name, uids[key], kind, obj, written, marked)
    states[key] = write
    return write


def _request(draw, write: Write) -> Request:
    """The audited request that made ``write``: received before it, completed after. A
    deletion mark or a removal is a delete's; of a pod not yet marked, maybe an eviction's (an
    accepted eviction always marks or removes the pod)."""
    verb = "delete" if write.marked else \
        {"ADDED": "create", "DELETED": "delete"}.get(write.type, "patch")
    sub = ""
    unmarked = not (write.obj.get("metadata") or {}).get("deletionTimestamp")
    if write.resource == "pods" and (write.marked or (write.type == "DELETED" and unmarked)):
        sub = draw(st.sampled_from(("", "eviction")))
    elif write.resource == "pods" and write.type == "MODIFIED":
        sub = draw(st.sampled_from(("", "status", "binding")))
    verb = "create" if sub in ("binding", "eviction") else verb
    labels = (write.obj.get("metadata") or {}).get("labels") or {} if verb == "create" else {}
    early = draw(st.sampled_from((0.0, 0.001, 0.01)))
    late = draw(st.sampled_from((0.0, 0.001, 0.02)))
    return Request(write.t - early, write.t + late, verb, write.resource, write.namespace,
                   write.name, sub, draw(st.sampled_from(ACTORS)),
                   201 if verb == "create" else 200,
                   uid=write.uid if verb == "create" and not sub else "", labels=labels)


# --- what a recorder makes of it -------------------------------------------------------------


def record(truth: Truth, seed: int) -> list[Entry]:
    """The timeline a recorder appends for ``truth``, its watch events delayed and its audit
    log read by ``seed``'s draw. What it saw is the truth's to say, not the delays': of a
    resource whose watch broke, what was written before the break arrived before it, and
    what was written up to the re-list came only with it."""
    rng = random.Random(seed)
    timed: list[tuple[float, int, dict]] = []  # (when appended, tie-break, entry fields)
    order = [0]

    def append(at: float, **fields: Any) -> None:
        order[0] += 1
        timed.append((at, order[0], fields))

    # the record begins with a moment of the recorder's own (a history from before it said
    # what it records begins with the scenario's first mark)
    append(0.0, kind=MARK, mono=0.0, detail="recording" if truth.said else "begin",
           extra={"recording": {r: "v1" for r in truth.recorded}, "audit": truth.audited}
           if truth.said else {})
    for resource in sorted(truth.recorded):
        _stream(truth, resource, rng, append)
    if truth.audited:
        last = -1.0
        for request in sorted(truth.requests, key=lambda r: r.done):
            last = max(last, request.done + rng.uniform(0, AUDIT_LAG))  # read in log order
            append(last, kind=AUDIT, mono=request.done, **_audited(request))
    for at, detail, extra in truth.marks:
        append(at, kind=MARK, mono=at, detail=detail, extra=extra)
    for kind, resource, at in truth.troubles:
        if resource in truth.recorded:
            append(at, kind=kind, mono=at, resource=resource, detail="broke")
    end = truth.end + MAX_LAG + AUDIT_LAG
    if truth.audited:
        append(end, kind=AUDIT_SYNC, mono=end, detail="judged",
               extra={"caught_up": truth.caught_up})
    else:
        append(end, kind=MARK, mono=end, detail="judged", extra={"behind": []})
    timed.sort(key=lambda item: (item[0], item[1]))
    return [_entry(seq, at, fields) for seq, (at, _, fields) in enumerate(timed)]


def _entry(seq: int, at: float, fields: dict) -> Entry:
    fields = dict(fields)
    mono = fields.pop("mono", at)
    kind = fields.pop("kind")
    return Entry(seq, mono, EPOCH + mono, kind, **fields)


def _stream(truth: Truth, resource: str, rng: random.Random, append) -> None:
    """One resource's watch: each write delivered in order, some time after it was written,
    but for the stretch a gap lost (the re-list then says where things stood)."""
    writes = [w for w in truth.writes if w.resource == resource]
    gaps = sorted((g for g in truth.gaps if g.resource == resource), key=lambda g: g.opened)
    arrived = 0.0
    known: dict[tuple[str, str, str], Write] = {}
    for write in writes:
        gap = next((g for g in gaps if g.opened <= write.t + MAX_LAG and
                    (g.closed is None or write.t <= g.closed)), None)
        if gap is not None:
            continue  # lost in the gap: the re-list says the rest
        arrived = max(arrived, write.t + rng.uniform(0, MAX_LAG))
        before = next((g for g in gaps if write.t < g.opened), None)
        if before is not None:
            arrived = min(arrived, before.opened - 1e-3)
        closed = [g.closed for g in gaps if g.closed is not None and g.closed < write.t]
        arrived = max([arrived, *(c + 1e-3 for c in closed)])
        append(arrived, kind=WATCH, mono=arrived, **_watched(write))
        known[write.key] = write
    for gap in gaps:
        append(gap.opened, kind=GAP_START, mono=gap.opened, resource=resource,
               detail="410 Gone")
        if gap.closed is None:
            continue
        listed = max((w.rv for w in truth.writes if w.t <= gap.closed), default=0)
        append(gap.closed, kind=GAP_END, mono=gap.closed, resource=resource, rv=str(listed),
               detail="re-listed", extra={"changes": _relisted(truth, resource, gap, listed)})


def _relisted(truth: Truth, resource: str, gap: Gap, listed: int) -> list[dict]:
    """What a re-list at revision ``listed`` finds changed since the watch broke."""
    before: dict[tuple, Write] = {}
    after: dict[tuple, Write] = {}
    for write in truth.writes:
        if write.resource != resource or write.rv > listed:
            continue
        if write.t + MAX_LAG < gap.opened:
            before[write.key] = write
        after[write.key] = write
    changes = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        old_obj = None if old is None or old.type == "DELETED" else old.obj
        new_obj = None if new is None or new.type == "DELETED" else new.obj
        if old_obj is not None and new_obj is None:
            changes.append({"type": "DELETED", "object": _versioned(old)})
        elif new_obj is not None and (old is None or old.rv != new.rv):
            changes.append({"type": "ADDED" if old_obj is None else "MODIFIED",
                            "object": _versioned(new)})
    changes.sort(key=lambda c: c["type"] != "DELETED")
    return changes


def _versioned(write: Write) -> dict:
    obj = copy.deepcopy(write.obj)
    obj["metadata"]["resourceVersion"] = str(write.rv)
    return obj


def _watched(write: Write) -> dict:
    obj = _versioned(write)
    return {"resource": write.resource, "namespace": write.namespace, "name": write.name,
            "uid": write.uid, "rv": str(write.rv), "type": write.type, "object": obj,
            "extra": {"written": second(write.written)}}


def _audited(request: Request) -> dict:
    extra: dict[str, Any] = {"received": stamp(request.received)}
    if request.labels:
        extra["labels"] = request.labels
    return {"resource": request.resource, "namespace": request.namespace,
            "name": request.name, "uid": request.uid, "verb": request.verb,
            "subresource": request.subresource, "actor": request.actor,
            "code": request.code, "extra": extra}


# --- changes that keep the cluster's truth -----------------------------------------------------


def renumbered(writes: list[Write]) -> list[Write]:
    """The writes in the order of their moments, numbered as etcd would."""
    ordered = sorted(writes, key=lambda w: w.t)
    return [replace(w, rv=100 + i) for i, w in enumerate(ordered, 1)]


def _hidden(truth: Truth, resource: str, at: float, anchor: float) -> bool:
    """Whether a write of ``resource`` at ``at``, followed by one already there at ``anchor``,
    tells nothing of the resource's watch that the history did not: no gap of it opens
    between when the two would have been delivered (the first would then be the last change
    the watch delivered before it, and date the gap's beginning)."""
    return not any(g.resource == resource and at + MAX_LAG < g.opened <= anchor + MAX_LAG
                   for g in truth.gaps)


def an_earlier_life(truth: Truth, name: str, actor: str) -> Truth | None:
    """``truth`` with an unrelated pod living and dying under ``name`` (another uid, another
    app) just before the name's first life: made, then deleted, by ``actor``. None where the
    name has no life, or that moment would tell something of the pod watch. It is gone before
    the second the first life's first write is stamped with: going after it, it would tell
    that the first life was made later than the stamp says."""
    writes = [w for w in truth.writes if w.resource == "pods" and w.name == name]
    if not writes:
        return None
    first = min(writes, key=lambda w: w.t)
    before = min(first.t, first.written)
    if before < 0.3 or not _hidden(truth, "pods", before - 0.3, first.t):
        return None
    born, died = before - 0.3, before - 0.2
    obj = {"metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}-unrelated",
                        "labels": {"app": "unrelated"}}, "spec": {}, "status": {"phase": "Running"}}
    made = Write(0, born, "pods", NS, name, obj["metadata"]["uid"], "ADDED", obj,
                 float(math.floor(born)))
    gone = replace(made, t=died, type="DELETED")
    requests = [Request(born - 0.001, born, "create", "pods", NS, name, "", actor, 201,
                        uid=made.uid, labels={"app": "unrelated"}),
                Request(died - 0.001, died, "delete", "pods", NS, name, "", actor, 200)]
    return replace(truth, writes=renumbered([*truth.writes, made, gone]),
                   requests=[*truth.requests, *requests])


def strangers(truth: Truth) -> Truth:
    """``truth`` with unrelated objects and requests beside it: pods of another namespace,
    made by someone no judgement names, each just before a pod of the history was written
    (so that it tells nothing of when the pod watch was alive), and a refused request of
    theirs."""
    writes, requests = list(truth.writes), list(truth.requests)
    anchors = [w.t for w in truth.writes if w.resource == "pods" and w.t >= 0.05]
    for i, anchor in enumerate(anchors[:3]):
        at = anchor - 0.01
        if not _hidden(truth, "pods", at, anchor):
            continue
        name = f"stranger-{i}"
        obj = {"metadata": {"name": name, "namespace": ELSEWHERE, "uid": f"uid-{name}",
                            "labels": {"app": "stranger"}},
               "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}
        writes.append(Write(0, at, "pods", ELSEWHERE, name, f"uid-{name}", "ADDED", obj,
                            float(math.floor(at))))
        requests.append(Request(at - 0.001, at, "create", "pods", ELSEWHERE, name, "",
                                "stranger", 201, uid=f"uid-{name}"))
    requests.append(Request(0.2, 0.202, "patch", "configmaps", ELSEWHERE, "x", "", "stranger",
                            409))
    return replace(truth, writes=renumbered(writes), requests=requests)


def with_a_gap(truth: Truth, resource: str, opened: float, closed: float) -> Truth | None:
    """``truth`` recorded with the watch of ``resource`` broken from ``opened`` to a re-list
    at ``closed`` (None when that stretch meets a gap it already had)."""
    for gap in truth.gaps:
        if gap.resource == resource and (gap.closed is None or gap.closed + MAX_LAG >= opened) \
                and gap.opened <= closed + MAX_LAG:
            return None
    # a re-list after the judgement is none of the record it judged: the gap is still open
    return replace(truth, gaps=[*truth.gaps, Gap(resource, opened,
                                                 closed if closed < truth.end else None)])
