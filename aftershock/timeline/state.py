"""The cluster as the recorded history says it was at one point: replayed entry by entry."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from aftershock.timeline.entry import GAP_END, GAP_START, WATCH, Entry

Selector = dict[str, str]


def parse_selector(text: str) -> Selector:
    """'a=b,c=d' → {'a': 'b', 'c': 'd'} (equality selectors only)."""
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    return {key.strip(): value.strip() for key, value in pairs}


def selects(selector: Selector | None, obj: dict[str, Any]) -> bool:
    if not selector:
        return True
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in selector.items())


def is_live(obj: dict[str, Any]) -> bool:
    """Exists and is not being deleted (CONFORMANCE.md: a *live* pod)."""
    return not (obj.get("metadata") or {}).get("deletionTimestamp")


def is_ready(pod: dict[str, Any]) -> bool:
    """Live and with the Ready condition True."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return is_live(pod) and any(c.get("type") == "Ready" and c.get("status") == "True"
                                for c in conditions)


def phase(obj: dict[str, Any]) -> str:
    return (obj.get("status") or {}).get("phase", "")


def node_of(obj: dict[str, Any]) -> str:
    return (obj.get("spec") or {}).get("nodeName") or ""


class State:
    """Objects by (resource, namespace, name), updated one entry at a time."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.gaps: set[str] = set()  # resources whose history is unknown right now
        self.last: Entry | None = None

    def apply(self, entry: Entry) -> None:
        self.last = entry
        if entry.kind == WATCH and entry.object is not None:
            if entry.type == "DELETED":
                self.objects.pop(entry.key, None)
            else:
                self.objects[entry.key] = entry.object
        elif entry.kind == GAP_START:
            self.gaps.add(entry.resource)
        elif entry.kind == GAP_END:
            self.gaps.discard(entry.resource)

    def select(self, resource: str, namespace: str | None = None,
               selector: Selector | None = None) -> list[dict[str, Any]]:
        return [obj for (res, ns, _), obj in self.objects.items()
                if res == resource and (namespace is None or ns == namespace)
                and selects(selector, obj)]

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.get((resource, namespace, name))

    def live_pods(self, namespace: str | None, selector: Selector | None) -> list[dict[str, Any]]:
        return [pod for pod in self.select("pods", namespace, selector) if is_live(pod)]


def replay(entries: Iterable[Entry]) -> Iterator[tuple[Entry, State]]:
    """Each entry with the state just after it (the same State object, updated in place)."""
    state = State()
    for entry in entries:
        state.apply(entry)
        yield entry, state
