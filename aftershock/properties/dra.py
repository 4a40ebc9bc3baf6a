"""D: dynamic resource allocation (docs/properties.md), on the real scheduler and resource-claim
controller, with the profile's driver (its prepare log travels with the judgement)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import (
    Device,
    allocated_devices,
    claim_names,
    held_alone,
    kubelet_consumers,
    kubelet_prepared,
    reserved_for,
    revision,
    selects_node,
)
from aftershock.concepts.node_reads import SILENT_SECONDS
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.timeline.audit import parse_time
from aftershock.timeline.entry import GAP_END, GAP_START, MARK, WATCH, Entry
from aftershock.timeline.state import State, changes_of, node_of, replay


@dataclass
class _Claims:
    """The claims of one namespace by etcd revision, and the revisions their history missed."""

    namespace: str
    states: dict[str, list[tuple[int, Entry, dict[str, Any] | None]]] = field(
        default_factory=dict)
    blind: list[tuple[int, float]] = field(default_factory=list)  # (after, until) revisions
    last: int = 0
    gap_from: int | None = None

    def follow(self, entry: Entry) -> None:
        if entry.kind == GAP_START:
            self.gap_from = self.last if self.gap_from is None else self.gap_from
        elif entry.kind == GAP_END:
            self.blind.append((self.gap_from or 0, revision(entry)))
            self.gap_from = None
            for (_, namespace, claim), obj in changes_of(entry):
                if namespace == self.namespace:
                    self.states.setdefault(claim, []).append((revision(entry), entry, obj))
        elif entry.kind == WATCH and entry.namespace == self.namespace:
            obj = None if entry.type == "DELETED" else entry.object
            self.states.setdefault(entry.name, []).append((revision(entry), entry, obj))
            self.last = max(self.last, revision(entry))

    def at(self, claim: str, rev: int) -> tuple[bool, Entry | None, dict[str, Any] | None]:
        """(known, entry, object) of ``claim`` just before revision ``rev``."""
        blind = self.blind + ([(self.gap_from, math.inf)] if self.gap_from is not None else [])
        if any(after < rev < until for after, until in blind):
            return False, None, None
        earlier = [(r, e, o) for r, e, o in self.states.get(claim, []) if r < rev]
        if not earlier:
            return True, None, None
        _, entry, obj = max(earlier, key=lambda found: found[0])
        return True, entry, obj


def allocated_before_bind(entries: Iterable[Entry], namespace: str,
                          name: str = "allocated_before_bind") -> Verdict:
    """D1: at the revision a pod is bound, each of its claims is allocated for that node and
    reserved for that pod (ordered by etcd revision, one order across resources).

    Only a binding whose moment was recorded is judged: by a watch event, not the first list
    nor the re-list that closed a gap on pods (the binding happened somewhere in the gap).
    Nor is a claim whose history has a gap around that revision."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    claims = _Claims(namespace)
    bound: dict[str, bool] = {}  # each pod's last recorded state: bound or not
    bindings: list[Entry] = []
    unseen = 0
    reads = frozenset({"pods", "resourceclaims"})
    for entry in entries:
        if entry.resource == "resourceclaims":
            claims.follow(entry)
            continue
        if entry.resource != "pods":
            continue
        if entry.kind == GAP_END:
            found = [(obj, False) for (_, ns, _), obj in changes_of(entry)
                     if ns == namespace and obj is not None]
        elif entry.kind == WATCH and entry.namespace == namespace and entry.type != "DELETED":
            found = [(entry.object or {}, entry.type != "SYNC")]
        else:
            continue
        for pod, seen in found:
            uid = (pod.get("metadata") or {}).get("uid") or entry.uid
            if node_of(pod) and not bound.get(uid):
                if seen:
                    bindings.append(entry)
                else:
                    unseen += len(claim_names(pod))
            bound[uid] = bool(node_of(pod))
    judged = 0
    for binding in bindings:
        pod = binding.object or {}
        node = pod["spec"]["nodeName"]
        for claim_name in claim_names(pod):
            known, earlier, claim = claims.at(claim_name, revision(binding))
            if not known:
                unseen += 1
                continue
            judged += 1
            problem = _not_ready_for(claim, node, binding.uid)
            if problem:
                witness = ([earlier] if earlier else []) + [binding]
                # With no earlier claim entry, a gap could have hidden its creation.
                return Verdict(name, VIOLATED, f"{binding.ref} was bound to node/{node} while "
                               f"resourceclaim/{namespace}/{claim_name} {problem}", witness,
                               origin, subjects=judged, by_absence=earlier is None, reads=reads)
    hidden = f" ({unseen} bindings a gap hid were not judged)" if unseen else ""
    summary = (f"{judged} claims of {len(bindings)} bound pods were allocated and reserved "
               f"before the binding{hidden}" if judged else
               f"no binding of a pod with a resource claim was recorded{hidden}")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _not_ready_for(claim: dict[str, Any] | None, node: str, pod_uid: str) -> str | None:
    if claim is None:
        return "did not exist yet"
    if not allocated_devices(claim):
        return "was not allocated"
    if not selects_node(claim, node):
        return f"was allocated for another node than node/{node}"
    if pod_uid not in reserved_for(claim):
        return "was not reserved for the pod"
    return None


def exclusive_devices(entries: Iterable[Entry], name: str = "exclusive_devices") -> Verdict:
    """D2: at every recorded event, a device is in at most one claim's allocation."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"resourceclaims"})
    claims: set[str] = set()
    for entry, state in replay(entries):
        if entry.kind not in (WATCH, GAP_END) or entry.resource != "resourceclaims":
            continue
        claims.update(f"{k[1]}/{k[2]}" for k in state.index("resourceclaims").members)
        holders = _holders(state)
        shared = {d: c for d, c in holders.items() if len(c) > 1}
        if shared:
            device, owners = next(iter(shared.items()))
            return Verdict(name, VIOLATED, f"device {'/'.join(device)} is allocated to "
                           f"{len(owners)} claims at once: {', '.join(sorted(owners))}",
                           [entry], origin, subjects=len(claims), reads=reads)
    summary = (f"no device was ever in two allocations ({len(claims)} claims)" if claims else
               "no resource claim was ever recorded")
    return Verdict(name, PASS, summary, [], origin, subjects=len(claims), reads=reads)


def _holders(state: State) -> dict[Device, set[str]]:
    holders: dict[Device, set[str]] = {}
    for claim in state.select("resourceclaims"):
        meta = claim.get("metadata") or {}
        for device in held_alone(claim):
            holders.setdefault(device, set()).add(f"{meta.get('namespace')}/{meta.get('name')}")
    return holders


def as_entries(records: list[dict[str, Any]], timeline: list[Entry]) -> list[Entry]:
    """Log lines as timeline marks, placed on the recorder's clock by their wall time."""
    if not timeline:
        return []
    offset = timeline[0].mono - timeline[0].wall
    return [Entry(seq=-1, mono=r["time"] + offset, wall=r["time"], kind=MARK,
                  detail=f"driver {r['action']} {r['device']} on node/{r['node']} for claim "
                         f"{r['claim']} (pod {r.get('pod', '?')})")
            for r in records]


PREPARE_LOG = "the driver's prepare log on each node"


def node_side_exclusive(records: list[dict[str, Any]], timeline: list[Entry],
                        name: str = "node_side_exclusive") -> Verdict:
    """D5: on a node, a device is never prepared for two claims at once (the driver's log)."""
    origin = timeline[0].mono if timeline else 0.0
    prepared: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: r["time"]):
        key = (record["node"], record.get("pool", record["node"]), record["device"])
        if record["action"] == "prepare":
            held = prepared.get(key)
            if held and held[0] != record["claim_uid"]:
                witness = as_entries([held[1], record], timeline)
                return Verdict(name, VIOLATED, f"device {record['device']} on node/"
                               f"{record['node']} was prepared for claim {record['claim']} "
                               f"while still prepared for {held[1]['claim']}", witness, origin,
                               subjects=len(records), reads=frozenset(), external=PREPARE_LOG)
            prepared[key] = (record["claim_uid"], record)
        elif record["action"] == "unprepare" and prepared.get(key, ("",))[0] == \
                record["claim_uid"]:
            del prepared[key]
    count = sum(1 for r in records if r["action"] == "prepare")
    summary = (f"{count} prepares, never two claims on one device" if count else
               "the driver logged no prepare at all")
    return Verdict(name, PASS, summary, [], origin, subjects=count, reads=frozenset(),
                   external=PREPARE_LOG)


NODE_STATE = "the kubelet's DRA checkpoint on each node"


@dataclass
class NodeReads:
    """What one node's read loop showed, in time order (the node's clock): the moments its
    state was known (a copy that checked out, or a heartbeat while the last line was one),
    the reads that failed, and since when each claim has held each device without a break
    (the last moment it was known not to, or None when it did from the first copy)."""

    node: str
    lines: list[float] = field(default_factory=list)
    known: list[float] = field(default_factory=list)
    failed: list[tuple[float, str]] = field(default_factory=list)
    taken: list[float] = field(default_factory=list)
    first: dict[Device, set[str]] | None = None
    last: dict[Device, set[str]] = field(default_factory=dict)  # the last copy that checked out
    reading: bool = False  # whether the last line showed the state (no failure since)
    since: dict[tuple[Device, str], float | None] = field(default_factory=dict)

    def read(self, snap: dict[str, Any]) -> dict[Device, set[str]] | None:
        """Take one line in; what it shows prepared, for a copy that checked out."""
        at = snap["time"]
        if snap.get("taken"):
            self.taken.append(at)
            return None
        self.lines.append(at)
        if snap.get("beat"):  # the file read as its last line said
            if self.reading:
                self.known.append(at)
            return None
        try:
            prepared = kubelet_prepared(snap["text"]) if "text" in snap else None
        except ValueError as exc:
            prepared, snap = None, {**snap, "error": str(exc)}
        if prepared is None:
            self.reading = False
            self.failed.append((at, snap.get("error") or "not read"))
            return None
        before = self.known[-1] if self.known else None
        self.since = {(device, claim): self.since.get((device, claim), before)
                      if claim in self.last.get(device, ()) else before
                      for device, holders in prepared.items() for claim in holders}
        self.first = prepared if self.first is None else self.first
        self.last, self.reading = prepared, True
        self.known.append(at)
        return prepared


def node_state_exclusive(snapshots: list[dict[str, Any]], timeline: list[Entry],
                         namespace: str | None = None,
                         name: str = "node_state_exclusive") -> Verdict:
    """D5 from what the nodes show: in no snapshot of a node's kubelet DRA checkpoint is one
    device prepared for two claims. ``snapshots``: the lines of each node's read loop
    (`sut.node_reads.parse`: {"time" (the node's clock), "node"} and "text", "error" where the
    file could not be read, or "beat" where it read as before), and {"taken": True} where they
    were taken. A PASS needs every node the history records to have been seen over its whole
    lifetime while the loops ran: a failed read, a checkpoint that does not check out, or a
    silence longer than SILENT_SECONDS (a loop that stalled) is a stretch not seen.

    A claim of another namespace that a node already held when it was first read was left by
    an earlier scenario (a node deleted under its pod, say). A double preparation with it is
    a leak, VIOLATED, when every pod it was prepared for (by the checkpoint, the claim's
    reservedFor, the pods naming it) was recorded gone before the other claim was prepared;
    where the history cannot say, it is UNKNOWN, naming the claim."""
    origin = timeline[0].mono if timeline else 0.0
    offset = timeline[0].mono - timeline[0].wall if timeline else 0.0
    reads: dict[str, NodeReads] = {}
    claims: set[str] = set()
    blamed: Verdict | None = None
    left_twice: set[str] = set()  # devices only claims earlier scenarios left held twice
    for snap in sorted(snapshots, key=lambda s: s["time"]):
        node = reads.setdefault(snap["node"], NodeReads(snap["node"]))
        prepared = node.read(snap)
        if prepared is None:
            continue
        inherited = {claim for holders in (node.first or {}).values() for claim in holders
                     if namespace is None or not claim.startswith(f"{namespace}/")}
        for (driver, pool, device), holders in sorted(prepared.items()):
            claims |= holders
            if len(holders) < 2:
                continue
            mark = Entry(seq=-1, mono=snap["time"] + offset, wall=snap["time"], kind=MARK,
                         detail=f"node/{snap['node']} {NODE_STATE}: {driver} device "
                                f"{pool}/{device} prepared for {', '.join(sorted(holders))}")
            what = (f"device {pool}/{device} of {driver} on node/{snap['node']} was prepared "
                    f"for {len(holders)} claims at once: {', '.join(sorted(holders))}")
            old = holders & inherited
            if not holders - old:  # the earlier scenarios' doing, judged in them
                left_twice.add(f"node/{snap['node']} {pool}/{device}")
                continue
            if len(holders - old) > 1 or not old:
                return Verdict(name, VIOLATED, what, [mark], origin, subjects=len(claims),
                               reads=frozenset(), external=NODE_STATE)
            leak = _leaked(old, holders - old, (driver, pool, device), node, snap, timeline,
                           offset)
            if not isinstance(leak, str):
                left, deletions = leak
                gone = ", ".join(f"{e.ref} at +{e.mono - origin:.3f}s" for e in deletions)
                return Verdict(name, VIOLATED, f"{what}: {left}, left prepared by an earlier "
                               f"scenario, was still prepared after every pod it was prepared "
                               f"for was recorded gone ({gone}), and then the device was "
                               f"prepared for {', '.join(sorted(holders - old))}: a leak",
                               sorted([*deletions, mark], key=lambda e: e.mono), origin,
                               subjects=len(claims), reads=frozenset({"pods", "resourceclaims"}),
                               external=NODE_STATE)
            blamed = blamed or Verdict(
                name, UNKNOWN, f"{what}; but {', '.join(sorted(old))} was prepared there "
                f"before this scenario began, left by an earlier one, and {leak}", [mark],
                origin, subjects=len(claims), reads=frozenset(), external=NODE_STATE)
    if blamed is not None:
        return blamed
    unseen = unseen_stretches(reads, timeline, offset, origin)
    if unseen:
        more = f" (and {len(unseen) - 1} more)" if len(unseen) > 1 else ""
        return Verdict(name, UNKNOWN, f"{NODE_STATE} was not seen throughout: {unseen[0]}"
                       f"{more}", [], origin, subjects=len(claims), reads=frozenset(),
                       external=NODE_STATE)
    copies = sum(1 for snap in snapshots if "text" in snap)
    summary = (f"{copies} states of {NODE_STATE} ({len(reads)} nodes, each seen throughout): "
               f"{len(claims)} claims prepared, never two on one device" if claims else
               f"{NODE_STATE} never showed a prepared claim")
    if left_twice:
        summary += (f" (not judged: {', '.join(sorted(left_twice))} held by two claims earlier "
                    "scenarios left)")
    return Verdict(name, PASS, summary, [], origin, subjects=len(claims),
                   reads=frozenset({"nodes"}), external=NODE_STATE)


def _leaked(old: set[str], new: set[str], device: Device, node: NodeReads,
            snap: dict[str, Any], timeline: list[Entry],
            offset: float) -> tuple[str, list[Entry]] | str:
    """An inherited claim of ``old`` and the deletions of every pod it was prepared for, each
    recorded before a claim of ``new`` was prepared on ``device`` (by the last moment the node
    was known not to hold it there); else why the history cannot say."""
    after = [node.since.get((device, claim)) for claim in sorted(new)]
    if any(moment is None for moment in after):
        return f"{', '.join(sorted(new))} held the device from the node's first read"
    prepared_after = min(a for a in after if a is not None) + offset  # on the recorder's clock
    consumers = kubelet_consumers(snap["text"])
    why = ""
    for claim in sorted(old):
        pods = consumers.get(claim, set()) | _claim_pods(timeline, claim)
        if not pods:
            why = why or f"nothing recorded names the pod {claim} was prepared for"
            continue
        gone = _deletions(timeline, pods)
        late = sorted(pod for pod in pods if pod not in gone or gone[pod].mono >= prepared_after)
        if not late:
            return claim, sorted((gone[pod] for pod in pods), key=lambda e: e.mono)
        named = _pod_named(timeline, late[0])
        why = why or (f"the history has no record of the pod {claim} was prepared for (uid "
                      f"{late[0]})" if named is None else
                      f"{named}, which {claim} was prepared for, was not recorded gone before "
                      "the device was prepared again")
    return why


def _claim_pods(timeline: list[Entry], claim: str) -> set[str]:
    """The UIDs of the pods the history shows using ``claim`` (``ns/name``): in its reservedFor,
    or naming it among their claims."""
    namespace, _, claim_name = claim.partition("/")
    pods: set[str] = set()
    for entry in timeline:
        if entry.resource not in ("pods", "resourceclaims"):
            continue
        for key, obj in records_of(entry):
            if obj is None or key.partition("/")[0] != namespace:
                continue
            if entry.resource == "resourceclaims" and key == claim:
                pods |= reserved_for(obj) - {""}
            elif entry.resource == "pods" and claim_name in claim_names(obj):
                pods.add((obj.get("metadata") or {}).get("uid") or entry.uid)
    return pods


def _deletions(timeline: list[Entry], pods: set[str]) -> dict[str, Entry]:
    """The first recorded deletion of each of ``pods`` (UIDs): a watch event, or the re-list
    that closed a gap (the pod was gone by then)."""
    gone: dict[str, Entry] = {}
    for entry in timeline:
        if entry.resource != "pods":
            continue
        if entry.kind == WATCH and entry.type == "DELETED":
            uid = ((entry.object or {}).get("metadata") or {}).get("uid") or entry.uid
            if uid in pods:
                gone.setdefault(uid, entry)
        elif entry.kind == GAP_END:
            for change in (entry.extra or {}).get("changes") or []:
                uid = ((change.get("object") or {}).get("metadata") or {}).get("uid")
                if change.get("type") == "DELETED" and uid in pods:
                    gone.setdefault(uid, entry)
    return gone


def _pod_named(timeline: list[Entry], uid: str) -> str | None:
    """The pod with ``uid`` as kubectl names it, or None when the history never recorded it."""
    for entry in timeline:
        if entry.resource != "pods":
            continue
        for key, obj in records_of(entry):
            if ((obj or {}).get("metadata") or {}).get("uid", entry.uid) == uid:
                return f"pod/{key}"
    return None


def unseen_stretches(reads: dict[str, NodeReads], timeline: list[Entry], offset: float,
                     origin: float, only: str | None = None) -> list[str]:
    """Each stretch a node was not seen while the loops ran: every node each loop read, and
    every node the history records (over its lifetime) from when the loops began to when
    their lines were taken."""
    lines = [at for node in reads.values() for at in node.lines]
    ends = lines + [at for node in reads.values() for at in node.taken]
    begin, end = (min(lines), max(ends)) if lines else (-math.inf, math.inf)
    wanted = {node: [(begin, end, "")] for node in reads}
    for node, lives in _node_lives(timeline, offset).items():
        wanted[node] = [(max(begin, born), min(end, died), how) for born, died, how in lives
                        if born <= end and died >= begin]
    found = []
    for node, lives in sorted(wanted.items()):
        if only is not None and node != only:  # a judge of one node's state
            continue
        if lives and node not in reads:
            _, _, how = lives[0]
            found.append(f"no read loop on node/{node}, which {how}")
            continue
        for start, stop, _ in lives:
            found += [f"node/{node} was not seen from {_at(a, offset, origin)} to "
                      f"{_at(b, offset, origin)} ({why})"
                      for a, b, why in _stretches(reads[node], start, stop)]
    return found


def _at(moment: float, offset: float, origin: float) -> str:
    return f"+{moment + offset - origin:.1f}s"


def _stretches(node: NodeReads, start: float, stop: float) -> list[tuple[float, float, str]]:
    """The stretches of [start, stop] in which ``node``'s state was not known: a failed read,
    or no line for longer than SILENT_SECONDS."""
    before = [at for at in node.known if at <= start]
    moments = [before[-1] if before else start, *(at for at in node.known if start < at <= stop),
               stop]
    found = []
    for a, b in pairwise(moments):
        failed = next((why for at, why in node.failed if a < at <= b), None)
        if failed is not None:
            found.append((max(a, start), b, f"a read failed: {failed}"))
        elif b - a > SILENT_SECONDS:
            found.append((max(a, start), b, f"no line from its read loop for {b - a:.1f}s"))
    return found


def _node_lives(timeline: list[Entry], offset: float) -> dict[str, list[tuple[float, float, str]]]:
    """Each node the history records: when it was there, on the nodes' clock (from its
    creationTimestamp, or when it was recorded if that was earlier, to when its deletion was
    recorded), and how it came ("joined at +t", or was there when the recording began)."""
    origin = timeline[0].mono if timeline else 0.0
    lives: dict[str, list[tuple[float, float, str]]] = {}
    for entry in timeline:
        if entry.resource != "nodes":
            continue
        for node, obj in records_of(entry):
            mine = lives.setdefault(node, [])
            there = bool(mine) and mine[-1][1] == math.inf
            if obj is not None and not there:
                created = (obj.get("metadata") or {}).get("creationTimestamp")
                born = min(entry.mono - offset, parse_time(created) if created else math.inf)
                how = ("was there when the recording began" if entry.type == "SYNC" else
                       f"joined at +{born + offset - origin:.1f}s")
                mine.append((born, math.inf, how))
            elif obj is None and there:
                mine[-1] = (mine[-1][0], entry.mono - offset, mine[-1][2])
    return {node: mine for node, mine in lives.items() if mine}


def records_of(entry: Entry) -> list[tuple[str, dict[str, Any] | None]]:
    """(name as kubectl shows it after the kind, object or None when deleted) of what one
    entry records: a watch event, or every change of the re-list that closed a gap."""
    def named(namespace: str, name: str) -> str:
        return f"{namespace}/{name}" if namespace else name
    if entry.kind == WATCH:
        return [(named(entry.namespace, entry.name),
                 None if entry.type == "DELETED" else entry.object)]
    if entry.kind == GAP_END:
        return [(named(key[1], key[2]), obj) for key, obj in changes_of(entry)]
    return []


def nothing_from_gone_slices(entries: Iterable[Entry], node: str,
                             name: str = "nothing_from_gone_slices") -> Verdict:
    """D6: once node/<node> is deleted, no claim gets a new allocation from the pools its
    ResourceSlices published. Judged over the claims recorded after the deletion; an
    allocation a re-list found is blamed only when the gap began after the deletion."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"nodes", "resourceclaims", "resourceslices"})
    pools: set[tuple[str, str]] = set()  # (driver, pool) the node's slices published
    gone_at: Entry | None = None
    allocated: dict[str, list[Device]] = {}
    previous: dict[str, Entry] = {}
    judged: set[str] = set()
    claims_blind_since: float | None = None
    for entry in entries:
        if entry.resource == "resourceclaims" and entry.kind == GAP_START:
            claims_blind_since = entry.mono if claims_blind_since is None else claims_blind_since
        for key, obj in records_of(entry):
            if entry.resource == "resourceslices" and obj and gone_at is None:
                spec = obj.get("spec") or {}
                if spec.get("nodeName") == node:
                    pools.add((spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")))
            elif entry.resource == "nodes" and key == node and obj is None:
                gone_at = gone_at or entry
            elif entry.resource == "resourceclaims":
                found = _allocated_from(entry, key, obj, pools, gone_at, allocated, previous,
                                        judged, claims_blind_since)
                if found:
                    return Verdict(name, VIOLATED, f"resourceclaim/{key} was allocated a "
                                   f"device of node/{node} after the node was deleted", found,
                                   origin, subjects=len(judged), reads=reads)
        if entry.resource == "resourceclaims" and entry.kind == GAP_END:
            claims_blind_since = None
    if gone_at is None:
        return Verdict(name, UNKNOWN, f"the precondition never held: node/{node} was never "
                       "seen deleted", [], origin, subjects=0, reads=reads)
    if not pools:
        return Verdict(name, UNKNOWN, f"no ResourceSlice of node/{node} was recorded before "
                       "its deletion, so which devices were its own is unknown", [], origin,
                       subjects=0, reads=reads)
    summary = (f"nothing was allocated from node/{node} after its deletion ({len(judged)} "
               "claims recorded since)" if judged else
               f"no resource claim was recorded after node/{node} was deleted")
    return Verdict(name, PASS, summary, [], origin, subjects=len(judged), reads=reads)


def _allocated_from(entry: Entry, claim: str, obj: dict[str, Any] | None,
                    pools: set[tuple[str, str]], gone_at: Entry | None,
                    allocated: dict[str, list[Device]], previous: dict[str, Entry],
                    judged: set[str], blind_since: float | None) -> list[Entry]:
    """The witness of a device of ``pools`` newly allocated to ``claim`` after ``gone_at``."""
    devices = allocated_devices(obj or {})
    new = [d for d in devices if d not in allocated.get(claim, [])]
    allocated[claim] = devices
    before = previous.get(claim)
    previous[claim] = entry
    if gone_at is None:
        return []
    judged.add(claim)
    if not any((driver, pool) in pools for driver, pool, _ in new):
        return []
    if entry.kind == GAP_END and (blind_since is None or blind_since < gone_at.mono):
        return []  # allocated somewhere in a gap that began before the deletion
    return sorted([e for e in (before, gone_at, entry) if e], key=lambda e: e.seq)


def never_deallocated_in_use(entries: Iterable[Entry],
                             name: str = "never_deallocated_in_use") -> Verdict:
    """D3: a claim's allocation never turns into another allocation, and is never cleared
    while the claim is still reserved for a consumer."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    last: dict[str, tuple[list[Device], set[str], Entry]] = {}
    reads = frozenset({"resourceclaims"})
    for entry in entries:
        if entry.kind != WATCH or entry.resource != "resourceclaims":
            continue
        claim = entry.object or {}
        devices = [] if entry.type == "DELETED" else allocated_devices(claim)
        reserved = reserved_for(claim)
        before = last.get(entry.uid)
        if before and before[0]:
            if devices and devices != before[0]:
                return Verdict(name, VIOLATED, f"{entry.ref} was re-allocated from "
                               f"{_names(before[0])} to {_names(devices)}", [before[2], entry],
                               origin, subjects=len(last), reads=reads)
            if not devices and before[1] and reserved:
                return Verdict(name, VIOLATED, f"{entry.ref} lost its allocation while still "
                               f"reserved for {len(reserved)} consumers", [before[2], entry],
                               origin, subjects=len(last), reads=reads)
        last[entry.uid] = (devices, reserved, entry)
    return Verdict(name, PASS, f"{len(last)} claims, none re-allocated or freed while in use",
                   [], origin, subjects=len(last), reads=reads)


def _names(devices: list[Device]) -> str:
    return ", ".join("/".join(device) for device in devices)



@check("allocated_before_bind", "When a pod is bound, each of its claims already has an "
       "allocation for that node that lists the pod in reservedFor.")
def _allocated_before_bind(history: History, p: Params) -> Verdict:
    return allocated_before_bind(history.entries, p["namespace"])


@check("exclusive_devices", "A device is in at most one claim's allocation at any recorded "
       "moment.")
def _exclusive_devices(history: History, p: Params) -> Verdict:
    return exclusive_devices(history.entries)


@check("node_side_exclusive", "On a node, a device is never prepared for two claims at once "
       "(by the driver's prepare log).")
def _node_side_exclusive(history: History, p: Params) -> Verdict:
    return node_side_exclusive(p["prepare_log"], list(history.entries))


@check("node_state_exclusive", "On a node, a device is never prepared for two claims at "
       "once (by the kubelet's DRA checkpoint on the node, read through the scenario).")
def _node_state_exclusive(history: History, p: Params) -> Verdict:
    return node_state_exclusive(p["node_state"], list(history.entries), p.get("namespace"))


@check("never_deallocated_in_use", "A claim's allocation never changes to another, and is "
       "never cleared while the claim is reserved.")
def _never_deallocated_in_use(history: History, p: Params) -> Verdict:
    return never_deallocated_in_use(history.entries)


@check("nothing_from_gone_slices", "Once a node is deleted, nothing is allocated from its "
       "devices.")
def _nothing_from_gone_slices(history: History, p: Params) -> Verdict:
    return nothing_from_gone_slices(history.entries, p["node"])


CONCEPTS = ("device_driver",)
prop("D1", "Allocate before bind: when a pod is bound, each of its claims is allocated for "
     "that node and lists the pod in reservedFor.", ["allocated_before_bind"], CONCEPTS)
prop("D2", "Exclusive devices: a device is in at most one claim's allocation at any time.",
     ["exclusive_devices"], CONCEPTS)
prop("D3", "No deallocation while in use: an allocation never changes to another, and is never "
     "cleared while reserved.", ["never_deallocated_in_use"], CONCEPTS)
prop("D4", "Release: a consumer that departed or finished (Succeeded or Failed) leaves "
     "reservedFor, and an unused generated claim is deleted, within T (a finished pod's device "
     "is free for another; before issue 46 only deleted pods were counted).", ["eventually"],
     CONCEPTS)
prop("D5", "Node-side exclusivity: on a node a device is never prepared for two claims at "
     "once.", ["node_side_exclusive", "node_state_exclusive"], CONCEPTS)
prop("D6", "Node loss: ResourceSlices of a deleted node disappear; nothing new is allocated "
     "from them.", ["eventually", "nothing_from_gone_slices"], CONCEPTS, ("node_delete",))
prop("D7", "D2-D4 hold across kube-controller-manager / kube-scheduler restarts and watch "
     "delays.", ["eventually", "exclusive_devices", "allocated_before_bind",
                 "node_side_exclusive", "node_state_exclusive", "never_deallocated_in_use"],
     CONCEPTS,
     ("component_restart",))
