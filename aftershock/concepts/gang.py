"""The gang concept: gang replicas ("groups") whose breach condition and termination are judged
over the history (G1-G9 of docs/properties.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aftershock.concepts import ConceptView, get_path
from aftershock.history import DELETED, Change, History
from aftershock.history.state import State
from aftershock.profile.placeholders import fill


@dataclass(frozen=True)
class Gang(ConceptView):
    CONCEPT = "gang"

    def selector(self, group: int | None = None) -> dict[str, str]:
        labels = {k: fill(v, {"name": self.name}) for k, v in self.mapping["pod_selector"].items()}
        if group is not None:
            labels[self.mapping["group_label"]] = str(group)
        return labels

    def live_pods(self, state: State, group: int | None = None) -> list[dict[str, Any]]:
        return state.live_pods(self.namespace, self.selector(group))

    @property
    def child(self) -> dict[str, Any] | None:
        """Where a profile keeps each replica's status on an object of its own (a Grove
        PodClique per PodCliqueSet replica): its resource, name ({name}, {group}) and path."""
        return self.mapping.get("group_status")

    @property
    def resources(self) -> frozenset[str]:
        """The kinds the gang's own state is read from."""
        child = self.child
        return frozenset({self.resource, *([child["resource"]["plural"]] if child else [])})

    def child_name(self, group: int) -> str:
        return fill(self.child["name"], {"name": self.name, "group": group})

    def incarnation(self, state: State, group: int) -> tuple[str, int, int] | None:
        """Where the replica keeps its status, as its object is now (the uid of a PodClique a
        recycle makes anew, or the gang's own), with the pods scheduled under it and its
        minimum: (uid, scheduled, minAvailable); None while any of it is not on record."""
        obj = state.get(self.resource, self.namespace, self.name)
        minimum = get_path(obj, self.mapping["min_available_path"]) if obj else None
        holder = obj if self.child is None else state.get(
            self.child["resource"]["plural"], self.namespace, self.child_name(group))
        uid = ((holder or {}).get("metadata") or {}).get("uid")
        if not isinstance(minimum, int) or not uid:
            return None
        pods = [p for p in self.live_pods(state, group) if (p.get("spec") or {}).get("nodeName")]
        if self.child is not None:  # only the pods that object owns: not a recycled one's
            pods = [p for p in pods if uid in {ref.get("uid") for ref in
                                               p["metadata"].get("ownerReferences") or []}]
        return uid, len(pods), minimum

    def group_status(self, state: State, group: int) -> dict[str, Any] | None:
        if self.child is not None:
            obj = state.get(self.child["resource"]["plural"], self.namespace,
                            self.child_name(group))
            return get_path(obj, self.child.get("path", "status")) if obj else None
        obj = state.get(self.resource, self.namespace, self.name)
        for item in (get_path(obj, self.mapping["group_status_path"]) or []) if obj else []:
            if item.get("index") == group:
                return item
        return None

    def breach(self, state: State, group: int) -> dict[str, Any] | None:
        """The group's breach condition as recorded now."""
        for condition in (self.group_status(state, group) or {}).get("conditions") or []:
            if condition.get("type") == self.mapping["breach_condition"]:
                return condition
        return None

    def reported_healthy(self, state: State, group: int) -> bool:
        """The implementation's status says it sees the replica healthy (``healthy_reasons``)."""
        condition = self.breach(state, group)
        return bool(condition) and condition.get("reason") in self.mapping.get(
            "healthy_reasons", ())

    def breached(self, state: State, group: int) -> bool:
        condition = self.breach(state, group)
        return bool(condition) and condition.get("status") == "True"

    def is_event(self, obj: dict[str, Any], reason_key: str) -> bool:
        """An Event of the gang (or of one replica's status object) with this reason."""
        involved = obj.get("involvedObject") or obj.get("regarding") or {}
        return ((obj.get("metadata") or {}).get("namespace", self.namespace) == self.namespace
                and self.involves(involved.get("name") or "")
                and obj.get("reason") == self.mapping[reason_key])

    def involves(self, name: str) -> bool:
        if name == self.name:
            return True
        if self.child is None:
            return False
        parts = re.split(r"(\{group\})", fill(self.child["name"], {"name": self.name}))
        pattern = "".join(r"\d+" if part == "{group}" else re.escape(part) for part in parts)
        return re.fullmatch(pattern, name) is not None

    def events(self, history: History, reason_key: str) -> list[Change]:
        """One change per occurrence of the gang's events with this reason. An event that
        happens again is folded into the same object (client-go's recorder raises ``count``,
        the events API ``series.count``): each rise is as many occurrences, at the change that
        recorded it (a re-list that closed a gap included)."""
        seen: dict[str, int] = {}
        found: list[Change] = []
        for change in history.changes_of("events"):
            obj = change.object
            if change.type == DELETED or not obj or not self.is_event(obj, reason_key):
                continue
            uid = (obj.get("metadata") or {}).get("uid") or change.uid
            now = occurrences(obj)
            found += [change] * max(0, now - seen.get(uid, 0))
            seen[uid] = max(now, seen.get(uid, 0))
        return found


def occurrences(event: dict[str, Any]) -> int:
    """How many times an Event object says its event happened."""
    series = (event.get("series") or {}).get("count") or 0
    return max(int(event.get("count") or 1), int(series), int(event.get("deprecatedCount") or 0))
