"""The gang scheduler concept: pod groups a scheduler must bind all or nothing, judged over the
history (B1-B4 of docs/properties.md).

A profile maps where a group's minimum lives (``resource`` and ``min_member_path``: KAI's
PodGroup ``spec.minMember``, a Workload's ``spec.podGroups[name=main].policy.gang.minCount``)
and which pods belong to a group (``pod_selector``, labels its pod manifest sets)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aftershock.sut.concepts import ConceptView, get_path
from aftershock.sut.placeholders import fill
from aftershock.timeline.state import State, node_of, phase

TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True)
class PodGroup(ConceptView):
    CONCEPT = "gang_scheduler"

    def selector(self) -> dict[str, str]:
        return {k: fill(v, {"name": self.name}) for k, v in self.mapping["pod_selector"].items()}

    @property
    def ref(self) -> str:
        return f"{self.mapping['resource']['kind'].lower()}/{self.namespace}/{self.name}"

    @property
    def scheduler_name(self) -> str:
        return self.mapping["scheduler_name"]

    def min_member(self, state: State) -> int | None:
        """The group's minimum as its object says now (None: no object, or no number there)."""
        obj = state.get(self.resource, self.namespace, self.name)
        value = get_path(obj, self.mapping["min_member_path"]) if obj else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def pods(self, state: State) -> list[dict[str, Any]]:
        """Every recorded pod of the group, being deleted or not."""
        return state.select("pods", self.namespace, self.selector())

    def bound(self, state: State) -> list[dict[str, Any]]:
        """Pods that hold a place: bound, not being deleted, and not finished."""
        return [p for p in self.pods(state) if node_of(p) and not deleting(p)
                and phase(p) not in TERMINAL]

    def kept(self, state: State) -> list[dict[str, Any]]:
        """Pods that count towards the group's minimum: bound ones and ones that succeeded."""
        return self.bound(state) + [p for p in self.pods(state) if phase(p) == "Succeeded"]


def deleting(pod: dict[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def newly_bound(before: dict[str, Any] | None, after: dict[str, Any] | None) -> bool:
    """Whether a pod change is its binding: no node before, a node now."""
    return bool(after) and bool(node_of(after)) and not (before and node_of(before))
