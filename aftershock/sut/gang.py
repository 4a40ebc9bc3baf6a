"""The gang concept: gang replicas ("groups") whose breach condition and termination are judged
over the history (G1-G9 of CONFORMANCE.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.sut.concepts import concept, get_path
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.state import State, is_live, replay, selects


@dataclass(frozen=True)
class Gang:
    name: str
    namespace: str
    mapping: dict[str, Any]

    @classmethod
    def of(cls, scenario, name: str) -> Gang:
        return cls(name, scenario.namespace, concept(scenario, "gang"))

    @property
    def resource(self) -> str:
        return self.mapping["resource"]["plural"]

    def selector(self, group: int | None = None) -> dict[str, str]:
        labels = {k: v.format(name=self.name) for k, v in self.mapping["pod_selector"].items()}
        if group is not None:
            labels[self.mapping["group_label"]] = str(group)
        return labels

    def live_pods(self, state: State, group: int | None = None) -> list[dict[str, Any]]:
        return state.live_pods(self.namespace, self.selector(group))

    def group_status(self, state: State, group: int) -> dict[str, Any] | None:
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

    def breached(self, state: State, group: int) -> bool:
        condition = self.breach(state, group)
        return bool(condition) and condition.get("status") == "True"

    def is_event(self, entry: Entry, reason_key: str) -> bool:
        obj = entry.object or {}
        involved = obj.get("involvedObject") or obj.get("regarding") or {}
        return (entry.kind == WATCH and entry.resource == "events" and entry.type == "ADDED"
                and entry.namespace == self.namespace and involved.get("name") == self.name
                and obj.get("reason") == self.mapping[reason_key])


def stamp(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _deletions(entries: list[Entry], gang: Gang, group: int) -> list[Entry]:
    """The first entry of each pod of the group that shows its deletion."""
    selector, seen, found = gang.selector(group), set(), []
    for entry in entries:
        if entry.kind != WATCH or entry.resource != "pods" or entry.namespace != gang.namespace \
                or entry.uid in seen or not selects(selector, entry.object or {}):
            continue
        if entry.type == "DELETED" or not is_live(entry.object or {}):
            seen.add(entry.uid)
            found.append(entry)
    return found


def termination_timed(entries: Iterable[Entry], gang: Gang, group: int, delay: float,
                      latency: float, name: str = "termination_timed") -> Verdict:
    """G2/G3: after the breach turned True (its lastTransitionTime), the group's original pods
    are all deleted no earlier than ``delay`` and no later than ``delay + latency``."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    breach_entry, since, before = None, None, set()
    for entry, state in replay(entries):
        condition = gang.breach(state, group)
        if condition and condition.get("status") == "True" and breach_entry is None:
            breach_entry, since = entry, stamp(condition.get("lastTransitionTime"))
            before = {p["metadata"]["uid"] for p in gang.live_pods(state, group)}
    if breach_entry is None or since is None:
        return Verdict(name, VIOLATED, f"group {group} of gang {gang.name} never got its "
                       "breach condition True", [], origin)
    gone = [e for e in _deletions(entries, gang, group) if e.uid in before]
    if not gone:
        return Verdict(name, VIOLATED, f"group {group} of gang {gang.name} was breached but "
                       "none of its pods was terminated", [breach_entry], origin)
    first_gone, last_gone = gone[0], gone[-1]
    early = first_gone.wall - since
    if early < delay:
        return Verdict(name, VIOLATED, f"group {group} was terminated {early:.2f}s after its "
                       f"breach, earlier than the {delay:g}s termination delay",
                       [breach_entry, first_gone], origin)
    if len(gone) < len(before) or last_gone.wall - since > delay + latency:
        return Verdict(name, VIOLATED, f"{len(gone)} of the {len(before)} pods of group {group} "
                       f"were replaced within {delay + latency:g}s of the breach",
                       [breach_entry, last_gone], origin)
    return Verdict(name, PASS, f"group {group} terminated {early:.2f}s after its breach "
                   f"(delay {delay:g}s, bound {delay + latency:g}s)",
                   [breach_entry, first_gone, last_gone], origin)


def terminations(entries: Iterable[Entry], gang: Gang) -> list[Entry]:
    return [e for e in entries if gang.is_event(e, "termination_reason")]


def at_most_terminations(entries: Iterable[Entry], gang: Gang, limit: int,
                         name: str = "at_most_terminations") -> Verdict:
    """G5/G6: the gang was terminated at most ``limit`` times."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    found = terminations(entries, gang)
    if len(found) > limit:
        return Verdict(name, VIOLATED, f"gang {gang.name} was terminated {len(found)} times, "
                       f"at most {limit} allowed", found[:limit + 1], origin)
    return Verdict(name, PASS, f"gang {gang.name} was terminated {len(found)} times", found,
                   origin)


def one_warning_per_drop_to_zero(entries: Iterable[Entry], gang: Gang, group: int,
                                 name: str = "one_warning_per_drop") -> Verdict:
    """G9: as many scheduled-zero warnings as times the group's scheduled pods dropped to 0."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    drops, was_zero, last = [], True, None
    for entry, state in replay(entries):
        scheduled = [p for p in gang.live_pods(state, group) if p["spec"].get("nodeName")]
        zero = not scheduled
        if zero and not was_zero:
            drops.append(entry)
        was_zero, last = zero, entry
    warnings = [e for e in entries if gang.is_event(e, "scheduled_zero_reason")]
    if last is None:
        return Verdict(name, UNKNOWN, "nothing was recorded", [], origin)
    if len(warnings) != len(drops):
        return Verdict(name, VIOLATED, f"group {group} dropped to zero scheduled pods "
                       f"{len(drops)} times and {len(warnings)} warnings were emitted",
                       sorted(drops + warnings, key=lambda e: e.seq)[:6], origin)
    return Verdict(name, PASS, f"{len(drops)} drops to zero, {len(warnings)} warnings",
                   drops + warnings, origin)
