"""Faults anchored on what one client sees and does, rather than on wall time.

The WatchDelay proxy counts the watch events it passes to its client and the writes the client
sends through it; a fault here fires at the n-th of them, so a plan found by `aftershock explore`
replays at the same point of the history however fast or slow the run is:
- ``Stall``: from the n-th matching event, the client's watch of that resource is held for
  some seconds, then released in order (a stale view, as a lagging API server gives);
- ``Miss``: from the n-th matching event the client's watch of that resource is silent for some
  seconds, then answered 410 Gone, so the client re-lists and never sees the states between (an
  unobserved state, as a relist coalesces them);
- ``KillAfterWrite``: right after the n-th matching write was answered, the client is killed and
  restarted (an intermediate state: a reconcile cut in the middle).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

WRITE_METHODS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
ORDINAL_SUFFIX = {1: "st", 2: "nd", 3: "rd"}


def ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else ORDINAL_SUFFIX.get(number % 10, "th")
    return f"{number}{suffix}"


@dataclass(frozen=True)
class EventAnchor:
    """The n-th watch event of ``type`` on ``resource`` (in ``namespace`` or cluster-scoped
    objects when None) the client was sent, counted from the proxy's start."""

    resource: str
    type: str  # ADDED | MODIFIED | DELETED
    nth: int
    namespace: str | None = None

    def matches(self, resource: str, namespace: str, kind: str) -> bool:
        return (resource == self.resource and kind == self.type
                and (self.namespace is None or namespace in (self.namespace, "")))


@dataclass(frozen=True)
class Stall:
    anchor: EventAnchor
    seconds: float


@dataclass(frozen=True)
class Miss:
    anchor: EventAnchor
    seconds: float


@dataclass(frozen=True)
class KillAfterWrite:
    """The n-th write of ``verb`` (create, update, patch, delete; None: any) on ``resource``
    (None: any) the client sent and the API server answered."""

    nth: int
    verb: str | None = None
    resource: str | None = None
    namespace: str | None = None  # the writes into this namespace only

    def matches(self, verb: str, resource: str, namespace: str) -> bool:
        return ((self.verb is None or verb == self.verb)
                and (self.resource is None or resource == self.resource)
                and (self.namespace is None or namespace == self.namespace))


Anchored = Stall | Miss | KillAfterWrite


class Triggers:
    """The anchored faults of one proxy: counts what passes and says what to do with it.
    Each fires once; every firing is logged by the proxy and told to ``on_fire`` with the
    seconds the perturbation lasts (0 for a kill)."""

    def __init__(self, faults: list[Anchored], log: Callable[..., None],
                 expire: Callable[[str], None], kill: Callable[[], None] | None = None,
                 on_fire: Callable[[str, float], None] | None = None):
        self.faults = list(faults)
        self._log, self._expire, self._kill = log, expire, kill
        self._on_fire = on_fire
        self._lock = threading.Lock()
        self._events: dict[int, int] = {}  # fault index → matching events seen
        self._writes: dict[int, int] = {}
        self.holding: dict[str, float] = {}  # resource → held until (monotonic)
        self.missing: dict[str, float] = {}  # resource → silent until
        self.fired: list[str] = []

    def frame(self, resource: str, namespace: str, kind: str, now: float) -> tuple[bool, float]:
        """(drop it, release it no earlier than) for one frame arriving now."""
        with self._lock:
            for index, fault in enumerate(self.faults):
                if isinstance(fault, KillAfterWrite) or \
                        not fault.anchor.matches(resource, namespace, kind):
                    continue
                seen = self._events[index] = self._events.get(index, 0) + 1
                if seen == fault.anchor.nth:
                    self._fire(fault, now)
            if self.missing.get(resource, 0.0) > now:
                return True, 0.0
            return False, self.holding.get(resource, 0.0)

    def _fire(self, fault: Stall | Miss, now: float) -> None:
        resource = fault.anchor.resource
        until = now + fault.seconds
        what = f"{ordinal(fault.anchor.nth)} {fault.anchor.type} {resource} event"
        if isinstance(fault, Stall):
            self.holding[resource] = max(self.holding.get(resource, 0.0), until)
            self.fired.append(f"stall at the {what} for {fault.seconds:g}s")
        else:
            self.missing[resource] = max(self.missing.get(resource, 0.0), until)
            self.fired.append(f"miss from the {what} for {fault.seconds:g}s, then relist")
            timer = threading.Timer(fault.seconds, self._expire, args=(resource,))
            timer.daemon = True
            timer.start()
        self._log("anchor-fired", fault=self.fired[-1], resource=resource,
                  until=round(until, 4), lasts=fault.seconds)
        if self._on_fire is not None:
            self._on_fire(self.fired[-1], fault.seconds)

    def write(self, method: str, resource: str, namespace: str, status: int) -> None:
        """A request the client sent was answered: a write the API server accepted counts."""
        verb = WRITE_METHODS.get(method)
        if verb is None or not 200 <= status < 300:
            return
        fire = None
        with self._lock:
            for index, fault in enumerate(self.faults):
                if not isinstance(fault, KillAfterWrite) or \
                        not fault.matches(verb, resource, namespace):
                    continue
                seen = self._writes[index] = self._writes.get(index, 0) + 1
                if seen == fault.nth:
                    fire = fault
        if fire is not None and self._kill is not None:
            what = " ".join(w for w in (fire.resource, fire.verb) if w) or "write"
            self.fired.append(f"kill after the {ordinal(fire.nth)} {what}")
            self._log("anchor-fired", fault=self.fired[-1], at=round(time.monotonic(), 4),
                      lasts=0, kill=True)
            if self._on_fire is not None:
                self._on_fire(self.fired[-1], 0.0)
            self._kill()


def to_plain(fault: Anchored) -> dict:
    """A fault as JSON-able data (the sidecar's --anchors)."""
    if isinstance(fault, KillAfterWrite):
        return {"kill": {"nth": fault.nth, "verb": fault.verb, "resource": fault.resource,
                         "namespace": fault.namespace}}
    anchor = fault.anchor
    return {"stall" if isinstance(fault, Stall) else "miss": {
        "resource": anchor.resource, "type": anchor.type, "nth": anchor.nth,
        "namespace": anchor.namespace, "seconds": fault.seconds}}


def from_plain(raw: dict) -> Anchored:
    (kind, fields), = raw.items()
    if kind == "kill":
        return KillAfterWrite(int(fields["nth"]), fields.get("verb"), fields.get("resource"),
                              fields.get("namespace"))
    if kind not in ("stall", "miss"):
        raise ValueError(f"unknown anchored fault '{kind}': stall, miss or kill")
    anchor = EventAnchor(fields["resource"], fields["type"], int(fields["nth"]),
                         fields.get("namespace"))
    return (Stall if kind == "stall" else Miss)(anchor, float(fields["seconds"]))
