"""The gang scheduler concept: pod groups a scheduler must bind all or nothing, judged over the
history (B1-B5 of docs/properties.md).

A profile maps where a group's minimum lives (``resource`` and ``min_member_path``: KAI's
PodGroup ``spec.minMember``, a Workload's ``spec.podGroups[name=main].policy.gang.minCount``)
and which pods belong to a group (``pod_selector``, labels its pod manifest sets); where the
scheduler has queues, its ``queue`` mapping says where a queue's CPU limit lives and which
queue a group names."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from kubernetes.utils import parse_quantity

from aftershock.concepts import ConceptView, get_path
from aftershock.history.state import State, node_of, phase
from aftershock.profile.placeholders import fill

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
        return self.minimum_of(state.get(self.resource, self.namespace, self.name))

    def minimum_of(self, obj: dict[str, Any] | None) -> int | None:
        """The minimum the group's object says (None: no object, or no number there)."""
        value = get_path(obj, self.mapping["min_member_path"]) if obj else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def disrupted_whole(self, obj: dict[str, Any] | None) -> bool | None:
        """Whether the group's object asks to be disrupted whole (KEP-5710's disruptionMode
        All: ``{all: {}}``, or ``PodGroup`` as 1.36's alpha spelt it) or one pod at a time
        (Single: ``{single: {}}``, ``Pod``; the API server writes Single where none was set).
        None: no mode mapped, no object, or no mode there (another version, a wrong path)."""
        path = self.mapping.get("disruption_mode_path")
        mode = get_path(obj, path) if path and obj is not None else None
        if (isinstance(mode, dict) and "all" in mode) or mode == "PodGroup":
            return True
        if (isinstance(mode, dict) and "single" in mode) or mode == "Pod":
            return False
        return None

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


def cpu_of(pod: dict[str, Any]) -> Decimal:
    """The CPU a pod requests, in cores (its containers' requests summed)."""
    total = Decimal(0)
    for container in (pod.get("spec") or {}).get("containers") or []:
        value = ((container.get("resources") or {}).get("requests") or {}).get("cpu")
        if value is not None:
            total += parse_quantity(value)
    return total


@dataclass(frozen=True)
class Queue(ConceptView):
    """A queue of the gang scheduler, by name (cluster-wide or in the namespace, as its kind
    is), and the pod groups of the namespace that name it."""

    CONCEPT = "gang_scheduler"

    @property
    def part(self) -> dict[str, Any]:
        return self.mapping["queue"]

    @property
    def resource(self) -> str:
        return self.part["resource"]["plural"]

    @property
    def ref(self) -> str:
        return f"{self.part['resource']['kind'].lower()}/{self.name}"

    def limit(self, state: State) -> Decimal | None:
        """Its CPU limit in cores as its object says now (None: no object, or no quantity at
        the path; negative: no limit, as KAI writes -1)."""
        obj = state.get(self.resource, "", self.name) or \
            state.get(self.resource, self.namespace, self.name)
        value = get_path(obj, self.part["cpu_limit_path"]) if obj else None
        if value is None or isinstance(value, bool):
            return None
        try:
            number = parse_quantity(value)
        except (ValueError, InvalidOperation):
            return None
        return number * parse_quantity(self.part.get("cpu_unit", "1"))

    def groups(self, state: State) -> list[PodGroup]:
        """The pod groups of the namespace whose object names this queue."""
        resource = self.mapping["resource"]["plural"]
        return [PodGroup(obj["metadata"]["name"], self.namespace, self.mapping)
                for obj in state.select(resource, self.namespace)
                if get_path(obj, self.part["group_queue_path"]) == self.name]

    def bound(self, state: State) -> list[dict[str, Any]]:
        """The pods holding a place through this queue: bound, not finished, not going."""
        return [pod for group in self.groups(state) for pod in group.bound(state)]
