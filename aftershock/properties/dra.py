"""D: dynamic resource allocation (docs/properties.md), on the real scheduler and resource-claim
controller, with the profile's driver (its prepare log travels with the judgement)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import (
    Device,
    admin_access,
    allocated_devices,
    claim_names,
    consumers,
    current_pools,
    held_alone,
    kubelet_claims,
    kubelet_consumers,
    kubelet_prepared,
    reserves,
    selects_node,
)
from aftershock.concepts.node_reads import SILENT_SECONDS
from aftershock.history import DELETED, SYNC, Change, Entry, History, mark, seconds
from aftershock.history.state import State
from aftershock.properties.base import Params, check, prop
from aftershock.properties.episodes import bindings

Recorded = History | Iterable


def allocated_before_bind(history: Recorded, namespace: str,
                          name: str = "allocated_before_bind") -> Verdict:
    """D1: at the revision a pod is bound, each of its claims is allocated for that node and
    reserved for that pod (the cluster's order, one order across resources).

    Only a binding whose moment was recorded is judged: a watched change, not the first list
    nor the re-list that closed a gap on pods (the binding happened somewhere in the gap).
    Nor is a claim whose history has a gap around it."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"pods", "resourceclaims"})
    pods = [life for life in history.lives_of("pods", namespace)
            if life.ever(lambda obj: bool(claim_names(obj)))]
    found, listed = bindings(history, pods)
    unseen = sum(len(claim_names(change.after or {})) for change in listed)
    claims: dict[str, list[Change]] = {}
    for change in history.changes_of("resourceclaims", namespace):
        claims.setdefault(change.name, []).append(change)
    judged = 0
    for binding in found:
        pod = binding.change.after or {}
        for claim_name in claim_names(pod):
            if history.blind({"resourceclaims"}, binding.at.lo, binding.at.hi):
                unseen += 1
                continue
            earlier = [c for c in claims.get(claim_name, []) if c.order < binding.change.order]
            judged += 1
            claim = earlier[-1].after if earlier else None
            problem = _not_ready_for(claim, binding.node, pod, binding.life.uid)
            if problem:
                witness = ([earlier[-1].entry] if earlier else []) + [binding.change.entry]
                # With no earlier claim change, a gap up to the binding could have hidden
                # its creation; one after it could not
                return Verdict(name, VIOLATED, f"{binding.ref} was bound to "
                               f"node/{binding.node} while resourceclaim/{namespace}/"
                               f"{claim_name} {problem}", witness, origin, subjects=judged,
                               by_absence=not earlier, reads=reads,
                               window=None if earlier else (origin, binding.at.hi))
    hidden = f" ({unseen} bindings a gap hid were not judged)" if unseen else ""
    summary = (f"{judged} claims of {len(found)} bound pods were allocated and reserved "
               f"before the binding{hidden}" if judged else
               f"no binding of a pod with a resource claim was recorded{hidden}")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _not_ready_for(claim: dict[str, Any] | None, node: str, pod: dict[str, Any],
                   uid: str) -> str | None:
    if claim is None:
        return "did not exist yet"
    if not allocated_devices(claim):
        return "was not allocated"
    if not selects_node(claim, node):
        return f"was allocated for another node than node/{node}"
    if not reserves(claim, pod, uid):
        return "was not reserved for the pod (nor for its PodGroup)"
    return None


def exclusive_devices(history: Recorded, name: str = "exclusive_devices") -> Verdict:
    """D2: at every recorded state, a device is in at most one claim's allocation."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"resourceclaims"})
    claims: set[str] = set()
    for change, state in history.replay("resourceclaims"):
        if change.after is not None:
            claims.add(f"{change.namespace}/{change.name}")
        holders = _holders(state)
        shared = {d: c for d, c in holders.items() if len(c) > 1}
        if shared:
            device, owners = next(iter(shared.items()))
            return Verdict(name, VIOLATED, f"device {'/'.join(device)} is allocated to "
                           f"{len(owners)} claims at once: {', '.join(sorted(owners))}",
                           [change.entry], origin, subjects=len(claims), reads=reads)
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


def as_entries(records: list[dict[str, Any]], history: History) -> list[Entry]:
    """Log lines as marks of the record, placed on the recorder's scale by their wall time."""
    return [mark(history.offset, r["time"], f"driver {r['action']} {r['device']} on "
                 f"node/{r['node']} for claim {r['claim']} (pod {r.get('pod', '?')})")
            for r in records]


PREPARE_LOG = "the driver's prepare log on each node"


def node_side_exclusive(records: list[dict[str, Any]], history: Recorded,
                        name: str = "node_side_exclusive") -> Verdict:
    """D5: on a node, a device is never prepared for two claims at once (the driver's log)."""
    history = History.of(history)
    origin = history.origin
    prepared: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: r["time"]):
        device = record["device"]
        key = (record["node"], record.get("pool", record["node"]), device)
        if _admin_uid(history, record.get("claim_uid", ""),
                      (record.get("driver", ""), key[1], device)):
            continue  # KEP-5018: admin access shares the device by design
        if record["action"] == "prepare":
            held = prepared.get(key)
            if held and held[0] != record["claim_uid"]:
                witness = as_entries([held[1], record], history)
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


def _claim_uids(text: str) -> dict[str, str]:
    """Each claim (``ns/name``) of a kubelet DRA checkpoint, and its uid."""
    return {f"{c.get('Namespace', '')}/{c.get('ClaimName', '')}": c.get("ClaimUID", "")
            for c in kubelet_claims(text)}


def _admin_uid(history: History, uid: str, device: Device) -> bool:
    """Whether the claim of that uid was recorded holding ``device`` with admin access
    (KEP-5018: such an allocation "bypasses standard allocation checks"; D2 leaves it out)."""
    life = history.life(uid) if uid else None
    return life is not None and any(admin_access(obj, device) for obj in life.objects())



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
    # what a copy is read as: the kubelet's checkpoint (what it prepared) by default; any other
    # reading (a CDI listing) keeps only when the state was known
    parse: Callable[[str], Any] | None = None

    def read(self, snap: dict[str, Any]) -> Any:
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
            prepared = (self.parse or kubelet_prepared)(snap["text"]) if "text" in snap \
                else None
        except ValueError as exc:
            prepared, snap = None, {**snap, "error": str(exc)}
        if prepared is None:
            self.reading = False
            self.failed.append((at, snap.get("error") or "not read"))
            return None
        if self.parse is not None:
            self.reading = True
            self.known.append(at)
            return prepared
        before = self.known[-1] if self.known else None
        self.since = {(device, claim): self.since.get((device, claim), before)
                      if claim in self.last.get(device, ()) else before
                      for device, holders in prepared.items() for claim in holders}
        self.first = prepared if self.first is None else self.first
        self.last, self.reading = prepared, True
        self.known.append(at)
        return prepared


def node_state_exclusive(snapshots: list[dict[str, Any]], history: Recorded,
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
    history = History.of(history)
    origin, offset = history.origin, history.offset
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
        uids: dict[str, str] | None = None  # each claim's uid, read once a device has two
        for (driver, pool, device), holders in sorted(prepared.items()):
            claims |= holders
            if len(holders) > 1:
                uids = uids if uids is not None else _claim_uids(snap["text"])
                holders = {c for c in holders
                           if not _admin_uid(history, uids.get(c, ""), (driver, pool, device))}
            if len(holders) < 2:
                continue
            shown = mark(offset, snap["time"], f"node/{snap['node']} {NODE_STATE}: {driver} "
                         f"device {pool}/{device} prepared for {', '.join(sorted(holders))}")
            what = (f"device {pool}/{device} of {driver} on node/{snap['node']} was prepared "
                    f"for {len(holders)} claims at once: {', '.join(sorted(holders))}")
            old = holders & inherited
            if not holders - old:  # the earlier scenarios' doing, judged in them
                left_twice.add(f"node/{snap['node']} {pool}/{device}")
                continue
            if len(holders - old) > 1 or not old:
                return Verdict(name, VIOLATED, what, [shown], origin, subjects=len(claims),
                               reads=frozenset(), external=NODE_STATE)
            leak = _leaked(old, holders - old, (driver, pool, device), node, snap, history)
            if not isinstance(leak, str):
                left, deletions = leak
                gone = ", ".join(f"{c.ref} at +{c.hi - origin:.3f}s" for c in deletions)
                return Verdict(name, VIOLATED, f"{what}: {left}, left prepared by an earlier "
                               f"scenario, was still prepared after every pod it was prepared "
                               f"for was recorded gone ({gone}), and then the device was "
                               f"prepared for {', '.join(sorted(holders - old))}: a leak",
                               sorted([*(c.entry for c in deletions), shown],
                                      key=lambda e: history.when(e).hi), origin,
                               subjects=len(claims), reads=frozenset({"pods", "resourceclaims"}),
                               external=NODE_STATE)
            blamed = blamed or Verdict(
                name, UNKNOWN, f"{what}; but {', '.join(sorted(old))} was prepared there "
                f"before this scenario began, left by an earlier one, and {leak}", [shown],
                origin, subjects=len(claims), reads=frozenset(), external=NODE_STATE)
    if blamed is not None:
        return blamed
    unseen = unseen_stretches(reads, history)
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
            snap: dict[str, Any], history: History) -> tuple[str, list[Change]] | str:
    """An inherited claim of ``old`` and the removals of every pod it was prepared for, each
    certainly before a claim of ``new`` was prepared on ``device`` (by the last moment the node
    was known not to hold it there); else why the history cannot say."""
    after = [node.since.get((device, claim)) for claim in sorted(new)]
    if any(moment is None for moment in after):
        return f"{', '.join(sorted(new))} held the device from the node's first read"
    prepared_after = min(a for a in after if a is not None) + history.offset
    consumers = kubelet_consumers(snap["text"])
    why = ""
    for claim in sorted(old):
        pods = consumers.get(claim, set()) | _claim_pods(history, claim)
        if not pods:
            why = why or f"nothing recorded names the pod {claim} was prepared for"
            continue
        gone = {uid: life.gone for uid in pods
                if (life := history.life(uid)) is not None and life.gone is not None}
        late = sorted(uid for uid in pods if uid not in gone or gone[uid].hi >= prepared_after)
        if not late:
            return claim, sorted((gone[uid] for uid in pods), key=lambda c: c.order)
        life = history.life(late[0])
        why = why or (f"the history has no record of the pod {claim} was prepared for (uid "
                      f"{late[0]})" if life is None else
                      f"{life.ref}, which {claim} was prepared for, was not recorded gone "
                      "before the device was prepared again")
    return why


def _claim_pods(history: History, claim: str) -> set[str]:
    """The UIDs of the pods the history shows using ``claim`` (``ns/name``): in its reservedFor,
    or naming it among their claims."""
    namespace, _, claim_name = claim.partition("/")
    pods: set[str] = set()
    for life in history.lives_of("resourceclaims", namespace, claim_name):
        for obj in life.objects():
            pods |= consumers(obj) - {""}
    for life in history.lives_of("pods", namespace):
        if life.ever(lambda obj: claim_name in claim_names(obj)) and life.uid:
            pods.add(life.uid)
    return pods


def unseen_stretches(reads: dict[str, NodeReads], history: History,
                     only: str | None = None) -> list[str]:
    """Each stretch a node was not seen while the loops ran: every node each loop read, and
    every node the history records (over its lifetime) from when the loops began to when
    their lines were taken."""
    offset, origin = history.offset, history.origin
    lines = [at for node in reads.values() for at in node.lines]
    ends = lines + [at for node in reads.values() for at in node.taken]
    begin, end = (min(lines), max(ends)) if lines else (-math.inf, math.inf)
    wanted = {node: [(begin, end, "")] for node in reads}
    for node, lives in _node_lives(history).items():
        wanted[node] = [(max(begin, born), min(end, died), how) for born, died, how in lives
                        if born <= end and died >= begin]
    found = []
    for start, stop, what in _nodes_unknown(history, begin, end):
        # a node the record lost may have been there: every loop must have read throughout,
        # and a node with no loop at all would not be known
        for node in reads:
            wanted.setdefault(node, []).append((start, stop, ""))
        if only is None or only not in reads:
            found.append(f"the nodes the cluster had from {_at(start, offset, origin)} to "
                         f"{_at(stop, offset, origin)} are not known ({what}): one may have "
                         "had no read loop")
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


def _nodes_unknown(history: History, begin: float, end: float
                   ) -> list[tuple[float, float, str]]:
    """The stretches of [begin, end] (the nodes' clock) in which the record of nodes had a
    gap: a node made and gone (or made and never re-listed) then is in no life."""
    offset = history.offset
    return [(max(begin, t.start - offset), min(end, t.end - offset), t.what)
            for t in history.troubles({"nodes"})
            if t.start != t.end and t.overlaps(begin + offset, end + offset)]


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


def _node_lives(history: History) -> dict[str, list[tuple[float, float, str]]]:
    """Each node the history records: when it was there, on the nodes' clock (from when it
    was made, or from when the recording listed it, to when its removal was written), and how
    it came ("joined at +t", or was there when the recording began)."""
    offset, origin = history.offset, history.origin
    lives: dict[str, list[tuple[float, float, str]]] = {}
    for life in history.lives_of("nodes"):
        first = life.first
        created = seconds(((first.object or {}).get("metadata") or {}).get(
            "creationTimestamp", ""))
        listed = first.type == SYNC
        born = min(first.lo if not listed else first.hi, created + offset
                   if created == created else math.inf) - offset
        how = ("was there when the recording began" if listed else
               f"joined at +{born + offset - origin:.1f}s")
        gone = life.gone
        died = gone.lo - offset if gone is not None else math.inf
        lives.setdefault(life.name, []).append((born, died, how))
    return lives


def nothing_from_gone_slices(history: Recorded, node: str,
                             name: str = "nothing_from_gone_slices") -> Verdict:
    """D6: once node/<node> is deleted, no claim gets a new allocation from the pools its
    ResourceSlices published (the cluster's order). Judged over the claims recorded after the
    deletion; an allocation a re-list found is blamed only when the claim was recorded
    unallocated from there after the deletion."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"nodes", "resourceclaims", "resourceslices"})
    pools: set[tuple[str, str]] = set()  # (driver, pool) the node's slices published
    gone: Change | None = None
    allocated: dict[str, list[Device]] = {}
    judged: set[str] = set()
    for change in history.changes_of(reads):
        obj = change.after
        if change.resource == "resourceslices" and obj and gone is None:
            spec = obj.get("spec") or {}
            if spec.get("nodeName") == node:
                pools.add((spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")))
        elif change.resource == "nodes" and change.name == node and obj is None:
            gone = gone or change
        elif change.resource == "resourceclaims":
            key = f"{change.namespace}/{change.name}"
            devices = allocated_devices(obj or {})
            new = [d for d in devices if d not in allocated.get(key, [])]
            allocated[key] = devices
            if gone is None:
                continue
            judged.add(key)
            if not any((driver, pool) in pools for driver, pool, _ in new):
                continue
            before = change.previous
            if not change.seen and (before is None or before.order < gone.order):
                continue  # allocated somewhere in a gap that began before the deletion
            witness = sorted([c for c in (before, gone, change) if c], key=lambda c: c.order)
            return Verdict(name, VIOLATED, f"resourceclaim/{key} was allocated a device of "
                           f"node/{node} after the node was deleted",
                           [c.entry for c in witness], origin, subjects=len(judged),
                           reads=reads)
    if gone is None:
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


def never_deallocated_in_use(history: Recorded,
                             name: str = "never_deallocated_in_use") -> Verdict:
    """D3: a claim's allocation never turns into another allocation, and is never cleared
    while the claim is still reserved for a consumer (each claim by its life)."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({"resourceclaims"})
    lives = history.lives_of("resourceclaims")
    for life in lives:
        last: tuple[list[Device], set[str], Change] | None = None
        for change in life.changes:
            claim = change.object or {}
            devices = [] if change.type == DELETED else allocated_devices(claim)
            reserved = consumers(claim)
            if last is not None and last[0]:
                if devices and devices != last[0]:
                    return Verdict(name, VIOLATED, f"{change.ref} was re-allocated from "
                                   f"{_names(last[0])} to {_names(devices)}",
                                   [last[2].entry, change.entry], origin, subjects=len(lives),
                                   reads=reads)
                if not devices and last[1] and reserved:
                    return Verdict(name, VIOLATED, f"{change.ref} lost its allocation while "
                                   f"still reserved for {len(reserved)} consumers",
                                   [last[2].entry, change.entry], origin, subjects=len(lives),
                                   reads=reads)
            last = (devices, reserved, change)
    return Verdict(name, PASS, f"{len(lives)} claims, none re-allocated or freed while in use",
                   [], origin, subjects=len(lives), reads=reads)


def _names(devices: list[Device]) -> str:
    return ", ".join("/".join(device) for device in devices)



@check("allocated_before_bind", "When a pod is bound, each of its claims already has an "
       "allocation for that node that lists the pod, or its PodGroup, in reservedFor.")
def _allocated_before_bind(history: History, p: Params) -> Verdict:
    return allocated_before_bind(history, p["namespace"])


@check("exclusive_devices", "A device is in at most one claim's allocation at any recorded "
       "moment.")
def _exclusive_devices(history: History, p: Params) -> Verdict:
    return exclusive_devices(history)


EVICTING = "NoExecute"
KEEPING_OFF = ("NoSchedule", "NoExecute")  # effects that keep a device from a new allocation


Taints = dict[Device, list[dict[str, Any]]]


RULES = "devicetaintrules"


def device_taints(state: State) -> Taints:
    """Each device's taints (none: an empty list) as the newest generation of its pool's
    slices lists them (KEP-5055: a driver taints a device in its ResourceSlice), and each
    DeviceTaintRule whose selector picks it adds (as an administrator taints devices)."""
    rules = [r.get("spec") or {} for r in state.select(RULES)]
    found: Taints = {}
    for (driver, pool), current in current_pools(state.select("resourceslices")).items():
        for item in current:
            for listed in (item.get("spec") or {}).get("devices") or []:
                device = (driver, pool, listed.get("name", ""))
                found[device] = list(listed.get("taints") or []) + [
                    rule["taint"] for rule in rules
                    if rule.get("taint") and selects(rule.get("deviceSelector"), device)]
    return found


def selects(selector: dict[str, Any] | None, device: Device) -> bool:
    """Whether a DeviceTaintRule's selector picks the device: none picks nothing, and each of
    driver, pool and device that it sets must be the device's (an empty one picks all)."""
    if selector is None:
        return False
    return all(selector.get(field) in (None, value)
               for field, value in zip(("driver", "pool", "device"), device, strict=True))


def taint_reads(history: History, *kinds: str) -> frozenset[str]:
    """What a judge of device taints reads: ``kinds`` and the DeviceTaintRules, unless the
    cluster serves none (before 1.36 they are an alpha API, off unless asked for)."""
    return frozenset(kinds) | (frozenset() if RULES in history.unserved else {RULES})


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    """As a pod's tolerations match a node's taints: an empty key with Exists matches all, an
    effect matches when unset or the same, Equal (the default) compares the value."""
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        operator = toleration.get("operator") or "Equal"
        if not toleration.get("key"):
            if operator == "Exists":
                return True
            continue
        if toleration["key"] != taint.get("key"):
            continue
        if operator == "Exists" or toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def request_tolerations(claim: dict[str, Any], request: str) -> list[dict[str, Any]]:
    """The tolerations of a claim's request (``request/sub`` for a firstAvailable
    subrequest), in the v1 shape (``exactly``) or the older one (on the request)."""
    name, _, sub = request.partition("/")
    for found in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        if found.get("name") != name:
            continue
        if sub:
            for option in found.get("firstAvailable") or []:
                if option.get("name") == sub:
                    return list(option.get("tolerations") or [])
            return []
        return list((found.get("exactly") or found).get("tolerations") or [])
    return []


def _untolerated(taints: Taints, claim: dict[str, Any], effects: tuple[str, ...]
                 ) -> list[tuple[Device, dict[str, Any]]]:
    """Each (device, taint) of the claim's allocation with one of ``effects`` that its request
    does not tolerate, by the slices recorded now (``taints``: device_taints of the state)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    found = []
    for result in (allocation.get("devices") or {}).get("results") or []:
        device = (result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
        tolerations = request_tolerations(claim, result.get("request", ""))
        for taint in taints.get(device, []):
            if taint.get("effect") in effects and not tolerates(tolerations, taint):
                found.append((device, taint))
    return found


def _shown(device: Device, taint: dict[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"device {'/'.join(device)} (taint {taint.get('key')}{value}:{taint.get('effect')})"


def untainted_allocation(history: Recorded, namespace: str,
                         name: str = "untainted_allocation") -> Verdict:
    """D14: no claim of the namespace is allocated a device that carries a NoSchedule or
    NoExecute taint its request does not tolerate. Judged where the taint was recorded before
    the claim was made (a scheduler may have decided on a view a moment old)."""
    history = History.of(history)
    origin = history.origin
    reads = taint_reads(history, "resourceclaims", "resourceslices")
    made: dict[str, int] = {}  # claim -> the order of its first recorded change
    tainted: dict[tuple[Device, str, str], Change] = {}  # (device, key, effect) -> since
    judged: set[str] = set()
    for change, state in history.replay(reads):
        if change.resource in ("resourceslices", RULES):
            _note_taints(state, change, tainted)
            continue
        if change.namespace != namespace or change.after is None:
            continue
        made.setdefault(change.name, change.order)
        before = allocated_devices(change.previous.after or {}) if change.previous else []
        if not allocated_devices(change.after) or before:
            continue
        judged.add(change.name)
        for device, taint in _untolerated(device_taints(state), change.after, KEEPING_OFF):
            since = tainted.get((device, taint.get("key", ""), taint.get("effect", "")))
            if since is None or since.order > made[change.name] or not change.seen:
                continue
            return Verdict(name, VIOLATED, f"resourceclaim/{namespace}/{change.name} was "
                           f"allocated {_shown(device, taint)}, which its request does not "
                           "tolerate, tainted since before the claim was made",
                           [since.entry, change.entry], origin, subjects=len(judged),
                           reads=reads)
    if not judged:
        return Verdict(name, UNKNOWN, f"nothing to judge: no claim of {namespace} was "
                       "allocated", [], origin, subjects=0, reads=reads)
    return Verdict(name, PASS, f"no claim was allocated a device with a taint it does not "
                   f"tolerate ({len(judged)} allocations)", [], origin,
                   subjects=len(judged), reads=reads)


def _note_taints(state: State, change: Change,
                 tainted: dict[tuple[Device, str, str], Change]) -> None:
    """Keep, for each taint of a device of the changed slice's pool (of every pool, for a
    DeviceTaintRule's change), the change since which it has been there."""
    spec = (change.after or change.object or {}).get("spec") or {}
    pool = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
    if change.resource == RULES:
        pool = None
    now = {(device, taint.get("key", ""), taint.get("effect", ""))
           for device, taints in device_taints(state).items() if pool in (None, device[:2])
           for taint in taints}
    for key in [k for k in tainted if pool in (None, k[0][:2]) and k not in now]:
        del tainted[key]
    for key in now:
        tainted.setdefault(key, change)


def evicted_for_taint(history: Recorded, namespace: str, within: float,
                      name: str = "evicted_for_taint") -> Verdict:
    """D15: a pod of the namespace whose claim's device carries a NoExecute taint the claim
    does not tolerate is deleted (its deletion begun) within ``within`` seconds of the taint
    being recorded on it (KEP-5055: kube-controller-manager evicts it)."""
    history = History.of(history)
    origin = history.origin
    reads = taint_reads(history, "pods", "resourceclaims", "resourceslices")
    since: dict[str, tuple[Change, str]] = {}  # pod -> (from when it should go, why)
    judged: set[str] = set()
    for change, state in history.replay(reads):
        for pod_name, (start, why) in list(since.items()):
            if change.lo > start.hi + within:
                return Verdict(name, VIOLATED, f"pod/{namespace}/{pod_name} used {why} from "
                               f"+{start.hi - origin:.3f}s and was not being deleted "
                               f"{within:g}s later", [start.entry], origin,
                               subjects=len(judged), window=(start.lo, start.hi + within),
                               by_absence=True, reads=reads)
        due = _due(state, namespace)
        for pod_name in [p for p in since if p not in due]:
            del since[pod_name]
        for pod_name, why in due.items():
            judged.add(pod_name)
            since.setdefault(pod_name, (change, why))
    for pod_name, (start, why) in since.items():
        if history.end > start.hi + within:
            return Verdict(name, VIOLATED, f"pod/{namespace}/{pod_name} used {why} from "
                           f"+{start.hi - origin:.3f}s and was not being deleted {within:g}s "
                           "later", [start.entry], origin, subjects=len(judged),
                           window=(start.lo, start.hi + within), by_absence=True, reads=reads)
        return Verdict(name, UNKNOWN, f"pod/{namespace}/{pod_name} used {why} from "
                       f"+{start.hi - origin:.3f}s, less than {within:g}s before the history "
                       "ends", [start.entry], origin, reads=reads)
    if not judged:
        return Verdict(name, UNKNOWN, f"the precondition never held: no pod of {namespace} "
                       "used a device tainted NoExecute that its claim does not tolerate", [],
                       origin, subjects=0, reads=reads)
    return Verdict(name, PASS, f"each of {len(judged)} pods on a device tainted NoExecute was "
                   f"being deleted within {within:g}s", [], origin, subjects=len(judged),
                   reads=reads)


def _due(state: State, namespace: str) -> dict[str, str]:
    """The pods of the namespace, not being deleted, whose claim is allocated a device with a
    NoExecute taint it does not tolerate, and why."""
    due = {}
    taints = device_taints(state)
    for pod in state.select("pods", namespace):
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        for claim_name in claim_names(pod):
            claim = state.get("resourceclaims", namespace, claim_name) or {}
            found = _untolerated(taints, claim, (EVICTING,))
            if found:
                due[meta.get("name", "")] = _shown(*found[0])
                break
    return due


@check("node_side_exclusive", "On a node, a device is never prepared for two claims at once "
       "(by the driver's prepare log).")
def _node_side_exclusive(history: History, p: Params) -> Verdict:
    return node_side_exclusive(p["prepare_log"], history)


@check("node_state_exclusive", "On a node, a device is never prepared for two claims at "
       "once (by the kubelet's DRA checkpoint on the node, read through the scenario).")
def _node_state_exclusive(history: History, p: Params) -> Verdict:
    return node_state_exclusive(p["node_state"], history, p.get("namespace"))


@check("never_deallocated_in_use", "A claim's allocation never changes to another, and is "
       "never cleared while the claim is reserved.")
def _never_deallocated_in_use(history: History, p: Params) -> Verdict:
    return never_deallocated_in_use(history)


@check("nothing_from_gone_slices", "Once a node is deleted, nothing is allocated from its "
       "devices.")
def _nothing_from_gone_slices(history: History, p: Params) -> Verdict:
    return nothing_from_gone_slices(history, p["node"])


@check("untainted_allocation", "No claim is allocated a device with a NoSchedule or NoExecute "
       "taint its request does not tolerate.")
def _untainted_allocation(history: History, p: Params) -> Verdict:
    return untainted_allocation(history, p["namespace"])


@check("evicted_for_taint", "A pod whose claim's device is tainted NoExecute, untolerated, is "
       "being deleted within a bound.")
def _evicted_for_taint(history: History, p: Params) -> Verdict:
    return evicted_for_taint(history, p["namespace"], p["within"])


CONCEPTS = ("device_driver",)
prop("D1", "Allocate before bind: when a pod is bound, each of its claims is allocated for "
     "that node and lists the pod in reservedFor, or the PodGroup the pod is scheduled in "
     "(KEP-5729: a PodGroup's claim is reserved for the group, {apiGroup: scheduling.k8s.io, "
     "resource: podgroups}).", ["allocated_before_bind"], CONCEPTS)
prop("D2", "Exclusive devices: a device is in at most one claim's allocation at any time.",
     ["exclusive_devices"], CONCEPTS)
prop("D3", "No deallocation while in use: an allocation never changes to another, and is never "
     "cleared while reserved.", ["never_deallocated_in_use"], CONCEPTS)
prop("D4", "Release: a consumer that departed or finished (Succeeded or Failed) leaves "
     "reservedFor, and an unused generated claim is deleted, within T (a finished pod's device "
     "is free for another; before issue 46 only deleted pods were counted). A PodGroup in "
     "reservedFor (KEP-5729) is no pod: the group holds its claim until the group goes, and "
     "that release is not judged here.", ["eventually"],
     CONCEPTS)
prop("D5", "Node-side exclusivity: on a node a device is never prepared for two claims at "
     "once. A claim that holds it with admin access is no second claim (KEP-5018: \"the "
     "scheduler bypasses standard allocation checks and allows administrators to access "
     "devices already in use\"), and on the kubelet's checkpoint a share of a device that "
     "allows multiple allocations (KEP-5075: each with its own ShareID) is held on its own, "
     "as D2 counts them.",
     ["node_side_exclusive", "node_state_exclusive"], CONCEPTS)
prop("D6", "Node loss: ResourceSlices of a deleted node disappear; nothing new is allocated "
     "from them.", ["eventually", "nothing_from_gone_slices"], CONCEPTS, ("node_delete",))
prop("D7", "D2-D4 hold across kube-controller-manager / kube-scheduler restarts and watch "
     "delays.", ["eventually", "exclusive_devices", "allocated_before_bind",
                 "node_side_exclusive", "node_state_exclusive", "never_deallocated_in_use"],
     CONCEPTS,
     ("component_restart",))
prop("D14", "No allocation from a tainted device: no claim is allocated a device that carries a "
     "NoSchedule or NoExecute taint its request does not tolerate (KEP-5055, GA in 1.37: a "
     "driver taints a device in its ResourceSlice, an administrator with a DeviceTaintRule, "
     "and the scheduler keeps it from new allocations). Judged where the taint was recorded "
     "before the claim was made.", ["untainted_allocation"], CONCEPTS)
prop("D15", "Eviction from a NoExecute device: a pod whose claim is allocated a device tainted "
     "NoExecute, which the claim does not tolerate, is being deleted within T of the taint "
     "(kube-controller-manager's device taint eviction), a claim of its spec or the one the "
     "scheduler made for its extended resources (KEP-5004; kubernetes#141290, kept until "
     "1.37.2), and a pod whose claim tolerates it stays.",
     ["evicted_for_taint", "never_has_from"], CONCEPTS)
