"""D8-D11: the driver contract on the node, under faults of what runs there (a reboot, a
kubelet restart, the driver's plugin stopped and started), judged from what the API server
recorded and what each node's kubelet checkpointed (read on the node), never from the
driver's own words. D1-D7 are in `dra`; D5 and these share its reading of the nodes."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import claim_names, kubelet_claims, kubelet_duplicates, reserved_for
from aftershock.history import Change, Entry, History, Life, Span, mark, seconds
from aftershock.properties.base import Params, check, prop
from aftershock.properties.dra import CONCEPTS, NODE_STATE, NodeReads, unseen_stretches

Recorded = History | Iterable

DONE = ("Succeeded", "Failed")
# D10's shortest bound. The kubelet unprepares the claims of a pod it no longer runs from its
# DRA manager's reconcile loop, every 60 s (pkg/kubelet/cm/dra/manager.go,
# defaultReconcilePeriod), and a call to a plugin may take 45 s (plugin/dra_plugin.go,
# defaultClientCallTimeout); Kubernetes' own node e2e allows a retry 120 s
# (test/e2e_node/dra_test.go: kubeletRetryPeriod 90 s + 30 s). A shorter bound would fail a
# driver for the kubelet's period.
KUBELET_RETRY = 120.0


def _live_on(obj: dict[str, Any] | None, node: str) -> bool:
    if not obj:
        return False
    return ((obj.get("spec") or {}).get("nodeName") == node
            and not (obj.get("metadata") or {}).get("deletionTimestamp")
            and (obj.get("status") or {}).get("phase") not in DONE)


def runs_since(pod: dict[str, Any], since_wall: float) -> bool:
    """Every container of ``pod`` running, started at or after ``since_wall`` (the kubelet's
    whole seconds), and the pod Ready: it runs again, not as it ran before."""
    status = pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    if not containers:
        return False
    for container in containers:
        running = (container.get("state") or {}).get("running") or {}
        started = running.get("startedAt")
        if not started or seconds(started) < math.floor(since_wall):
            return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or [])


def heard_since(node: dict[str, Any] | None, since_wall: float) -> bool:
    """Whether ``node`` reads Ready with a heartbeat its kubelet wrote at or after
    ``since_wall`` (whole seconds): a kubelet that started again has spoken."""
    ready = next((c for c in ((node or {}).get("status") or {}).get("conditions") or []
                  if c.get("type") == "Ready"), {})
    beat = ready.get("lastHeartbeatTime")
    return ready.get("status") == "True" and bool(beat) and \
        seconds(beat) >= math.floor(since_wall)


def why_not_running(pod: dict[str, Any] | None) -> str:
    """What the pod's last recorded state says of its containers, as kubectl describe does."""
    if pod is None:
        return "it was deleted"
    status = pod.get("status") or {}
    said = []
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        waiting, running = state.get("waiting"), state.get("running")
        if waiting:
            detail = f": {waiting['message'][:300]}" if waiting.get("message") else ""
            said.append(f"container {container.get('name')} waiting, "
                        f"{waiting.get('reason', 'no reason')}{detail}")
        elif running:
            said.append(f"container {container.get('name')} running since "
                        f"{running.get('startedAt')}, from before the reboot")
        else:
            said.append(f"container {container.get('name')} terminated")
    return "; ".join(said) or f"phase {status.get('phase', 'unknown')}, no container status"


def ran_again(history: Recorded, node: str, since: float, within: float,
              namespace: str, now: float | None = None, name: str = "ran_again") -> Verdict:
    """D8: every pod of ``namespace`` that uses a claim and was live on node/<node> when it
    rebooted (at ``since``, the recorder's clock) runs again within ``within`` seconds: each
    container running, started after the reboot (the kubelet's clock), and the pod Ready. A
    pod deleted first is not judged, and named. ``now`` is when it was judged: the history is
    known up to then, though nothing may have been recorded since its last entry."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads = frozenset({"pods"})
    bound = since + within
    at = f"+{since - origin:.1f}s"
    subjects: list[Life] = []
    unsure: list[Life] = []
    for life in history.lives_of("pods", namespace):
        there = life.holds(Span.at(since), lambda obj: _live_on(obj, node)
                           and bool(claim_names(obj or {})))
        (subjects if there else unsure if there is None else []).append(life)
    if not subjects and not unsure:
        return Verdict(name, UNKNOWN, f"the precondition never held: no pod of {namespace} "
                       f"with a claim was running on node/{node} when it rebooted ({at})", [],
                       origin, subjects=0, reads=reads)
    again: dict[str, Change] = {}
    gone: list[Life] = []
    missing: list[tuple[Life, bool]] = []  # (life, whether it may have run again in time)
    for life in subjects + unsure:
        ran = next((c for c in life.changes if c.after is not None and c.hi > since
                    and runs_since(c.after, since - offset)), None)
        went = next((c for c in life.changes if c.after is None and c.hi > since), None)
        if went is not None and (ran is None or went.order < ran.order):
            gone.append(life)
        elif ran is not None and ran.hi <= bound:
            again[life.id] = ran
        elif life in subjects:
            missing.append((life, ran is not None and ran.lo <= bound))
    last = max(history.end, now or -math.inf)
    if missing and last < bound:
        return Verdict(name, UNKNOWN, f"the history ends at +{last - origin:.1f}s, before the "
                       f"bound of {within:g}s after node/{node} rebooted ({at}): "
                       f"{missing[0][0].ref} had not run again by then", [], origin,
                       subjects=len(subjects), reads=reads, window=(since, last))
    sure = [life for life, maybe in missing if not maybe]
    if sure:
        life = sure[0]
        seen = [c for c in life.changes if c.lo <= bound]
        before = [c for c in life.changes if c.hi <= since]
        more = f" (and {len(sure) - 1} more)" if len(sure) > 1 else ""
        witness = [c.entry for c in ([before[-1]] if before else []) +
                   ([seen[-1]] if seen and (not before or seen[-1] is not before[-1]) else [])]
        return Verdict(name, VIOLATED, f"{life.ref}, running on node/{node} when it rebooted "
                       f"({at}), did not run again within {within:g}s: "
                       f"{why_not_running(seen[-1].after if seen else None)}{more}", witness,
                       origin, subjects=len(subjects), window=(since, bound), by_absence=True,
                       reads=reads)
    if missing:
        return Verdict(name, UNKNOWN, f"{missing[0][0].ref} ran again in a state written within "
                       f"a second of the {within:g}s bound after node/{node} rebooted ({at}): "
                       "whether in time is not known", [], origin, subjects=len(subjects),
                       reads=reads)
    if not again:
        return Verdict(name, UNKNOWN, f"every pod on node/{node} when it rebooted ({at}) was "
                       f"deleted before it ran again, or may not have been there: "
                       f"{', '.join(life.ref for life in gone + unsure)}",
                       [], origin, subjects=0, reads=reads)
    slowest = max(again.values(), key=lambda c: c.hi)
    skipped = f"; not judged, deleted first: {', '.join(life.ref for life in gone)}" \
        if gone else ""
    return Verdict(name, PASS, f"{len(again)} pods on node/{node} when it rebooted ({at}) ran "
                   f"again, the last after {slowest.hi - since:.1f}s at most{skipped}",
                   [slowest.entry], origin, subjects=len(again), window=(since, slowest.hi),
                   reads=reads)


@dataclass
class _Copy:
    """One copy of a node's checkpoint that checked out: when (the node's clock), and each
    claim (``ns/name``) with the pods it was prepared for."""

    time: float
    node: str
    text: str
    claims: dict[str, set[str]]


def _mine(claim: str, namespace: str | None) -> bool:
    """A claim of the scenario's namespace: one an earlier scenario left on a node (a reused
    cluster keeps its nodes' checkpoints) is not this scenario's to judge."""
    return namespace is None or claim.startswith(f"{namespace}/")


def _read(snapshots: list[dict[str, Any]], namespace: str | None = None,
          begun: bool = False) -> tuple[dict[str, NodeReads], list[_Copy]]:
    """Each node's reads, and each copy of its checkpoint with the claims prepared there, or
    with ``begun`` also those whose preparation the kubelet began (it checkpoints a claim with
    its drivers and no devices before it asks them, so that it unprepares the claim even if it
    never hears their answer)."""
    reads: dict[str, NodeReads] = {}
    copies = []
    for snap in sorted(snapshots, key=lambda s: s["time"]):
        node = reads.setdefault(snap["node"], NodeReads(snap["node"]))
        if node.read(snap) is None:
            continue
        claims = {f"{c.get('Namespace', '')}/{c.get('ClaimName', '')}": set(c.get("PodUIDs") or ())
                  for c in kubelet_claims(snap["text"])
                  if (any((s or {}).get("Devices") for s in (c.get("DriverState") or {}).values())
                      or (begun and c.get("DriverState")))
                  and _mine(f"{c.get('Namespace', '')}/", namespace)}
        copies.append(_Copy(snap["time"], snap["node"], snap["text"], claims))
    return reads, copies


def _mark(copy: _Copy, offset: float, detail: str) -> Entry:
    return mark(offset, copy.time, f"node/{copy.node} {NODE_STATE}: {detail}")


def _not_seen(reads: dict[str, NodeReads], history: History, name: str, judged: int,
              only: str | None = None) -> Verdict | None:
    origin = history.origin
    unseen = unseen_stretches(reads, history, only)
    if not unseen:
        return None
    more = f" (and {len(unseen) - 1} more)" if len(unseen) > 1 else ""
    return Verdict(name, UNKNOWN, f"{NODE_STATE} was not seen throughout: {unseen[0]}{more}",
                   [], origin, subjects=judged, reads=frozenset(), external=NODE_STATE)


def no_duplicate_devices(snapshots: list[dict[str, Any]], history: Recorded,
                         namespace: str | None = None,
                         name: str = "no_duplicate_devices") -> Verdict:
    """D9: in no copy of a node's kubelet DRA checkpoint does a claim list one device, or one
    CDI device id, twice (a kubelet that appended a re-preparation's answer after it restarted,
    kubernetes/kubernetes#140471: the container then gets each device twice)."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads, copies = _read(snapshots, namespace)
    claims: set[str] = set()
    for copy in copies:
        claims |= set(copy.claims)
        repeated = [found for found in kubelet_duplicates(copy.text)
                    if _mine(found[0], namespace)]
        if repeated:
            claim, what = repeated[0]
            more = f" (and {len(repeated) - 1} more)" if len(repeated) > 1 else ""
            return Verdict(name, VIOLATED, f"on node/{copy.node} the kubelet's checkpoint "
                           f"lists, for claim {claim}, {what}{more}",
                           [_mark(copy, offset, f"{claim}: {what}")], origin,
                           subjects=len(claims), reads=frozenset(), external=NODE_STATE)
    blind = _not_seen(reads, history, name, len(claims))
    if blind is not None:
        return blind
    if not claims:
        return Verdict(name, UNKNOWN, f"{NODE_STATE} never showed a prepared claim", [], origin,
                       subjects=0, reads=frozenset(), external=NODE_STATE)
    return Verdict(name, PASS, f"{len(copies)} states of {NODE_STATE} ({len(reads)} nodes, "
                   f"each seen throughout): {len(claims)} claims prepared, none listing a "
                   "device or CDI id twice", [], origin, subjects=len(claims),
                   reads=frozenset({"nodes"}), external=NODE_STATE)


def _gone_pods(history: History, before: float) -> set[str]:
    """UIDs of the pods certainly gone (or finished) by ``before`` (the recorder's scale)."""
    return {life.uid or life.id for life in history.lives_of("pods")
            if life.holds(Span.at(before), lambda obj: obj is None or
                          (obj.get("status") or {}).get("phase") in DONE) is True
            and life.first.hi <= before}


def unprepared_once_back(snapshots: list[dict[str, Any]], history: Recorded, node: str,
                         back: float, within: float, namespace: str | None = None,
                         name: str = "unprepared_once_back",
                         returning: float | None = None) -> Verdict:
    """D10: a claim node/<node>'s checkpoint still held when the driver's plugin came back (at
    ``back``, the recorder's clock), every pod it was prepared for recorded gone by then, is
    unprepared there (leaves the checkpoint) within ``within`` seconds (the NVIDIA GPU
    driver's #1278: a claim deleted while its plugin was down stayed prepared). ``returning``:
    when the plugin was started again (by default ``back``, when its pod was Ready): the claims
    are those held then, since a kubelet that retries every second or two (its pod worker, for
    a pod it still tracks) unprepares them before the pod is seen Ready."""
    history = History.of(history)
    returning = back if returning is None else min(returning, back)
    origin, offset = history.origin, history.offset
    reads, copies = _read(snapshots, namespace)
    mine = [copy for copy in copies if copy.node == node]
    before = [copy for copy in mine if copy.time + offset <= returning]
    if not before:
        return Verdict(name, UNKNOWN, f"{NODE_STATE} of node/{node} was not read before the "
                       f"driver's plugin was started again (+{returning - origin:.1f}s)", [],
                       origin,
                       subjects=0, reads=frozenset(), external=NODE_STATE)
    gone = _gone_pods(history, returning)
    held = {claim: pods for claim, pods in before[-1].claims.items() if pods and pods <= gone}
    if not held:
        return Verdict(name, UNKNOWN, f"the precondition never held: when the driver's plugin "
                       f"was started again on node/{node} (+{returning - origin:.1f}s), its "
                       "checkpoint held no claim whose pods were all gone", [], origin,
                       subjects=0,
                       reads=frozenset(), external=NODE_STATE)
    asked, within = within, max(within, KUBELET_RETRY)
    bound = back + within
    later = [copy for copy in mine if returning < copy.time + offset <= bound]
    took: list[float] = []
    for claim in sorted(held):
        left = next((copy for copy in later if claim not in copy.claims), None)
        if left is not None:
            took.append(left.time + offset - returning)
            continue
        after = [copy for copy in mine if copy.time + offset > bound]
        if not after and not [t for t in reads[node].taken if t + offset > bound]:
            return Verdict(name, UNKNOWN, f"{NODE_STATE} of node/{node} was not read past the "
                           f"bound ({within:g}s after the plugin came back): {claim} was "
                           "still prepared at its last read", [], origin, subjects=len(held),
                           reads=frozenset(), external=NODE_STATE)
        last = (later or before)[-1]
        blind = _not_seen(reads, history, name, len(held), node)
        if blind is not None:
            return blind
        return Verdict(name, VIOLATED, f"claim {claim}, whose pods were all gone, was still "
                       f"prepared on node/{node} {within:g}s after the driver's plugin came "
                       f"back (+{back - origin:.1f}s): the kubelet's checkpoint still held it",
                       [_mark(before[-1], offset, f"{claim} held when the plugin came back"),
                        _mark(last, offset, f"{claim} still held")], origin,
                       subjects=len(held), reads=frozenset(), external=NODE_STATE)
    blind = _not_seen(reads, history, name, len(held), node)
    if blind is not None:
        return blind
    raised = (f" (the {asked:g}s asked for is shorter than the kubelet's retry)"
              if asked < within else "")
    return Verdict(name, PASS, f"{len(held)} claims left prepared on node/{node} while the "
                   f"driver's plugin was down were unprepared within {within:g}s of its "
                   f"return{raised}: seen gone {_spread(took)} after it was started again",
                   [], origin, subjects=len(held), reads=frozenset({"nodes"}),
                   external=NODE_STATE)


def _spread(times: list[float]) -> str:
    low, high = min(times), max(times)
    return f"{low:.1f}s" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}s"


def unprepared_all(snapshots: list[dict[str, Any]], history: Recorded, node: str,
                   back: float, namespace: str | None = None,
                   returning: float | None = None) -> bool:
    """Whether every claim D10 would judge is already read unprepared (its step waits no
    longer than that)."""
    verdict = unprepared_once_back(snapshots, history, node, back, KUBELET_RETRY, namespace,
                                   returning=returning)
    return verdict.status == PASS


def _using(claim: str, node: str) -> Callable[[dict[str, Any] | None], bool]:
    """Whether a pod, as it is, is live on ``node`` and uses ``claim`` (``ns/name``)."""
    namespace, _, claim_name = claim.partition("/")

    def uses(pod: dict[str, Any] | None) -> bool:
        return pod is not None and (pod.get("metadata") or {}).get(
            "namespace", namespace) == namespace and _live_on(pod, node) and \
            claim_name in claim_names(pod)
    return uses


def kept_while_used(snapshots: list[dict[str, Any]], history: Recorded,
                    namespace: str | None = None, name: str = "kept_while_used") -> Verdict:
    """D11: a claim leaves a node's checkpoint (is unprepared) only when no pod on that node
    still uses it: one pod (one life: its uid, not its name) live there, using it, both at the
    last copy that held the claim and at the first that did not, is a violation (kubernetes PR
    #140212: deleting one pod could unprepare a claim another pod still used)."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads, copies = _read(snapshots, namespace)
    previous: dict[str, _Copy] = {}
    removals = []  # (last copy holding the claim, first copy without it, claim)
    for copy in copies:
        before = previous.get(copy.node)
        if before is not None:
            removals += [(before, copy, claim) for claim in sorted(set(before.claims)
                                                                   - set(copy.claims))]
        previous[copy.node] = copy
    unsure: str | None = None
    for before, after, claim in removals:
        then, now = Span.at(before.time + offset), Span.at(after.time + offset)
        uses = _using(claim, after.node)
        for life in history.lives_of("pods", claim.partition("/")[0]):
            both = {life.holds(then, uses), life.holds(now, uses)}
            if both == {True}:
                reserved = " (in its reservedFor)" if life.uid and any(
                    life.uid in reserved_for(obj) for claims in history.lives_of(
                        "resourceclaims", *claim.split("/", 1)) for obj in claims.objects()) \
                    else ""
                seen = [c for c in life.changes if c.hi <= now.hi][-1:]
                witness = [_mark(before, offset, f"{claim} prepared"),
                           *(c.entry for c in seen),
                           _mark(after, offset, f"{claim} no longer prepared")]
                return Verdict(name, VIOLATED, f"claim {claim} was unprepared on "
                               f"node/{after.node} while {life.ref}{reserved}, running there, "
                               "still used it", sorted(witness, key=lambda e: history.when(e).hi),
                               origin, subjects=len(removals), reads=frozenset({"pods"}),
                               external=NODE_STATE)
            if None in both and False not in both:
                unsure = unsure or (f"whether {life.ref} still used claim {claim} when "
                                    f"node/{after.node} unprepared it, the record's moments "
                                    "cannot say")
    blind = _not_seen(reads, history, name, len(removals))
    if blind is not None:
        return blind
    if unsure is not None:
        return Verdict(name, UNKNOWN, unsure, [], origin, subjects=len(removals),
                       reads=frozenset({"pods"}), external=NODE_STATE)
    if not removals:
        return Verdict(name, UNKNOWN, f"no claim was seen unprepared: {NODE_STATE} never lost "
                       "a prepared claim", [], origin, subjects=0, reads=frozenset(),
                       external=NODE_STATE)
    return Verdict(name, PASS, f"{len(removals)} claims unprepared on their nodes, each once "
                   "no pod there used it", [], origin, subjects=len(removals),
                   reads=frozenset({"pods"}), external=NODE_STATE)


def _went(history: History) -> dict[str, tuple[Span | None, float | None]]:
    """Each pod (by uid): when its going began (its deletion mark or removal, as a span) and
    when it was certainly gone or finished (the recorder's scale), either None if never."""
    went = {}
    for life in history.lives_of("pods"):
        going = life.going
        done = next((c.hi for c in life.changes if c.after is None or
                     (c.after.get("status") or {}).get("phase") in DONE), None)
        went[life.uid or life.id] = (going.at if going is not None else None, done)
    return went


def _start_after_downs(start: float, node: str, downs: list[dict[str, Any]],
                       within: float) -> float:
    """When the bound for ``node`` starts: ``start``, moved to the return of every stretch the
    node's kubelet, the node or the driver's plugin was down that it, or the bound after it,
    meets (nothing can be unprepared while one of them is down)."""
    moved = True
    while moved:
        moved = False
        for down in downs:
            if down["node"] == node and down["since"] <= start + within and \
                    down["back"] > start:
                start, moved = down["back"], True
    return start


def _kubelet_down_at(span: Span, node: str, downs: list[dict[str, Any]]) -> dict | None:
    """The stretch ``node``'s kubelet was certainly down throughout ``span``, if any."""
    return next((d for d in downs if d["node"] == node and d["what"] != "plugin"
                 and d["since"] <= span.lo and span.hi <= d["back"]), None)


def unprepared_once(snapshots: list[dict[str, Any]], history: Recorded,
                    downs: list[dict[str, Any]], within: float, namespace: str | None = None,
                    name: str = "unprepared_once") -> Verdict:
    """D16: every claim a node's kubelet checkpointed, prepared or its preparation begun, is
    unprepared there (leaves the checkpoint) once, within ``within`` seconds (never less than
    the kubelet's retry) of the going of every pod it was prepared for, the bound started again
    at the return of each stretch the node's kubelet, the node or the driver's plugin was down
    (``downs``: {"node", "what", "since", "back"}, the recorder's scale); it is never prepared
    again after that; and
    a claim first prepared after such a stretch was never prepared for pods whose deletion
    began while the kubelet was down (kubernetes/kubernetes#116411: a kubelet that restarted
    between a Prepare and its checkpoint never called Unprepare)."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads, copies = _read(snapshots, namespace, begun=True)
    within = max(within, KUBELET_RETRY)
    went = _went(history)
    by_node: dict[str, list[_Copy]] = {}
    pods: dict[tuple[str, str], set[str]] = {}
    for copy in copies:
        by_node.setdefault(copy.node, []).append(copy)
        for claim, uids in copy.claims.items():
            pods.setdefault((copy.node, claim), set()).update(uids)
    judged, took = 0, []
    for (node, claim), uids in sorted(pods.items()):
        seen = [(copy, claim in copy.claims) for copy in by_node[node]]
        first = next(i for i, (_, held) in enumerate(seen) if held)
        late = _prepared_for_the_deleted(seen, first, uids, went, node, downs, offset)
        if late is not None:
            down, copy = late
            return Verdict(name, VIOLATED, f"claim {claim} was prepared on node/{node} after "
                           f"its kubelet came back (+{down['back'] - origin:.1f}s), for pods "
                           "whose deletion began while it was down",
                           [_mark(copy, offset, f"{claim} prepared")], origin,
                           subjects=len(pods), reads=frozenset({"pods"}), external=NODE_STATE)
        goings = [went.get(uid, (None, None)) for uid in uids]
        ends = [end for _, end in goings]
        if not uids or None in ends:
            continue  # a pod of it still there: nothing to unprepare yet
        judged += 1
        gone = max(e for e in ends if e is not None)
        bound = _start_after_downs(gone, node, downs, within) + within
        # from when its last pod began going: a kubelet unprepares a pod's claims once its
        # containers stopped, before it has the pod deleted (or reports it finished)
        began = max(going.lo if going is not None else end for going, end in goings)
        after = [(copy, held) for copy, held in seen if copy.time + offset > began]
        left = next((i for i, (_, held) in enumerate(after) if not held), None)
        if left is not None and after[left][0].time + offset <= bound:
            again = next((copy for copy, held in after[left:] if held), None)
            if again is not None:
                return Verdict(name, VIOLATED, f"claim {claim} was prepared again on "
                               f"node/{node} after it was unprepared there, every pod it was "
                               "prepared for gone", [_mark(after[left][0], offset,
                                                           f"{claim} unprepared"),
                                                     _mark(again, offset,
                                                           f"{claim} prepared again")],
                               origin, subjects=len(pods), reads=frozenset({"pods"}),
                               external=NODE_STATE)
            took.append(after[left][0].time + offset - began)
            continue
        past = [t for t in reads[node].known if t + offset > bound]
        if not past:
            return Verdict(name, UNKNOWN, f"{NODE_STATE} of node/{node} was not read past the "
                           f"bound (+{bound - origin:.1f}s): {claim} was still prepared at "
                           "its last read", [], origin, subjects=judged, reads=frozenset(),
                           external=NODE_STATE)
        blind = _not_seen(reads, history, name, judged, node)
        if blind is not None:
            return blind
        held = [copy for copy, is_held in seen if is_held][-1]
        return Verdict(name, VIOLATED, f"claim {claim} was still prepared on node/{node} "
                       f"{within:g}s after every pod it was prepared for was gone (and its "
                       "node's kubelet and the driver's plugin were up): the kubelet's "
                       "checkpoint still held it", [_mark(held, offset, f"{claim} still held")],
                       origin, subjects=judged, reads=frozenset({"pods"}), external=NODE_STATE)
    for node in sorted({node for node, _ in pods}):
        blind = _not_seen(reads, history, name, judged, node)
        if blind is not None:
            return blind
    if not judged:
        stuck = sorted(f"{claim} on node/{node}" for (node, claim), uids in pods.items()
                       if _still_going(went, uids))
        shown = ", ".join(stuck[:3]) + (", …" if len(stuck) > 3 else "")
        still = (f": the deletion of a pod of {shown} began and was not done" if len(stuck) == 1
                 else f": the deletion of the pods of {len(stuck)} claims began and was not "
                 f"done ({shown})" if stuck else "")
        return Verdict(name, UNKNOWN, f"no claim prepared on a node had all its pods gone"
                       f"{still}", [], origin, subjects=0, reads=frozenset(),
                       external=NODE_STATE)
    down = sorted(uid for uid, (going, _) in went.items() if going is not None and any(
        _kubelet_down_at(going, node, downs) for node in reads))
    during = (f"; {len(down)} pods began going while their node's kubelet was down, and "
              "nothing was prepared for them after it came back" if down else "")
    return Verdict(name, PASS, f"{judged} claims, each unprepared once on its node within "
                   f"{within:g}s of its pods' going: seen gone {_spread(took)} after "
                   f"it{during}", [], origin, subjects=judged,
                   reads=frozenset({"pods", "nodes"}), external=NODE_STATE)


def pending(snapshots: list[dict[str, Any]], history: Recorded,
            downs: list[dict[str, Any]], within: float, namespace: str | None = None) -> bool:
    """Whether D16 still waits: for a read past a claim's bound, or for a pod a claim was
    prepared for that began going to be gone (its step waits no longer than the bound)."""
    history = History.of(history)
    verdict = unprepared_once(snapshots, history, downs, within, namespace)
    if verdict.status == UNKNOWN and "not read past the bound" in verdict.summary:
        return True
    return _still_going(_went(history), {uid for copy in _read(snapshots, namespace,
                                                                begun=True)[1]
                                         for found in copy.claims.values() for uid in found})


def _still_going(went: dict[str, tuple[Span | None, float | None]], uids: Iterable[str]
                 ) -> bool:
    """Whether the deletion of one of the pods ``uids`` began and is not done (``went``:
    _went's, each pod's going and its end)."""
    return any(went.get(uid, (None, None))[0] is not None and went[uid][1] is None
               for uid in uids)


def _prepared_for_the_deleted(seen: list[tuple[_Copy, bool]], first: int, uids: set[str],
                              went: dict[str, tuple[Span | None, float | None]], node: str,
                              downs: list[dict[str, Any]], offset: float
                              ) -> tuple[dict, _Copy] | None:
    """The kubelet-down stretch and the copy, when the claim was first held after the
    stretch's return (the node read before the stretch, without it) and every pod it was
    prepared for began going within the stretch."""
    copy = seen[first][0]
    goings = [went.get(uid, (None, None))[0] for uid in sorted(uids)]
    stretches = [_kubelet_down_at(going, node, downs) if going is not None else None
                 for going in goings]
    if not stretches or None in stretches:
        return None
    down = stretches[0]
    if copy.time + offset <= down["back"] or not any(
            c.time + offset <= down["since"] for c, _ in seen[:first]):
        return None
    return down, copy


def cdi_listing(text: str) -> dict[str, str]:
    """A node's CDI spec files as its read loop lists them (`node_reads.CDI_LISTING`): each
    file's path and its content, on one line."""
    found = {}
    for line in text.splitlines():
        path, tab, content = line.partition("\t")
        if tab:
            found[path] = content
    return found


def _checkpoint_claims(text: str) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Every claim the kubelet's checkpoint holds, prepared or being prepared (uid -> ns/name),
    and each CDI device id it lists with the claims (uids) it lists it for."""
    uids: dict[str, str] = {}
    ids: dict[str, set[str]] = {}
    for claim in kubelet_claims(text):
        uid = claim.get("ClaimUID", "")
        if uid:
            uids[uid] = f"{claim.get('Namespace', '')}/{claim.get('ClaimName', '')}"
        for state in (claim.get("DriverState") or {}).values():
            for device in (state or {}).get("Devices") or []:
                for cdi in device.get("CDIDeviceIDs") or []:
                    ids.setdefault(cdi, set()).add(uid)
    return uids, ids


@dataclass
class _CdiState:
    """What the nodes showed of the scenario's claims: each claim (uid -> ns/name), the claims
    each node's checkpoint held at each copy, the claims each CDI device id was listed for,
    and each node's CDI spec files at each copy (with its reads, for what was seen)."""

    ours: dict[str, str]
    held: dict[str, list[tuple[float, set[str]]]]
    ids: dict[str, set[str]]
    specs: dict[str, NodeReads]
    listed: dict[str, list[tuple[float, dict[str, str]]]]

    @classmethod
    def of(cls, cdi: list[dict[str, Any]], snapshots: list[dict[str, Any]], history: History,
           namespace: str | None) -> _CdiState:
        ours = {life.uid: f"{life.namespace}/{life.name}" for life in history.lives_of(
            "resourceclaims", namespace) if life.uid}
        state = cls(ours, {}, {}, {}, {})
        for snap in sorted(snapshots, key=lambda s: s["time"]):
            if "text" not in snap:
                continue
            try:
                uids, found = _checkpoint_claims(snap["text"])
            except ValueError:
                continue
            ours.update({uid: claim for uid, claim in uids.items() if _mine(claim, namespace)})
            state.held.setdefault(snap["node"], []).append((snap["time"], set(uids)))
            for device, claims in found.items():
                state.ids.setdefault(device, set()).update(claims)
        for snap in sorted(cdi, key=lambda s: s["time"]):
            node = state.specs.setdefault(snap["node"],
                                          NodeReads(snap["node"], parse=cdi_listing))
            files = node.read(snap)
            if files is not None:
                state.listed.setdefault(snap["node"], []).append((snap["time"], files))
        return state


def cdi_clean(cdi: list[dict[str, Any]], snapshots: list[dict[str, Any]], history: Recorded,
              within: float, namespace: str | None = None, name: str = "cdi_clean") -> Verdict:
    """D17: no CDI spec file on a node names one of the scenario's claims (its uid, in the
    file's path or content) for longer than ``within`` seconds while the node's kubelet
    checkpoint does not hold that claim (not prepared, nor being prepared: the kubelet writes a
    claim there before it asks the driver, and removes it after the driver unprepared it), and
    no CDI device id is listed for two claims (a name reused across claims: a spec left for
    one is then a spec for the other). ``cdi``: the lines of each node's loop over its CDI spec
    directories; ``snapshots``: its kubelet checkpoint's."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads, _ = _read(snapshots, namespace)
    nodes = _CdiState.of(cdi, snapshots, history, namespace)
    ours, held, ids, specs, listed = (nodes.ours, nodes.held, nodes.ids, nodes.specs,
                                      nodes.listed)
    every = {path: content for copies in listed.values() for _, files in copies
             for path, content in files.items()}
    claims_known = set(ours) | {uid for found in ids.values() for uid in found}
    for device, claims in sorted(ids.items()):
        if len(claims) > 1 and claims & set(ours) and not _common(device, every, claims_known):
            named = ", ".join(sorted(ours.get(uid, uid) for uid in claims))
            return Verdict(name, VIOLATED, f"CDI device {device} was listed for {len(claims)} "
                           f"claims in the kubelet's checkpoints: {named}", [], origin,
                           subjects=len(ours), reads=frozenset(), external=NODE_STATE)
    for node, copies in sorted(listed.items()):
        stale = _stale_spec(copies, held.get(node, []), specs[node].known, ours, within)[0]
        if stale is not None:
            (since, path, uid), last = stale
            return Verdict(name, VIOLATED, f"the CDI spec {path} on node/{node} named claim "
                           f"{ours[uid]} for {last - since:.1f}s while the node's kubelet did "
                           "not hold it prepared (more than the "
                           f"{within:g}s allowed)", [
                               mark(offset, since, f"node/{node} CDI spec {path}: "
                                    f"{ours[uid]}, not in the kubelet's checkpoint"),
                               mark(offset, last, f"node/{node} CDI spec {path} still there")],
                           origin, subjects=len(ours), reads=frozenset(), external=NODE_STATE)
    for seen in (reads, specs):
        blind = _not_seen(seen, history, name, len(ours))
        if blind is not None:
            return blind
    on_nodes = {uid for copies in held.values() for _, uids in copies for uid in uids
                if uid in ours}
    on_nodes |= {uid for copies in listed.values() for _, files in copies
                 for uid in _named(files, ours)}
    if not on_nodes or not reads or not specs:
        return Verdict(name, UNKNOWN, "no claim of the scenario was seen on a node (in its "
                       "kubelet's checkpoint or a CDI spec), or a node's state was not read",
                       [], origin, subjects=0, reads=frozenset(), external=NODE_STATE)
    return Verdict(name, PASS, f"{len(on_nodes)} claims seen on the nodes: no CDI spec named "
                   f"one for more than {within:g}s while its node's kubelet did not hold it, "
                   f"and no CDI device id was listed for two claims ({len(ids)} ids)", [],
                   origin, subjects=len(on_nodes), reads=frozenset({"resourceclaims", "nodes"}),
                   external=NODE_STATE)


def _named(files: dict[str, str], ours: dict[str, str]) -> dict[str, str]:
    """Each claim of ``ours`` (uid) a listing of spec files names, in a file's path or
    content, with the last path, in order, that does."""
    return {uid: path for path, content in sorted(files.items()) for uid in ours
            if uid in path or uid in content}


def _common(device: str, files: dict[str, str], claims: set[str]) -> bool:
    """Whether a CDI device is one the driver gives every claim (dra-example-driver's
    ``common``): the spec files that define it (its kind and name in them) name no claim."""
    kind, _, named = device.partition("=")
    defining = [f"{path} {content}" for path, content in files.items()
                if named in content and kind in content]
    return bool(defining) and not any(uid in text for text in defining for uid in claims)


def _stale_spec(copies: list[tuple[float, dict[str, str]]],
                held: list[tuple[float, set[str]]], known: list[float],
                ours: dict[str, str], within: float
                ) -> tuple[tuple[tuple[float, str, str], float] | None, bool]:
    """The first (since, path, claim uid) a spec named while the checkpoint did not hold the
    claim, for longer than ``within``, and the last moment it was known still so; and whether
    some spec did so at the last moment known (a stretch that may yet last longer)."""
    since: dict[str, tuple[float, str]] = {}
    for at in sorted({t for t, _ in copies} | {t for t, _ in held} | set(known)):
        files = next((f for t, f in reversed(copies) if t <= at), {})
        holding = next((h for t, h in reversed(held) if t <= at), None)
        if holding is None:
            continue  # the checkpoint not read yet: nothing to compare with
        named = _named(files, ours)
        for uid in list(since):
            if uid not in named or uid in holding:
                del since[uid]
        for uid, path in named.items():
            if uid in holding:
                continue
            began, where = since.setdefault(uid, (at, path))
            if at - began > within:
                return ((began, where, uid), at), True
    return None, bool(since)


def cdi_pending(cdi: list[dict[str, Any]], snapshots: list[dict[str, Any]], history: Recorded,
                namespace: str | None = None) -> bool:
    """Whether a CDI spec names one of the scenario's claims, at the last read, while its
    node's kubelet does not hold it (D17's step waits its bound out then)."""
    nodes = _CdiState.of(cdi, snapshots, History.of(history), namespace)
    return any(_stale_spec(copies, nodes.held.get(node, []), [], nodes.ours, math.inf)[1]
               for node, copies in nodes.listed.items())


def kept_for_failed(cdi: list[dict[str, Any]], snapshots: list[dict[str, Any]],
                    history: Recorded, since: float, until: float | None, within: float,
                    namespace: str | None = None, name: str = "kept_for_failed") -> Verdict:
    """D21: from ``since`` to ``until`` another driver fails every preparation, so no pod whose
    claims it serves can start; meanwhile no CDI spec on a node names one of the scenario's
    claims for longer than ``within`` seconds (what one driver prepared for a pod that cannot
    start is unprepared again, kubernetes/kubernetes#137819). A driver whose specs never name a
    claim shows nothing of what it keeps prepared: UNKNOWN, said so."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    end = until if until is not None else history.end
    reads, _ = _read(snapshots, namespace)
    nodes = _CdiState.of(cdi, snapshots, history, namespace)
    ours, listed = nodes.ours, nodes.listed
    named_ever = {uid for copies in listed.values() for _, files in copies
                  for uid in _named(files, ours)}
    for node, copies in sorted(listed.items()):
        found = _kept(copies, nodes.specs[node].known, ours, since - offset, end - offset,
                      within)
        if found is not None:
            (began, path, uid), last = found
            return Verdict(name, VIOLATED, f"the CDI spec {path} on node/{node} named claim "
                           f"{ours[uid]} for {last - began:.1f}s while the other driver's "
                           f"preparations failed (from +{since - origin:.1f}s), more than the "
                           f"{within:g}s allowed: what was prepared for a pod that could not "
                           "start was not unprepared", [
                               mark(offset, began, f"node/{node} CDI spec {path}: {ours[uid]}, "
                                    "its pod unable to start"),
                               mark(offset, last, f"node/{node} CDI spec {path} still there")],
                           origin, subjects=len(ours), reads=frozenset(), external=NODE_STATE)
    for seen in (reads, nodes.specs):
        blind = _not_seen(seen, history, name, len(ours))
        if blind is not None:
            return blind
    if not named_ever:
        return Verdict(name, UNKNOWN, "no CDI spec on a node ever named a claim of the "
                       "scenario: what the driver keeps prepared is not seen there", [],
                       origin, subjects=0, reads=frozenset(), external=NODE_STATE)
    if until is None and history.end - since <= within:
        return Verdict(name, UNKNOWN, f"the other driver failed for {history.end - since:.1f}s "
                       f"only, no longer than the {within:g}s bound", [], origin, subjects=0,
                       reads=frozenset(), external=NODE_STATE)
    return Verdict(name, PASS, f"{len(named_ever)} claims named by CDI specs on the nodes: none "
                   f"for more than {within:g}s while the other driver's preparations failed "
                   f"({end - since:.0f}s)", [], origin, subjects=len(named_ever),
                   reads=frozenset({"resourceclaims"}), external=NODE_STATE)


def _kept(copies: list[tuple[float, dict[str, str]]], known: list[float],
          ours: dict[str, str], since: float, until: float, within: float
          ) -> tuple[tuple[float, str, str], float] | None:
    """The first (since, path, claim uid) a spec named for longer than ``within`` between
    ``since`` and ``until`` (the recorder's clock on the node's reads), and the last moment it
    was known so: each copy read, and each moment the loop said nothing had changed."""
    began: dict[str, tuple[float, str]] = {}
    found: tuple[tuple[float, str, str], float] | None = None
    for at in sorted({t for t, _ in copies} | set(known)):
        if at < since:
            continue
        if at > until:
            break
        files = next((f for t, f in reversed(copies) if t <= at), {})
        named = _named(files, ours)
        if found is not None:  # how long the first one found stayed
            if found[0][2] not in named:
                break
            found = found[0], at
            continue
        for uid in [uid for uid in began if uid not in named]:
            del began[uid]
        for uid, path in named.items():
            first, where = began.setdefault(uid, (at, path))
            if at - first > within and found is None:
                found = (first, where, uid), at
    return found


@check("ran_again", "Every pod with a claim running on a node when it rebooted runs again "
       "within a bound: each container started after the reboot, the pod Ready.")
def _ran_again(history: History, p: Params) -> Verdict:
    return ran_again(history, p["node"], p["since"], p["within"], p["namespace"],
                     p.get("now"))


@check("no_duplicate_devices", "No claim in a node's kubelet DRA checkpoint lists a device or "
       "a CDI device id twice (read on the node through the scenario).")
def _no_duplicate_devices(history: History, p: Params) -> Verdict:
    return no_duplicate_devices(p["node_state"], history, p.get("namespace"))


@check("unprepared_once_back", "A claim a node's kubelet still held prepared when the "
       "driver's plugin came back, its pods gone, leaves that node's checkpoint within a bound.")
def _unprepared_once_back(history: History, p: Params) -> Verdict:
    return unprepared_once_back(p["node_state"], history, p["node"], p["back"],
                                p["within"], p.get("namespace"), returning=p.get("returning"))


@check("unprepared_once", "Every claim a node's kubelet checkpointed as prepared leaves the "
       "checkpoint once, within a bound of its pods' going (restarted by each return of the "
       "node's kubelet or the driver's plugin), and nothing is prepared for a pod deleted "
       "while the node's kubelet was down.")
def _unprepared_once(history: History, p: Params) -> Verdict:
    return unprepared_once(p["node_state"], history, p["downs"], p["within"],
                           p.get("namespace"))


@check("cdi_clean", "No CDI spec file on a node names a claim for longer than a bound while "
       "the node's kubelet checkpoint does not hold it, and no CDI device id is listed for two "
       "claims (read on the node through the scenario).")
def _cdi_clean(history: History, p: Params) -> Verdict:
    return cdi_clean(p["cdi"], p["node_state"], history, p["within"], p.get("namespace"))


@check("kept_for_failed", "While another driver fails every preparation, no CDI spec on a "
       "node names a claim for longer than a bound (read on the node through the scenario).")
def _kept_for_failed(history: History, p: Params) -> Verdict:
    return kept_for_failed(p["cdi"], p["node_state"], history, p["since"], p.get("until"),
                           p["within"], p.get("namespace"))


@check("kept_while_used", "A claim leaves a node's kubelet DRA checkpoint only when no pod "
       "on that node still uses it.")
def _kept_while_used(history: History, p: Params) -> Verdict:
    return kept_while_used(p["node_state"], history, p.get("namespace"))


prop("D8", "Recovery after a reboot: a pod whose claim was prepared on a node runs again within "
     "T of the node's reboot (kubernetes/kubernetes#141433: the kubelet's checkpoint said "
     "prepared, the driver's CDI spec on tmpfs was gone, and the pod stayed in "
     "CreateContainerError).", ["ran_again"], CONCEPTS, ("node_agent",))
prop("D9", "No duplicates after a kubelet restart: a claim's re-preparation never lists a "
     "device or CDI device id twice (kubernetes/kubernetes#140471, fixed 2026-07).",
     ["no_duplicate_devices"], CONCEPTS)
prop("D10", "Unprepare after the plugin returns: a claim whose pods left while the driver's "
     "plugin was down is unprepared on its node within T of the plugin's return (the NVIDIA "
     "GPU driver's #1278). T is never shorter than the kubelet's retry, 120 s: its DRA manager "
     "unprepares a pod it no longer runs every 60 s, a call may take 45 s, and Kubernetes' own "
     "node e2e allows a retry 90 s + 30 s.", ["unprepared_once_back"], CONCEPTS,
     ("node_agent",))
prop("D16", "Unprepared once: a claim prepared on a node (or whose preparation its kubelet "
     "began: it may not have heard the driver's answer) is unprepared there once, within T "
     "of the going of every pod it was prepared for (or of the return of the node's kubelet or "
     "the driver's plugin, if they were down), and never prepared again; nothing is prepared "
     "for a pod deleted while the node's kubelet was down (kubernetes/kubernetes#116411).",
     ["unprepared_once"], CONCEPTS, ("node_agent",))
prop("D17", "CDI hygiene: no CDI spec stays on a node for a claim the kubelet does not hold "
     "there, and no CDI device id is given to two claims: a driver's CDI state in step with the "
     "claims it prepared (out of step in kubernetes-sigs/dra-driver-nvidia-gpu#1144 and "
     "ROCm/k8s-gpu-dra-driver#75).", ["cdi_clean"], CONCEPTS, ("node_agent",))
prop("D21", "Nothing kept for a pod that cannot start: while a second driver fails every "
     "preparation of a pod whose claims both serve, nothing the first prepared for it stays "
     "prepared on the node for longer than T, as a CDI spec naming its claim "
     "(kubernetes/kubernetes#137819: the kubelet calls NodeUnprepareResources on no driver "
     "when another's NodePrepareResources fails, so the first driver's devices stay prepared "
     "while the pod is stuck in FailedPrepareDynamicResources).", ["kept_for_failed"],
     CONCEPTS, ("node_agent",))
prop("D11", "No unprepare in use: deleting one pod never unprepares a claim another pod on the "
     "node still uses (kubernetes PR #140212).", ["kept_while_used"], CONCEPTS)
