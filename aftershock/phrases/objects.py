"""The phrases about objects of any kind: pods of a workload, nodes, conditions, creation
and deletion."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aftershock.checks.temporal import Event, Transition
from aftershock.concepts import replica_group_selector
from aftershock.history import ADDED, DELETED, Change, History
from aftershock.history.state import Query, State, is_live, is_ready, is_running, node_of
from aftershock.kube import workloads
from aftershock.phrases.base import (
    Condition,
    PhraseError,
    build_condition,
    condition,
    event,
    namespace_of,
    resource_of,
)


def _object(state: State, ctx, kind: str, name: str) -> dict | None:
    resource = resource_of(kind, ctx)
    return state.get(resource, namespace_of(ctx, resource), name)


def _one(ctx, kind: str, name: str) -> Callable[[State], int]:
    """'about' for a phrase on one object: 1 while it is recorded."""
    return lambda state: int(_object(state, ctx, kind, name) is not None)


def _pods(ctx, name: str) -> Callable[[State], int]:
    """'about' for a phrase on the pods of a workload: how many there are."""
    every = Query("pods", ctx.namespace, workloads.selector_labels(name))
    return lambda state: state.count(every)


def _running(ctx, name: str) -> Query:
    return Query("pods", ctx.namespace, workloads.selector_labels(name), is_running)


def _running_pods(state: State, query: Query) -> list[dict]:
    return list(state.answer(query).members.values())


# --- conditions ---------------------------------------------------------------------------


@condition("{count:d} pods of {name} are Running")
def pods_running(ctx, count: int, name: str) -> Condition:
    running = _running(ctx, name)
    return Condition(f"{count} pods of {name} are Running",
                     lambda s: s.count(running) == count, frozenset({"pods"}), _pods(ctx, name))


@condition("{count:d} pods of {name} are Ready")
def pods_ready(ctx, count: int, name: str) -> Condition:
    return _ready_count(ctx, name, count, f"{count} pods of {name} are Ready")


@condition("no pod of {name} is Ready")
def no_pod_ready(ctx, name: str) -> Condition:
    return _ready_count(ctx, name, 0, f"no pod of {name} is Ready")


def _ready_count(ctx, name: str, count: int, description: str) -> Condition:
    ready = Query("pods", ctx.namespace, workloads.selector_labels(name), is_ready)
    return Condition(description, lambda s: s.count(ready) == count, frozenset({"pods"}),
                     _pods(ctx, name))


@condition("{count:d} pods of {name} are Running on {spread:d} different nodes")
def pods_running_spread(ctx, count: int, name: str, spread: int) -> Condition:
    query = _running(ctx, name)

    def holds(state: State) -> bool:
        running = _running_pods(state, query)
        return len(running) == count and len({node_of(p) for p in running}) == spread
    return Condition(f"{count} pods of {name} are Running on {spread} different nodes", holds,
                     frozenset({"pods"}), _pods(ctx, name))


def _running_elsewhere(ctx, count: int, name: str, node: str) -> Condition:
    query = _running(ctx, name)

    def holds(state: State) -> bool:
        running = _running_pods(state, query)
        return len(running) == count and all(node_of(p) != node for p in running)
    return Condition(f"{count} pods of {name} are Running, none on node/{node}", holds,
                     frozenset({"pods"}), _pods(ctx, name))


@condition("{count:d} pods of {name} are Running, none on the drained node")
def pods_running_elsewhere(ctx, count: int, name: str) -> Condition:
    return _running_elsewhere(ctx, count, name, ctx.recall("drained node"))


@condition("at most {count:d} pods of {name} are live")
def at_most_live(ctx, count: int, name: str) -> Condition:
    live = Query("pods", ctx.namespace, workloads.selector_labels(name), is_live)
    return Condition(f"at most {count} pods of {name} are live",
                     lambda s: s.count(live) <= count, frozenset({"pods"}), _pods(ctx, name))


@condition("{count:d} pods of {name} are Running, none on node/{node:Name}")
def pods_running_not_on(ctx, count: int, name: str, node: str) -> Condition:
    return _running_elsewhere(ctx, count, name, node)


@condition("pod {pod:Name} is Running elsewhere")
def pod_running_elsewhere(ctx, pod: str) -> Condition:
    before = ctx.recall(f"node of pod {pod}")

    def holds(state: State) -> bool:
        obj = state.get("pods", ctx.namespace, pod)
        return bool(obj) and is_running(obj) and node_of(obj) not in ("", before)
    return Condition(f"pod/{ctx.namespace}/{pod} is Running on another node than "
                     f"node/{before}", holds, frozenset({"pods"}), _one(ctx, "pod", pod))


@condition("nothing bound to the deleted node is left")
def deleted_node_cleared(ctx) -> Condition:
    node = ctx.recall("deleted node")
    bound = {tuple(key) for key in ctx.recall("bound to the deleted node")}
    if not any(resource == "leases" for resource, _, _ in bound):
        raise PhraseError(f"node/{node} had no recorded lease when it was deleted: nothing "
                          "to show its clean-up")

    def holds(state: State) -> bool:
        return not any(state.has(key) for key in bound) and \
            not any(node_of(p) == node for p in state.select("pods"))
    kinds = sorted({resource for resource, _, _ in bound})
    return Condition(f"none of the {len(bound)} {', '.join(kinds)} bound to node/{node} is left",
                     holds, frozenset({"pods", "resourceslices", "leases"}),
                     lambda _state: len(bound))


@condition("{count:d} pods of {name} are live")
def pods_live(ctx, count: int, name: str) -> Condition:
    live = Query("pods", ctx.namespace, workloads.selector_labels(name), is_live)
    return Condition(f"{count} pods of {name} are live",
                     lambda s: s.count(live) == count, frozenset({"pods"}), _pods(ctx, name))


@condition("{count:d} pods of {name} are placed on nodes")
def pods_placed(ctx, count: int, name: str) -> Condition:
    """Live and bound to a node, whether their containers started or not (a pod whose
    claims a driver cannot prepare stays so)."""
    placed = Query("pods", ctx.namespace, workloads.selector_labels(name),
                   lambda pod: is_live(pod) and bool(node_of(pod)))
    return Condition(f"{count} pods of {name} are placed on nodes",
                     lambda s: s.count(placed) == count, frozenset({"pods"}), _pods(ctx, name))


def _condition_status(obj: dict | None, kind: str) -> dict | None:
    for item in ((obj or {}).get("status") or {}).get("conditions") or []:
        if item.get("type") == kind:
            return item
    return None


@condition("{kind:w}/{name:Name} has condition {type:w} {status:w}")
def has_condition(ctx, kind: str, name: str, type: str, status: str) -> Condition:
    def holds(state: State) -> bool:
        found = _condition_status(_object(state, ctx, kind, name), type)
        return found is not None and found.get("status") == status
    return Condition(f"{kind}/{name} has condition {type}={status}", holds,
                     frozenset({resource_of(kind, ctx)}), _one(ctx, kind, name))


@condition("{kind:w}/{name:Name} has condition {type:w} {status:w} with reason {reason:w}")
def has_condition_reason(ctx, kind: str, name: str, type: str, status: str,
                         reason: str) -> Condition:
    def holds(state: State) -> bool:
        found = _condition_status(_object(state, ctx, kind, name), type)
        return found is not None and found.get("status") == status and \
            found.get("reason") == reason
    return Condition(f"{kind}/{name} has condition {type}={status} (reason {reason})",
                     holds, frozenset({resource_of(kind, ctx)}), _one(ctx, kind, name))


@condition("node/{name:Name} is Ready")
def node_ready(ctx, name: str) -> Condition:
    return has_condition(ctx, "node", name, "Ready", "True")


@condition("node/{name:Name} is NotReady")
def node_not_ready(ctx, name: str) -> Condition:
    def holds(state: State) -> bool:
        found = _condition_status(state.get("nodes", "", name), "Ready")
        return found is not None and found.get("status") != "True"
    return Condition(f"node/{name} is NotReady", holds, frozenset({"nodes"}),
                     _one(ctx, "node", name))


@condition("the failed node is NotReady")
def failed_node_not_ready(ctx) -> Condition:
    return node_not_ready(ctx, ctx.recall("failed node"))


@condition("{kind:w}/{name:Name} exists")
def exists_phrase(ctx, kind: str, name: str) -> Condition:
    return Condition(f"{kind}/{name} exists",
                     lambda s: _object(s, ctx, kind, name) is not None,
                     frozenset({resource_of(kind, ctx)}), _one(ctx, kind, name))


@condition("pod/{name:Name} has finished")
def finished(ctx, name: str) -> Condition:
    """Succeeded or Failed: its containers will not run again."""
    return Condition(f"pod/{name} has finished",
                     lambda s: ((_object(s, ctx, "pod", name) or {}).get("status") or {})
                     .get("phase") in ("Succeeded", "Failed"),
                     frozenset({resource_of("pod", ctx)}), _one(ctx, "pod", name))


@condition("{kind:w}/{name:Name} is gone")
def gone(ctx, kind: str, name: str) -> Condition:
    return Condition(f"{kind}/{name} is gone",
                     lambda s: _object(s, ctx, kind, name) is None,
                     frozenset({resource_of(kind, ctx)}), _one(ctx, kind, name))


# --- events -------------------------------------------------------------------------------


def _is(change: Change, ctx, resource: str, name: str | None = None) -> bool:
    return (change.resource == resource
            and change.namespace == namespace_of(ctx, resource)
            and (name is None or change.name == name))


@event("{kind:w}/{name:Name} was created")
def was_created(ctx, kind: str, name: str) -> Event:
    resource = resource_of(kind, ctx)
    return Event(f"{kind}/{name} was created",
                 lambda c, s: _is(c, ctx, resource, name) and c.type == ADDED,
                 frozenset({resource}))


@dataclass(frozen=True)
class Deletion(Event):
    """The moment each matching object's deletion started (deletionTimestamp, or gone)."""

    def scan(self, history):
        started: set[str] = set()
        for change in History.of(history).changes_of(self.resources or None):
            life = change.uid or "/".join(change.key)
            if life in started or not self.occurs(change, None):
                continue
            if change.type == DELETED or not is_live(change.object or {}):
                started.add(life)
                yield change


@event("{kind:w}/{name:Name} was deleted")
def was_deleted(ctx, kind: str, name: str) -> Event:
    resource = resource_of(kind, ctx)
    return Deletion(f"{kind}/{name} was deleted",
                    lambda e, _s: _is(e, ctx, resource, name), frozenset({resource}))


def _labelled(change: Change, labels: dict[str, str]) -> bool:
    found = ((change.object or {}).get("metadata") or {}).get("labels") or {}
    return all(found.get(k) == v for k, v in labels.items())


@event("a pod of {name} was created")
def pod_created(ctx, name: str) -> Event:
    labels = workloads.selector_labels(name)
    return Event(f"a pod of {name} was created",
                 lambda c, s: _is(c, ctx, "pods") and c.type == ADDED and _labelled(c, labels),
                 frozenset({"pods"}))


@event("a pod of the replica group {name:Name} was marked for deletion")
def group_pod_marked(ctx, name: str) -> Event:
    labels = replica_group_selector(ctx, name)

    def of_group(change: Change) -> bool:
        return _is(change, ctx, "pods") and _labelled(change, labels)
    return Deletion(f"a pod of replica group {name} was marked for deletion",
                    lambda e, _s: of_group(e), frozenset({"pods"}), of_group)


@event("{kind:w}/{name:Name} got condition {type:w} {status:w}")
def got_condition(ctx, kind: str, name: str, type: str, status: str) -> Event:
    held = has_condition(ctx, kind, name, type, status)
    return Transition(f"{kind}/{name} got condition {type}={status}",
                      lambda e, s: held.holds(s), held.resources)


@event("{condition} became true")
def became_true(ctx, condition: str) -> Event:
    held = build_condition(condition, ctx)
    return Transition(f"'{held.description}' became true", lambda e, s: held.holds(s),
                      held.resources)

