"""D18-D20: a DRA driver through an upgrade of its plugin (its DaemonSet rolling out a new
revision, with surge or by deleting and recreating its pods): its ResourceSlices are never
deleted (kubernetes#128964, a seamless kubelet plugin upgrade), every pod with a claim starts
through it, and no plugin socket (a registration, or the service it names) stays on a node with
nobody serving it (kubernetes#128696: a stale socket keeps a dead driver registered). Judged
from the API server's record and what each node's kubelet plugin sockets show (read on the
node), never from the driver's own words."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import claim_names
from aftershock.history import Change, History, Life, Span, mark
from aftershock.properties.base import Params, check, prop
from aftershock.properties.dra import CONCEPTS, NodeReads
from aftershock.properties.dra_node import _not_seen, why_not_running

Recorded = History | Iterable

SLICES = frozenset({"resourceslices", "nodes"})
PODS = frozenset({"pods"})
REGISTRY = "the kubelet's plugin sockets on each node"


def _spec(change: Change) -> dict[str, Any]:
    return (change.object or {}).get("spec") or {}


def _node_gone(history: History, node: str, moment: float) -> bool:
    """Whether node/<node> was certainly gone (deleted) by ``moment``: its slices go with it."""
    lives = history.lives_of("nodes", None, node) if node else []
    return bool(lives) and all(life.gone is not None and life.gone.hi <= moment
                               for life in lives)


def _after(history: History, change: Change, since: float) -> Change | None:
    """A change made certainly at or after ``since`` that comes before ``change`` in the
    cluster's order (resourceVersions are one sequence): ``change`` was made after it."""
    return next((c for c in history.changes if c.order < change.order and c.lo >= since
                 and c.hi < math.inf), None)


def slices_kept(history: Recorded, driver: str, since: float,
                name: str = "slices_kept") -> Verdict:
    """D18: no ResourceSlice of ``driver`` for a node that stays is deleted from ``since`` (when
    the driver's plugin began its upgrade, the recorder's clock) to the end of the history: an
    upgrade that makes a node's slices again (its kubelet wiped them when the old plugin
    unregistered, or the plugin deleted its own as it stopped) leaves the scheduler a moment with
    none of the node's devices, and a claim allocated from the old slices in between."""
    history = History.of(history)
    origin = history.origin
    at = f"+{since - origin:.1f}s"
    there: dict[str, Change] = {}
    for change in history.changes_of("resourceslices"):
        if _spec(change).get("driver") != driver or not _spec(change).get("nodeName"):
            continue
        if change.hi <= since:
            if change.deleted:
                there.pop(change.name, None)
            else:
                there[change.name] = change
            continue
        if not change.deleted or _node_gone(history, _spec(change)["nodeName"], change.lo):
            continue
        node = _spec(change)["nodeName"]
        again = next((c for c in history.changes_of("resourceslices") if c.order > change.order
                      and not c.deleted and _spec(c).get("driver") == driver
                      and _spec(c).get("nodeName") == node and c.previous is None), None)
        how = (f"; a slice for the node was made again after it ({again.ref}, by "
               f"+{again.hi - origin:.1f}s)" if again is not None else "")
        when = (f"at +{change.hi - origin:.1f}s" if change.hi - change.lo < 0.1 else
                f"between +{change.lo - origin:.1f}s and +{change.hi - origin:.1f}s")
        later = None
        if change.lo < since:  # its moment unsure (a deletion no request names: a collection's)
            later = _after(history, change, since)
            if later is None:
                return Verdict(name, UNKNOWN, f"{change.ref} of {driver} for node/{node} was "
                               f"deleted by +{change.hi - origin:.1f}s, perhaps before the "
                               f"upgrade began ({at})", [change.entry], origin, subjects=0,
                               reads=SLICES)
            when = (f"between +{later.lo - origin:.1f}s and +{change.hi - origin:.1f}s, after "
                    f"{later.ref} changed at +{later.lo - origin:.1f}s in the cluster's order")
        return Verdict(name, VIOLATED, f"{change.ref} of {driver} for node/{node} was deleted "
                       f"{when}, after the driver's plugin began its upgrade ({at}){how}",
                       [c.entry for c in (there.get(change.name), later, change, again) if c],
                       origin, subjects=len(there) or 1, reads=SLICES)
    if not there:
        return Verdict(name, UNKNOWN, f"the precondition never held: no ResourceSlice of "
                       f"{driver} for a node was recorded when the upgrade began ({at})", [],
                       origin, subjects=0, reads=SLICES)
    nodes = sorted({_spec(c)["nodeName"] for c in there.values()})
    return Verdict(name, PASS, f"the {len(there)} ResourceSlices of {driver} for "
                   f"{len(nodes)} nodes when the upgrade began ({at}) were never deleted "
                   "through it and after", [], origin, subjects=len(there), reads=SLICES)


def runs(obj: dict[str, Any] | None) -> bool:
    """Running, every container running, and Ready."""
    status = (obj or {}).get("status") or {}
    containers = status.get("containerStatuses") or []
    return status.get("phase") == "Running" and bool(containers) and all(
        (c.get("state") or {}).get("running") for c in containers) and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or [])


def _failed(obj: dict[str, Any] | None) -> bool:
    """Failed, and not going: a pod deleted may end Failed (its container stopped by a
    signal), which is no failure to start."""
    return ((obj or {}).get("status") or {}).get("phase") == "Failed" and \
        not ((obj or {}).get("metadata") or {}).get("deletionTimestamp")


def _placed(life: Life) -> Change | None:
    return next((c for c in life.changes if c.after is not None
                 and ((c.after.get("spec") or {}).get("nodeName"))), None)


def pods_started(history: Recorded, namespace: str, since: float, within: float,
                 now: float | None = None, name: str = "pods_started",
                 began: str = "the driver's plugin began its upgrade") -> Verdict:
    """D19: through and after an upgrade of the driver's plugin (from ``since``), every pod of
    ``namespace`` with a claim that was not yet running when it began runs within ``within``
    seconds of its placement (or of the upgrade's beginning, if placed before), and no pod with
    a claim fails. A pod deleted before it ran, in time, is not judged and is named. D22 asks
    the same from a second driver's return (``began`` says what happened at ``since``)."""
    history = History.of(history)
    origin = history.origin
    last = max(history.end, now or -math.inf)
    judged: list[tuple[Life, float]] = []  # each pod and how long it took at most
    skipped: list[str] = []
    claimants = [life for life in history.lives_of("pods", namespace)
                 if life.ever(lambda obj: bool(claim_names(obj)))]
    for life in claimants:
        failed = next((c for c in life.changes if c.hi > since and _failed(c.after)), None)
        if failed is not None:
            return Verdict(name, VIOLATED, f"{life.ref}, which uses a claim, failed at "
                           f"+{failed.hi - origin:.1f}s, after {began} "
                           f"(+{since - origin:.1f}s): {why_not_running(failed.after)}",
                           [failed.entry], origin, subjects=len(claimants), reads=PODS)
        placed = _placed(life)
        if placed is None or life.holds(Span.at(since), runs) is True:
            continue  # never placed, or running already: not one the upgrade could hold back
        start = max(since, placed.lo)
        bound = max(since, placed.hi) + within
        ran = next((c for c in life.changes if c.order >= placed.order and runs(c.after)),
                   None)
        went = next((c for c in life.changes if c.order >= placed.order and c.after is None),
                    None)
        if ran is not None and (went is None or ran.order < went.order):
            if ran.hi - start <= within:
                judged.append((life, ran.hi - start))
                continue
            if ran.lo <= bound:
                return Verdict(name, UNKNOWN, f"{life.ref} ran in a state written within a "
                               f"second of its {within:g}s bound: whether in time is not "
                               "known", [], origin, subjects=len(judged), reads=PODS)
        elif went is not None and went.lo <= bound:
            skipped.append(life.ref)
            continue
        elif last < bound:
            return Verdict(name, UNKNOWN, f"the history ends at +{last - origin:.1f}s, before "
                           f"the {within:g}s bound of {life.ref} (placed at "
                           f"+{placed.hi - origin:.1f}s): it had not run by then", [], origin,
                           subjects=len(judged), reads=PODS, window=(since, last))
        seen = [c for c in life.changes if c.lo <= bound]
        return Verdict(name, VIOLATED, f"{life.ref}, placed at +{placed.hi - origin:.1f}s "
                       f"({began} at +{since - origin:.1f}s), did "
                       f"not run within {within:g}s: {why_not_running(seen[-1].after)}",
                       [placed.entry, seen[-1].entry], origin, subjects=len(claimants),
                       window=(origin, bound), by_absence=True, reads=PODS)
    if not judged:
        return Verdict(name, UNKNOWN, "no pod with a claim not yet running when "
                       f"{began} (+{since - origin:.1f}s) ran" +
                       (f"; deleted first: {', '.join(skipped)}" if skipped else ""), [],
                       origin, subjects=0, reads=PODS)
    slowest = max(took for _, took in judged)
    named = f"; not judged, deleted first: {', '.join(skipped)}" if skipped else ""
    return Verdict(name, PASS, f"{len(judged)} pods with a claim not yet running when {began} "
                   f"(+{since - origin:.1f}s) ran, the slowest within {slowest:.1f}s of that or "
                   f"of its placement, if later, and none failed{named}", [], origin,
                   subjects=len(judged), reads=PODS)


def registry_listing(text: str) -> dict[str, str]:
    """A node's plugin sockets as its read loop lists them (`node_reads.REGISTRY_LISTING`): each
    socket's path (a registration, or the service it names) and whether it was served ("live")
    or not ("dead")."""
    found = {}
    for line in text.splitlines():
        state, _, path = line.partition(" ")
        if state in ("live", "dead") and path:
            found[path] = state
    return found


def _dead_stretches(copies: list[tuple[float, dict[str, str]]], known: list[float]
                    ) -> list[tuple[str, float, float, bool]]:
    """Each stretch a socket seen served was then refused without a break: (path, the first
    read that found it dead, the last moment known so, whether it was still so at the end)."""
    served: set[str] = set()
    dead: dict[str, tuple[float, float]] = {}
    found = []
    for at in sorted({t for t, _ in copies} | set(known)):
        files = next((f for t, f in reversed(copies) if t <= at), None)
        if files is None:
            continue
        served |= {path for path, state in files.items() if state == "live"}
        for path in list(dead):
            if files.get(path) != "dead":
                found.append((path, *dead.pop(path), False))
        for path, state in files.items():
            if state == "dead" and path in served:
                began, _ = dead.get(path, (at, at))
                dead[path] = (began, at)
    found += [(path, began, end, True) for path, (began, end) in dead.items()]
    return found


def _registries(lines: list[dict[str, Any]]
                ) -> tuple[dict[str, NodeReads], dict[str, list[tuple[float, dict[str, str]]]]]:
    reads: dict[str, NodeReads] = {}
    copies: dict[str, list[tuple[float, dict[str, str]]]] = {}
    for line in sorted(lines, key=lambda s: s["time"]):
        node = reads.setdefault(line["node"], NodeReads(line["node"], parse=registry_listing))
        files = node.read(line)
        if files is not None:
            copies.setdefault(line["node"], []).append((line["time"], files))
    return reads, copies


def registrations_live(registry: list[dict[str, Any]], history: Recorded, within: float,
                       name: str = "registrations_live") -> Verdict:
    """D20: no plugin socket of a node's kubelet (a registration, or the service one names)
    served during the scenario stays there unserved (a connection to it refused) for more than
    ``within`` seconds: the kubelet keeps a registration while its socket is there
    (kubernetes#128696), and calls a service that is gone. A socket refused from the first read
    was left by someone before the scenario, and is none of its. ``registry``: the lines of
    each node's loop over them."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads, copies = _registries(registry)
    served = {(node, path) for node, found in copies.items() for _, files in found
              for path, state in files.items() if state == "live"}
    for node, found in sorted(copies.items()):
        for path, began, end, _ in _dead_stretches(found, reads[node].known):
            if end - began > within:
                return Verdict(name, VIOLATED, f"the plugin socket {path} on node/{node} "
                               f"was refused for {end - began:.1f}s (more than the "
                               f"{within:g}s allowed) after it had been served: nobody served "
                               "it, and it stayed", [
                                   mark(offset, began, f"node/{node} {path}: refused"),
                                   mark(offset, end, f"node/{node} {path}: still refused")],
                               origin, subjects=len(served), reads=frozenset(),
                               external=REGISTRY)
    blind = _not_seen(reads, history, name, len(served))
    if blind is not None:
        return Verdict(name, UNKNOWN, blind.summary.replace("the kubelet's DRA checkpoint on "
                                                            "each node", REGISTRY), [], origin,
                       subjects=len(served), reads=frozenset(), external=REGISTRY)
    if not served:
        return Verdict(name, UNKNOWN, "no plugin socket was seen served on a node", [],
                       origin, subjects=0, reads=frozenset(), external=REGISTRY)
    return Verdict(name, PASS, f"{len(served)} plugin sockets served on "
                   f"{len({node for node, _ in served})} nodes, none refused for more than "
                   f"{within:g}s once served", [], origin, subjects=len(served),
                   reads=frozenset({"nodes"}), external=REGISTRY)


def registry_pending(registry: list[dict[str, Any]]) -> bool:
    """Whether a socket once served is refused at its node's last read (D20's step waits its
    bound out then)."""
    reads, copies = _registries(registry)
    return any(still for node, found in copies.items()
               for *_, still in _dead_stretches(found, reads[node].known))


@check("slices_kept", "No ResourceSlice of a driver for a node that stays is deleted from "
       "when its plugin began an upgrade to the end of the history.")
def _slices_kept(history: History, p: Params) -> Verdict:
    return slices_kept(history, p["driver"], p["since"])


@check("pods_started", "Every pod with a claim not yet running at a moment (the driver's "
       "plugin began an upgrade, a second driver prepares again) runs within a bound of that "
       "moment or of its placement, if later, and no pod with a claim fails.")
def _pods_started(history: History, p: Params) -> Verdict:
    return pods_started(history, p["namespace"], p["since"], p["within"], p.get("now"),
                        began=p.get("began", "the driver's plugin began its upgrade"))


@check("registrations_live", "No plugin socket (a registration, or the service it names) once "
       "served on a node stays there refused for longer than a bound (read on the node "
       "through the scenario).")
def _registrations_live(history: History, p: Params) -> Verdict:
    return registrations_live(p["registry"], history, p["within"])


prop("D18", "Slices kept through an upgrade: once a driver's plugin begins an upgrade (its "
     "DaemonSet rolling out a new revision, with surge or by recreating its pods), none of its "
     "ResourceSlices for a node that stays is deleted, so none is made again "
     "(kubernetes/kubernetes#128964, a seamless kubelet plugin upgrade).", ["slices_kept"],
     CONCEPTS, ("node_agent",))
prop("D19", "Pods start through an upgrade: every pod with a claim placed while a driver's "
     "plugin is upgraded, or after, runs within T, and no pod with a claim fails "
     "(kubernetes/kubernetes#128964).", ["pods_started"], CONCEPTS, ("node_agent",))
prop("D22", "A pod starts once both its drivers prepare: every pod whose claims two drivers "
     "serve, held back while the second failed every preparation, runs within T of that "
     "driver's return (the kubelet prepares its claims again, the first driver's included, "
     "and a preparation repeated must succeed: kubernetes/kubernetes#137819).",
     ["pods_started"], CONCEPTS, ("node_agent",))
prop("D20", "No dead registration: no plugin socket once served on a node (a registration, or "
     "the service one names) stays there, refused, for longer than T: the kubelet keeps a "
     "registration while its socket is there, and calls a service that is gone "
     "(kubernetes/kubernetes#128696, stale plugin sockets keep a dead driver registered).",
     ["registrations_live"], CONCEPTS, ("node_agent",))
