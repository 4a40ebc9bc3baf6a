"""What the implementation saw and did in one run, from the observing proxy's log: the watch
events it was sent and the writes the API server accepted from it, in order. Plans are anchored
on these, counted the way the proxy counts them."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from aftershock.faults.anchors import WRITE_METHODS
from aftershock.faults.watchdelay.streams import namespace_of, resource_of

EVENT_TYPES = ("ADDED", "MODIFIED", "DELETED")


@dataclass(frozen=True)
class Event:
    mono: float
    resource: str
    type: str
    name: str
    nth: int  # its ordinal among the events of its resource and type


@dataclass(frozen=True)
class Write:
    mono: float
    resource: str
    verb: str
    nth: int  # its ordinal among all accepted writes
    nth_kind: int  # its ordinal among the writes of its resource and verb


@dataclass
class Trace:
    events: list[Event] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)

    def counts(self) -> Counter[tuple[str, str]]:
        return Counter((e.resource, e.type) for e in self.events)

    def write_counts(self) -> Counter[tuple[str, str]]:
        return Counter((w.resource, w.verb) for w in self.writes)

    def event(self, resource: str, type: str, nth: int) -> Event | None:
        return next((e for e in self.events if (e.resource, e.type, e.nth) ==
                     (resource, type, nth)), None)

    def first_write_after(self, mono: float, within: float) -> Write | None:
        return next((w for w in self.writes if mono < w.mono <= mono + within), None)


def read(log: Path, namespace: str) -> Trace:
    """The events of ``namespace`` (and of cluster-scoped objects) and the accepted writes
    into ``namespace`` (a controller manager also writes leases, nodes and events elsewhere)."""
    trace = Trace()
    events: Counter[tuple[str, str]] = Counter()
    writes: Counter[tuple[str, str]] = Counter()
    if not log.exists():
        return trace
    for line in log.read_text().splitlines():
        record = json.loads(line)
        kind = record.get("event")
        if kind == "frame-received" and record.get("type") in EVENT_TYPES \
                and record.get("namespace") in (namespace, ""):
            key = (record["resource"], record["type"])
            events[key] += 1
            trace.events.append(Event(record["mono"], *key, record.get("name", ""),
                                      events[key]))
        elif kind == "request" and not record.get("watch") \
                and record.get("method") in WRITE_METHODS and 200 <= record["status"] < 300 \
                and namespace_of(record["path"]) == namespace:
            key = (resource_of(record["path"].split("?")[0]), WRITE_METHODS[record["method"]])
            writes[key] += 1
            trace.writes.append(Write(record["mono"], *key, len(trace.writes) + 1, writes[key]))
    return trace
