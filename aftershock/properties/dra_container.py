"""D13: what a container sees of a driver's devices, read from inside it (the listener writes
its environment and /dev to its log as it starts), against the claims its spec names and their
allocations as the API server recorded them. Secure accelerator access, the AI-conformance
program's one automated MUST: a container with a claim sees its devices, one without sees
none, in a pod without a claim or beside a container that has one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts.dra import (
    allocated_devices,
    container_claims,
    env_name,
    seen_identities,
)
from aftershock.history import Change, History
from aftershock.profile.schema import SEEN_IDENTITIES
from aftershock.properties.base import Params, check, prop
from aftershock.properties.dra import CONCEPTS

SEEN = "what each container saw (its own log)"
READS = frozenset({"pods", "resourceclaims"})


def _allocated(history: History, namespace: str, claim: str) -> Change | None:
    """The claim's last recorded state with an allocation."""
    for change in reversed(history.changes_of("resourceclaims", namespace)):
        if change.name == claim and ((change.object or {}).get("status") or {}).get(
                "allocation"):
            return change
    return None


def _said(found: set[tuple[str, str]]) -> str:
    return ", ".join(f"{kind.replace('_', ' ')} {value}" for kind, value in sorted(found))


def _expected(history: History, namespace: str, claims: list[str], driver: str,
              kinds: set[str]) -> tuple[set[tuple[str, str]], list[Change], str | None]:
    """What a container that uses ``claims`` must see, the claims' recorded states, and why
    that cannot be known (a claim whose allocation was not recorded)."""
    wanted: set[tuple[str, str]] = set()
    states = []
    for name in claims:
        change = _allocated(history, namespace, name)
        if change is None:
            return wanted, states, f"claim/{namespace}/{name}'s allocation was not recorded"
        states.append(change)
        devices = [d for d in allocated_devices(change.object or {}) if d[0] == driver]
        if "device" in kinds:
            wanted |= {("device", device) for _, _, device in devices}
        if devices and "claim_uid" in kinds:
            wanted.add(("claim_uid", change.uid))
        if devices and "claim" in kinds:
            wanted.add(("claim", env_name(name)))
    return wanted, states, None


def sees_own_devices(views: list[dict[str, Any]], history: History | Iterable, driver: str,
                     patterns: list[dict[str, str]], namespace: str,
                     name: str = "sees_own_devices") -> Verdict:
    """D13: each container read sees exactly what the claims it uses hold of ``driver``'s
    devices, as the profile's ``patterns`` show a device (a device's name, a claim's uid or
    name): none more (a device leaked to a container that did not ask), none fewer (the
    driver's environment missing)."""
    history = History.of(history)
    origin = history.origin
    kinds = {kind for pattern in patterns for kind in pattern if kind in SEEN_IDENTITIES}
    if not views:
        return Verdict(name, UNKNOWN, "no container's view was read", [], origin, subjects=0,
                       reads=READS, external=SEEN)
    counts = {True: 0, False: 0}
    unsure: Verdict | None = None
    for view in views:
        verdict = _one(view, history, driver, patterns, namespace, kinds, name, len(views))
        if verdict.status == VIOLATED:
            return verdict  # one container shown wrong is a violation, whatever the others
        if verdict.status == UNKNOWN:
            unsure = unsure or verdict
        else:
            counts[bool(verdict.subjects)] += 1
    if unsure is not None:
        return unsure
    each = "1 container saw" if len(views) == 1 else f"{len(views)} containers each saw"
    return Verdict(name, PASS, f"{each} exactly the devices of the claims they use "
                   f"({counts[True]} with devices of {driver}, {counts[False]} with none)", [],
                   origin, subjects=len(views), reads=READS, external=SEEN)


def _one(view: dict[str, Any], history: History, driver: str, patterns: list[dict[str, str]],
         namespace: str, kinds: set[str], name: str, count: int) -> Verdict:
    """One container's verdict: VIOLATED, UNKNOWN, or PASS (``subjects`` 1 when it had
    devices of the driver, 0 when none)."""
    origin = history.origin
    container = f"container {view['container']} of pod/{namespace}/{view['pod']}"
    if not view.get("complete"):
        why = view.get("error") or "its log has no 'aftershock-sees end' line"
        return Verdict(name, UNKNOWN, f"{container} did not say all it sees: {why}", [],
                       origin, subjects=count, reads=READS, external=SEEN)
    life = history.life(view["uid"])
    pod = life.latest if life is not None else None
    if life is None or pod is None:
        return Verdict(name, UNKNOWN, f"pod/{namespace}/{view['pod']} (uid {view['uid']}) was "
                       "not recorded", [], origin, subjects=count, reads=READS, external=SEEN)
    claims = container_claims(pod, view["container"])
    wanted, states, unsure = _expected(history, namespace, claims, driver, kinds)
    if unsure is not None:
        return Verdict(name, UNKNOWN, f"{container}: {unsure}", [], origin, subjects=count,
                       reads=READS, external=SEEN)
    seen = seen_identities(view["lines"], patterns)
    witness = [life.last.entry, *(state.entry for state in states)]
    found = tuple(f"{container} saw: {line}" for line in view["lines"]
                  if seen_identities([line], patterns))
    uses = (f"it uses claim {', '.join(f'claim/{namespace}/{c}' for c in claims)}"
            if claims else "it uses no claim")
    on = f" on node/{view['node']}" if view.get("node") else ""
    if seen - wanted:
        return Verdict(name, VIOLATED, f"{container}{on} sees {_said(seen - wanted)} of "
                       f"{driver}, which no claim it uses holds ({uses})", witness, origin,
                       subjects=count, reads=READS, external=SEEN, found=found)
    if wanted - seen:
        return Verdict(name, VIOLATED, f"{container}{on} does not see {_said(wanted - seen)}, "
                       f"which {uses.removeprefix('it uses ')} holds of {driver}: its "
                       "environment from the driver is not there", witness, origin,
                       subjects=count, reads=READS, external=SEEN, found=found)
    return Verdict(name, PASS, "", [], origin, subjects=int(bool(wanted)))


@check("sees_own_devices", "Each container read sees exactly the devices of the driver that "
       "the claims it uses hold: a container that uses none sees none.")
def _sees_own_devices(history: History, p: Params) -> Verdict:
    return sees_own_devices(p["views"], history, p["driver"], p["patterns"], p["namespace"])


prop("D13", "Secure accelerator access: a container sees exactly the devices of the claims it "
     "uses (as the driver shows a device in it: an environment variable, a device node), and a "
     "container that uses none, in a pod without a claim or beside a container with one, sees "
     "none (the AI-conformance program's secure_accelerator_access; gvisor#13621, "
     "NVIDIA/gpu-operator#1588).", ["sees_own_devices"], CONCEPTS, ("containers",))
