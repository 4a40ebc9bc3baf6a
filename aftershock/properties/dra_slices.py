"""D12: what a DRA driver publishes of a node's devices (its ResourceSlices), judged from the API
server's record: only the devices the node has (as many as its profile says a node holds, none
listed twice in a pool), and published again once the node's kubelet, or the driver's plugin,
is back after a fault (a kubelet deletes a node's slices when it starts, and a plugin's when it
unregisters: dra-driver-nvidia-gpu#330, a ComputeDomain slice a kubelet restart deleted for
good; kubernetes PR #132683, a slice deleted right after its creation never made again)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import current_pools
from aftershock.history import Change, History
from aftershock.properties.base import Params, check, prop
from aftershock.properties.dra import CONCEPTS

Recorded = History | Iterable

READS = frozenset({"resourceslices"})
Slices = dict[str, dict[str, Any]]


def _names(obj: dict[str, Any]) -> list[str]:
    return [d.get("name", "") for d in (obj.get("spec") or {}).get("devices") or []]


def _of(slices: Slices, driver: str, node: str) -> list[dict[str, Any]]:
    """The driver's slices for ``node`` in their pool's newest generation (what a scheduler
    reads: it ignores an older generation while a newer one is being published)."""
    mine = [obj for obj in slices.values() if (obj.get("spec") or {}).get("driver") == driver
            and (obj.get("spec") or {}).get("nodeName") == node]
    return [obj for current in current_pools(mine).values() for obj in current]


def published(slices: Slices, driver: str, node: str) -> set[str]:
    """The device names the driver's slices for ``node`` list."""
    return {name for obj in _of(slices, driver, node) for name in _names(obj)}


def _listed_twice(slices: Slices, driver: str, node: str) -> str | None:
    seen: dict[tuple[str, str], int] = {}
    for obj in _of(slices, driver, node):
        pool = (obj["spec"].get("pool") or {}).get("name", "")
        for name in _names(obj):
            seen[(pool, name)] = seen.get((pool, name), 0) + 1
    twice = sorted(key for key, count in seen.items() if count > 1)
    return f"device {twice[0][1]} of pool {twice[0][0]} listed {seen[twice[0]]} times" \
        if twice else None


def _shown(names: Iterable[str]) -> str:
    names = sorted(names)
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def _changes(history: History,
             driver: str) -> Iterator[tuple[Change, Slices, set[str]]]:
    """Each recorded change of the ResourceSlices, in the cluster's order: the change, every
    slice then, and the nodes whose slices of ``driver`` it changed."""
    slices: Slices = {}
    for change in history.changes_of("resourceslices"):
        key = f"{change.namespace}/{change.name}" if change.namespace else change.name
        old = slices.pop(key, None)
        if change.after is not None:
            slices[key] = change.after
        nodes = set()
        for seen in (old, change.after):
            spec = (seen or {}).get("spec") or {}
            if spec.get("driver") == driver and spec.get("nodeName"):
                nodes.add(spec["nodeName"])
        yield change, slices, nodes


def only_present_devices(history: Recorded, driver: str, per_node: int,
                         name: str = "only_present_devices") -> Verdict:
    """D12: at every recorded state, the driver's ResourceSlices for a node list at most
    ``per_node`` devices (what the profile says a node holds), none twice in one pool."""
    history = History.of(history)
    origin = history.origin
    nodes: set[str] = set()
    states = 0
    for change, slices, changed in _changes(history, driver):
        for node in sorted(changed):
            states += 1
            nodes.add(node)
            listed = published(slices, driver, node)
            twice = _listed_twice(slices, driver, node)
            if len(listed) > per_node or twice:
                what = twice or (f"{len(listed)} devices ({_shown(listed)}), and a node has "
                                 f"{per_node} (the profile's devices_per_node)")
                return Verdict(name, VIOLATED, f"the ResourceSlices of {driver} for "
                               f"node/{node} listed {what}", [change.entry], origin,
                               subjects=len(nodes), reads=READS)
    if not nodes:
        return Verdict(name, UNKNOWN, f"no ResourceSlice of {driver} for a node was recorded",
                       [], origin, subjects=0, reads=READS)
    return Verdict(name, PASS, f"{states} states of the ResourceSlices of {driver} for "
                   f"{len(nodes)} nodes, each listing at most {per_node} devices, none twice",
                   [], origin, subjects=len(nodes), reads=READS)


def _listed_by(history: History, driver: str, node: str,
               moment: float) -> tuple[list[set[str]], Change | None]:
    """Every set of devices the driver's slices for ``node`` may have listed at ``moment``
    (one, unless a change written in its second may or may not have been made), and the last
    change of them certainly made by then."""
    possible: list[set[str]] = []
    last: Change | None = None
    current: set[str] = set()
    for change, slices, nodes in _changes(history, driver):
        if change.lo > moment:
            break
        if node not in nodes:
            continue
        listed = published(slices, driver, node)
        if change.hi <= moment:
            current, last = listed, change
            possible = []
        else:
            possible.append(listed)
    return [current, *possible], last


def published_again(history: Recorded, driver: str, node: str, since: float,
                    back: float, within: float, now: float | None = None,
                    name: str = "published_again") -> Verdict:
    """D12: the devices the driver's slices listed for node/<node> when a fault began there (at
    ``since``) are all listed again ``within`` seconds after what the fault stopped (the node,
    its kubelet or the driver's plugin) was back (at ``back``), both on the recorder's clock.
    ``now`` is when it was judged: the history is known up to then. What was listed then rests
    on the history from its start, so that is the window judged."""
    history = History.of(history)
    origin = history.origin
    bound = back + within
    at = f"+{since - origin:.1f}s"
    then, _ = _listed_by(history, driver, node, since)
    if len({frozenset(listed) for listed in then}) > 1:
        return Verdict(name, UNKNOWN, f"the ResourceSlices of {driver} for node/{node} changed "
                       f"within a second of when the fault began ({at}): what they listed then "
                       "is not known", [], origin, subjects=0, reads=READS)
    before = then[0]
    if not before:
        return Verdict(name, UNKNOWN, f"the precondition never held: no ResourceSlice of "
                       f"{driver} for node/{node} was recorded when the fault began ({at})",
                       [], origin, subjects=0, reads=READS)
    last = max(history.end, now or -math.inf)
    if last < bound:
        return Verdict(name, UNKNOWN, f"the history ends at +{last - origin:.1f}s, before the "
                       f"bound of {within:g}s after the return (+{back - origin:.1f}s)", [],
                       origin, subjects=1, reads=READS, window=(origin, last))
    later, changed = _listed_by(history, driver, node, bound)
    missing = [before - listed for listed in later]
    witness = [changed.entry] if changed is not None else []
    if all(missing):
        gone = missing[0]
        return Verdict(name, VIOLATED, f"{within:g}s after the return to node/{node} "
                       f"(+{back - origin:.1f}s), the ResourceSlices of {driver} no longer "
                       f"listed {len(gone)} of the {len(before)} devices they listed when "
                       f"the fault began ({at}): {_shown(gone)}", witness, origin,
                       subjects=1, window=(origin, bound), by_absence=True, reads=READS)
    if any(missing):
        return Verdict(name, UNKNOWN, f"the ResourceSlices of {driver} for node/{node} changed "
                       f"within a second of the {within:g}s bound after the return "
                       f"(+{back - origin:.1f}s): whether they listed its devices again by then "
                       "is not known", witness, origin, subjects=1, reads=READS)
    withdrawn = next((c for c, slices, nodes in _changes(history, driver)
                      if node in nodes and c.lo > since and c.hi <= bound
                      and before - published(slices, driver, node)), None)
    how = (f"withdrawn at +{withdrawn.hi - origin:.1f}s and listed again by "
           f"+{changed.hi - origin:.1f}s" if withdrawn is not None and changed is not None
           else "never withdrawn")
    return Verdict(name, PASS, f"the {len(before)} devices of node/{node} in the ResourceSlices "
                   f"of {driver} when the fault began ({at}) were listed {within:g}s after the "
                   f"return: {how}", witness, origin, subjects=1, window=(origin, bound),
                   reads=READS)


@check("only_present_devices", "A driver's ResourceSlices for a node never list more devices "
       "than the profile says a node has, nor one device twice in a pool.")
def _only_present_devices(history: History, p: Params) -> Verdict:
    return only_present_devices(history, p["driver"], p["per_node"])


@check("published_again", "The devices a driver's ResourceSlices listed for a node when a fault "
       "there began are listed again within a bound of the node's (or the plugin's) return.")
def _published_again(history: History, p: Params) -> Verdict:
    return published_again(history, p["driver"], p["node"], p["since"], p["back"],
                           p["within"], p.get("now"))


prop("D12", "Slices of devices that exist: a driver's ResourceSlices list only the devices a "
     "node has, and once a node's kubelet or the driver's plugin is back after a fault (a "
     "kubelet deletes the node's slices when it starts, and a plugin's when it unregisters), "
     "they list its devices again within T (dra-driver-nvidia-gpu#330: a kubelet restart "
     "deleted a slice for good; kubernetes PR #132683: a slice deleted soon after its creation "
     "was never made again).", ["only_present_devices", "published_again"], CONCEPTS)
