"""The words of conditions and events inside steps ("3 pods of web are Running",
"deployment/web got condition Available True"), each turned into a predicate over the recorded
state. Like steps, phrases are checked at collection: a typo names the closest known phrase."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import parse

from aftershock import workloads
from aftershock.checks.temporal import Event, Transition
from aftershock.scenario import EXTRA_TYPES
from aftershock.timeline.entry import SINGULAR, WATCH, Entry
from aftershock.timeline.state import State, is_live, node_of, phase

PLURAL = {singular: plural for plural, singular in SINGULAR.items()}
CLUSTER_SCOPED = {"nodes", "persistentvolumes", "deviceclasses", "resourceslices", "namespaces"}


@dataclass(frozen=True)
class Condition:
    description: str
    holds: Callable[[State], bool]
    resources: frozenset[str]


@dataclass(frozen=True)
class Phrase:
    pattern: str
    build: Callable[..., Any]

    @property
    def example(self) -> str:
        return re.sub(r"{(\w+)(?::[^}]*)?}", r"<\1>", self.pattern)


CONDITIONS: list[Phrase] = []
EVENTS: list[Phrase] = []


def condition(pattern: str):
    def register(build):
        CONDITIONS.append(Phrase(pattern, build))
        return build
    return register


def event(pattern: str):
    def register(build):
        EVENTS.append(Phrase(pattern, build))
        return build
    return register


def _match(phrases: list[Phrase], text: str) -> tuple[Phrase, dict[str, Any]] | None:
    for phrase in phrases:
        found = parse.parse(phrase.pattern, text.strip(), extra_types=EXTRA_TYPES)
        if found is not None:
            return phrase, dict(found.named)
    return None


def problem(phrases: list[Phrase], text: str, what: str) -> str | None:
    """None if ``text`` is a known phrase, else what is wrong and the closest known ones."""
    if _match(phrases, text):
        return None
    close = difflib.get_close_matches(text, [p.example for p in phrases], n=3, cutoff=0.3)
    hint = ("; closest known: " + " | ".join(f"'{c}'" for c in close)) if close else ""
    return f"unknown {what} '{text}'{hint}"


class PhraseError(ValueError):
    pass


def build_condition(text: str, scenario) -> Condition:
    found = _match(CONDITIONS, text)
    if found is None:
        raise PhraseError(problem(CONDITIONS, text, "condition"))
    phrase, arguments = found
    return phrase.build(scenario, **arguments)


def build_event(text: str, scenario) -> Event:
    found = _match(EVENTS, text)
    if found is None:
        raise PhraseError(problem(EVENTS, text, "event"))
    phrase, arguments = found
    return phrase.build(scenario, **arguments)


def resource_of(kind: str) -> str:
    plural = PLURAL.get(kind.lower(), kind.lower())
    return plural


def _namespace(scenario, resource: str) -> str:
    return "" if resource in CLUSTER_SCOPED else scenario.namespace


def _object(state: State, scenario, kind: str, name: str) -> dict | None:
    resource = resource_of(kind)
    return state.get(resource, _namespace(scenario, resource), name)


def _running_pods(state: State, scenario, name: str) -> list[dict]:
    pods = state.live_pods(scenario.namespace, workloads.selector_labels(name))
    return [pod for pod in pods if phase(pod) == "Running"]


# --- conditions ---------------------------------------------------------------------------


@condition("{count:d} pods of {name} are Running")
def pods_running(scenario, count: int, name: str) -> Condition:
    return Condition(f"{count} pods of {name} are Running",
                     lambda s: len(_running_pods(s, scenario, name)) == count,
                     frozenset({"pods"}))


@condition("{count:d} pods of {name} are Running on {spread:d} different nodes")
def pods_running_spread(scenario, count: int, name: str, spread: int) -> Condition:
    def holds(state: State) -> bool:
        running = _running_pods(state, scenario, name)
        return len(running) == count and len({node_of(p) for p in running}) == spread
    return Condition(f"{count} pods of {name} are Running on {spread} different nodes", holds,
                     frozenset({"pods"}))


@condition("{count:d} pods of {name} are Running, none on the drained node")
def pods_running_elsewhere(scenario, count: int, name: str) -> Condition:
    drained = scenario.recall("drained node")

    def holds(state: State) -> bool:
        running = _running_pods(state, scenario, name)
        return len(running) == count and all(node_of(p) != drained for p in running)
    return Condition(f"{count} pods of {name} are Running, none on node/{drained}", holds,
                     frozenset({"pods"}))


@condition("at most {count:d} pods of {name} are live")
def at_most_live(scenario, count: int, name: str) -> Condition:
    return Condition(f"at most {count} pods of {name} are live",
                     lambda s: len(s.live_pods(scenario.namespace,
                                               workloads.selector_labels(name))) <= count,
                     frozenset({"pods"}))


@condition("{count:d} pods of {name} are Running, none on node/{node:Name}")
def pods_running_not_on(scenario, count: int, name: str, node: str) -> Condition:
    def holds(state: State) -> bool:
        running = _running_pods(state, scenario, name)
        return len(running) == count and all(node_of(p) != node for p in running)
    return Condition(f"{count} pods of {name} are Running, none on node/{node}", holds,
                     frozenset({"pods"}))


@condition("pod {pod:Name} is Running elsewhere")
def pod_running_elsewhere(scenario, pod: str) -> Condition:
    before = scenario.recall(f"node of pod {pod}")

    def holds(state: State) -> bool:
        obj = state.get("pods", scenario.namespace, pod)
        return bool(obj) and is_live(obj) and phase(obj) == "Running" and \
            node_of(obj) not in ("", before)
    return Condition(f"pod/{scenario.namespace}/{pod} is Running on another node than "
                     f"node/{before}", holds, frozenset({"pods"}))


@condition("nothing bound to the deleted node is left")
def deleted_node_cleared(scenario) -> Condition:
    node = scenario.recall("deleted node")
    bound = scenario.recall("bound to the deleted node")
    if not any(resource == "leases" for resource, _, _ in bound):
        raise PhraseError(f"node/{node} had no recorded lease when it was deleted: nothing "
                          "to show its clean-up")

    def holds(state: State) -> bool:
        return not any(key in state.objects for key in bound) and \
            not any(node_of(p) == node for p in state.select("pods"))
    kinds = sorted({resource for resource, _, _ in bound})
    return Condition(f"none of the {len(bound)} {', '.join(kinds)} bound to node/{node} is left",
                     holds, frozenset({"pods", "resourceslices", "leases"}))


@condition("{count:d} pods of {name} are live")
def pods_live(scenario, count: int, name: str) -> Condition:
    return Condition(f"{count} pods of {name} are live",
                     lambda s: len(s.live_pods(scenario.namespace,
                                               workloads.selector_labels(name))) == count,
                     frozenset({"pods"}))


def _condition_status(obj: dict | None, kind: str) -> dict | None:
    for item in ((obj or {}).get("status") or {}).get("conditions") or []:
        if item.get("type") == kind:
            return item
    return None


@condition("{kind:w}/{name:Name} has condition {type:w} {status:w}")
def has_condition(scenario, kind: str, name: str, type: str, status: str) -> Condition:
    def holds(state: State) -> bool:
        found = _condition_status(_object(state, scenario, kind, name), type)
        return found is not None and found.get("status") == status
    return Condition(f"{kind}/{name} has condition {type}={status}", holds,
                     frozenset({resource_of(kind)}))


@condition("{kind:w}/{name:Name} has condition {type:w} {status:w} with reason {reason:w}")
def has_condition_reason(scenario, kind: str, name: str, type: str, status: str,
                         reason: str) -> Condition:
    def holds(state: State) -> bool:
        found = _condition_status(_object(state, scenario, kind, name), type)
        return found is not None and found.get("status") == status and \
            found.get("reason") == reason
    return Condition(f"{kind}/{name} has condition {type}={status} (reason {reason})",
                     holds, frozenset({resource_of(kind)}))


@condition("node/{name:Name} is Ready")
def node_ready(scenario, name: str) -> Condition:
    return has_condition(scenario, "node", name, "Ready", "True")


@condition("node/{name:Name} is NotReady")
def node_not_ready(scenario, name: str) -> Condition:
    def holds(state: State) -> bool:
        found = _condition_status(state.get("nodes", "", name), "Ready")
        return found is not None and found.get("status") != "True"
    return Condition(f"node/{name} is NotReady", holds, frozenset({"nodes"}))


@condition("{kind:w}/{name:Name} exists")
def exists(scenario, kind: str, name: str) -> Condition:
    return Condition(f"{kind}/{name} exists",
                     lambda s: _object(s, scenario, kind, name) is not None,
                     frozenset({resource_of(kind)}))


@condition("{kind:w}/{name:Name} is gone")
def gone(scenario, kind: str, name: str) -> Condition:
    return Condition(f"{kind}/{name} is gone",
                     lambda s: _object(s, scenario, kind, name) is None,
                     frozenset({resource_of(kind)}))


# --- events -------------------------------------------------------------------------------


def _is(entry: Entry, scenario, resource: str, name: str | None = None) -> bool:
    return (entry.kind == WATCH and entry.resource == resource
            and entry.namespace == _namespace(scenario, resource)
            and (name is None or entry.name == name))


@event("{kind:w}/{name:Name} was created")
def was_created(scenario, kind: str, name: str) -> Event:
    resource = resource_of(kind)
    return Event(f"{kind}/{name} was created",
                 lambda e, s: _is(e, scenario, resource, name) and e.type == "ADDED")


@dataclass(frozen=True)
class Deletion(Event):
    """The moment each matching object's deletion started (deletionTimestamp, or gone)."""

    def scan(self, entries):
        started: set[str] = set()
        for entry in entries:
            if entry.uid in started or not self.occurs(entry, None):
                continue
            if entry.type == "DELETED" or not is_live(entry.object or {}):
                started.add(entry.uid)
                yield entry


@event("{kind:w}/{name:Name} was deleted")
def was_deleted(scenario, kind: str, name: str) -> Event:
    resource = resource_of(kind)
    return Deletion(f"{kind}/{name} was deleted",
                    lambda e, _s: _is(e, scenario, resource, name))


@event("a pod of {name} was created")
def pod_created(scenario, name: str) -> Event:
    labels = workloads.selector_labels(name)
    return Event(f"a pod of {name} was created",
                 lambda e, s: _is(e, scenario, "pods") and e.type == "ADDED" and
                 all(((e.object or {}).get("metadata") or {}).get("labels", {}).get(k) == v
                     for k, v in labels.items()))


@event("{kind:w}/{name:Name} got condition {type:w} {status:w}")
def got_condition(scenario, kind: str, name: str, type: str, status: str) -> Event:
    held = has_condition(scenario, kind, name, type, status)
    return Transition(f"{kind}/{name} got condition {type}={status}",
                      lambda e, s: held.holds(s))


@event("{condition} became true")
def became_true(scenario, condition: str) -> Event:
    held = build_condition(condition, scenario)
    return Transition(f"'{held.description}' became true", lambda e, s: held.holds(s))


# The words of the implementation concepts (replica group, storage cluster, ...) register here.
from aftershock.sut import phrases as _concept_phrases  # noqa: E402, F401
