"""The differential oracles of `aftershock explore`, as pure functions of recorded histories:
what the implementation's objects looked like at the end and how many it created and deleted,
learned from unperturbed reference runs, with what varies between those runs masked."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from aftershock.history import Action, Entry, History

Recorded = History | Iterable[Entry]

# Fields that say when or which instance, never what, and where the scheduler and the node put
# a pod (not the implementation's output, and a few reference runs may agree on it by chance):
# masked before anything is learned.
ALWAYS_MASKED = ("metadata.uid", "metadata.resourceVersion", "metadata.creationTimestamp",
                 "metadata.managedFields", "metadata.generation", "metadata.namespace",
                 "metadata.selfLink", "spec.nodeName", "status.hostIP", "status.hostIPs",
                 "status.podIP", "status.podIPs", "status.containerStatuses[*].containerID",
                 "status.containerStatuses[*].imageID")
# What the cluster itself writes into an object an implementation makes: a service-account
# token Secret's data is the token controller's (the cluster's CA, a token it signed), never
# the implementation's output, and it differs from cluster to cluster (explore's shards).
FILLED_BY_THE_CLUSTER = {"kubernetes.io/service-account-token": (
    "data.ca.crt", "data.namespace", "data.token")}
# A leader election's record says which process leads and how often the lead changed hands:
# the run's, never the implementation's output. A kill plan hands it over once more than the
# references did (RabbitMQ's operator, whose leader election cannot be turned off).
HELD_BY_THE_RUN = {"leases": ("spec.holderIdentity", "spec.leaseTransitions")}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
NAMESPACE = "{namespace}"
WRITE_VERBS = ("create", "update", "patch", "delete")
STORM_WINDOW = 10.0
STORM_GRACE = 2.0  # seconds after a perturbation is lifted before a refusal counts as a storm
REPORTS = {"events"}

Flat = dict[str, Any]


def flatten(value: Any, prefix: str = "") -> Flat:
    """{'a': {'b': [1]}} → {'a.b[*]': ...}: list positions become [*], so a path names a field
    of every element; the values of one path in one object are kept in order."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for key in sorted(value):
            out.update(flatten(value[key], f"{prefix}.{key}" if prefix else key))
    elif isinstance(value, list):
        for item in value:
            for path, leaf in flatten(item, f"{prefix}[*]").items():
                out.setdefault(path, []).append(leaf)
    else:
        out[prefix] = value
    return {path: (tuple(v) if isinstance(v, list) else v) for path, v in out.items()}


def _masked(path: str, masks: Iterable[str]) -> bool:
    return any(path == mask or path.startswith(mask + ".") or path.startswith(mask + "[")
               for mask in masks)


def normal(obj: dict[str, Any], namespace: str, masks: Iterable[str] = (),
           resource: str = "", unordered: Iterable[str] = ()) -> Flat:
    """One object (of ``resource``) as flat fields, the namespace's name replaced by a token,
    timestamps and masked fields gone; the lists at ``unordered`` (a list-map or a set by the
    kind's schema: a Service's ports) sorted first, so their order, which means nothing and may
    be a map's iteration order, is never compared."""
    obj = _sorted_lists(obj, "", frozenset(unordered)) if unordered else obj
    text = json.dumps(obj).replace(f'"{namespace}"', f'"{NAMESPACE}"') if namespace else \
        json.dumps(obj)
    flat = flatten(json.loads(text))
    masks = (*ALWAYS_MASKED, *FILLED_BY_THE_CLUSTER.get(obj.get("type"), ()),
             *HELD_BY_THE_RUN.get(resource, ()), *masks)
    return {path: value for path, value in flat.items()
            if not _masked(path, masks) and not _timestamp(value)}


def _sorted_lists(value: Any, at: str, unordered: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_lists(v, f"{at}.{k}" if at else k, unordered)
                for k, v in value.items()}
    if isinstance(value, list):
        items = [_sorted_lists(item, f"{at}[*]", unordered) for item in value]
        return sorted(items, key=lambda i: json.dumps(i, sort_keys=True)) if at in unordered \
            else items
    return value


def _timestamp(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(_timestamp(v) for v in value)
    return isinstance(value, str) and bool(TIMESTAMP.match(value))


def end_objects(history: Recorded, namespace: str, resources: Iterable[str],
                actor: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """The objects of ``resources`` in ``namespace`` as the history ends; with ``actor``,
    only those it created (by the audit log): an implementation in the cluster has pods of its
    own beside the ones it makes, and a plan's sidecar changes them."""
    history = History.of(history)
    resources = list(resources)
    ends = {resource: [life.last.after for life in history.lives_of(resource, namespace)
                       if life.last.after is not None] for resource in resources}
    if actor is None:
        return ends
    # The audit policy keeps a create's response (its uid) for pods alone; any other create
    # is named by its request.
    creates = [a for a in history.actions if a.actor == actor and a.ok
               and a.verb == "create" and not a.subresource and a.namespace == namespace]
    uids = {a.uid for a in creates if a.uid} | {a.life.uid for a in creates if a.life}
    names = {(a.resource, a.name) for a in creates if a.name}
    return {resource: [o for o in objects if (o.get("metadata") or {}).get("uid") in uids
                       or (resource, (o.get("metadata") or {}).get("name")) in names]
            for resource, objects in ends.items()}


def learn_masks(runs: Sequence[dict[str, list[Flat]]]) -> dict[str, list[str]]:
    """Per resource, the paths whose values (as a multiset over its objects) differ between
    reference runs; ``["*"]`` when even the number of objects differs."""
    masks: dict[str, list[str]] = {}
    for resource in sorted({r for run in runs for r in run}):
        objects = [run.get(resource, []) for run in runs]
        if len({len(o) for o in objects}) > 1:
            masks[resource] = ["*"]
            continue
        paths = sorted({p for objs in objects for obj in objs for p in obj})
        masks[resource] = [path for path in paths
                           if len({_values(objs, path) for objs in objects}) > 1]
    return masks


def _values(objects: list[Flat], path: str) -> str:
    return json.dumps(sorted(json.dumps(o.get(path), default=str) for o in objects))


def canonical(objects: list[Flat], masks: list[str]) -> list[str]:
    return sorted(json.dumps({p: v for p, v in obj.items() if not _masked(p, masks)},
                             sort_keys=True, default=str) for obj in objects)


def end_state_difference(got: dict[str, list[Flat]], reference: dict[str, list[str]],
                         masks: dict[str, list[str]]) -> list[str]:
    """What differs between the end state and the reference, per resource, in words."""
    found = []
    for resource, wanted in sorted(reference.items()):
        if masks.get(resource) == ["*"]:
            continue
        mine = canonical(got.get(resource, []), masks.get(resource, []))
        if mine == wanted:
            continue
        if len(mine) != len(wanted):
            found.append(f"{len(mine)} {resource} at the end, the reference had {len(wanted)}")
            continue
        found.append(f"{resource}: " + _first_field(mine, wanted))
    return found


def _first_field(mine: list[str], wanted: list[str]) -> str:
    ours = [json.loads(m) for m in mine]
    theirs = [json.loads(w) for w in wanted]
    for path in sorted({p for o in ours + theirs for p in o}):
        a = Counter(json.dumps(o.get(path)) for o in ours)
        b = Counter(json.dumps(o.get(path)) for o in theirs)
        if a != b:
            return f"{path} is {_tally(a)}, the reference had {_tally(b)}"
    return "the objects differ"


def _tally(counts: Counter[str]) -> str:
    return ", ".join(f"{value} x{n}" for value, n in sorted(counts.items()))


def writes(history: Recorded, actor: str, namespace: str,
           verbs: Iterable[str] = ("create", "delete")) -> dict[str, list[Entry]]:
    """The writes ``actor`` made that the API server accepted into ``namespace``, by
    'resource verb' (by the audit log). Cluster-scoped objects outlive a run's namespace, so
    what earlier runs left decides their count: they are not counted, nor are Kubernetes Events
    (reports about objects, not objects it owns)."""
    verbs = set(verbs)
    found: dict[str, list[Entry]] = {}
    for action in History.of(history).actions:
        if (action.actor == actor and action.verb in verbs and action.resource not in REPORTS
                and not action.subresource and action.ok and action.namespace == namespace):
            found.setdefault(f"{action.resource} {action.verb}", []).append(action.entry)
    return found


def written_kinds(history: Recorded, actor: str, namespace: str) -> set[tuple[str, str]]:
    """(API group, plural) of every kind ``actor`` wrote into ``namespace``, or cluster-wide,
    and the API server accepted (by the audit log)."""
    return {(a.group, a.resource) for a in History.of(history).actions
            if a.actor == actor and a.verb in WRITE_VERBS and a.resource and a.ok
            and a.namespace in (namespace, "")}


def recorded(history: Recorded) -> set[str]:
    """The plurals the recorder said it records."""
    return set(History.of(history).recording or {})


def status_writers(history: Recorded, actor: str,
                   namespace: str) -> tuple[set[str], set[str]]:
    """(the kinds whose status ``actor`` wrote in ``namespace``, those whose status others
    wrote), by the audit log. A Deployment's status is the deployment controller's, a Pod's the
    kubelet's: not the output of the implementation that created them."""
    ours: set[str] = set()
    theirs: set[str] = set()
    for action in History.of(history).actions:
        if action.subresource == "status" and action.verb in WRITE_VERBS and action.ok \
                and action.namespace == namespace:
            (ours if action.actor == actor else theirs).add(action.resource)
    return ours, theirs


def refused(history: Recorded, actor: str, namespace: str | None = None) -> list[Action]:
    """The writes of ``actor`` (into ``namespace`` or cluster-scoped objects, when given) the
    API server refused, in the order it answered them. A delete answered 404 is not one: the
    object was already gone, which a delete-if-exists (kubectl's --ignore-not-found) takes as
    done; AIStore's operator issues one for its PodDisruptionBudget at every reconcile where
    none is asked for."""
    return [a for a in History.of(history).actions if a.actor == actor
            and a.verb in WRITE_VERBS and a.code >= 400
            and not (a.verb == "delete" and a.code == 404)
            and (namespace is None or a.namespace in (namespace, ""))]


def fired(history: Recorded) -> list[tuple[float, float]]:
    """(fired, lifted) of each anchored fault: its mark says how long it lasts."""
    return [(m.at, m.at + float(m.extra["lasts"])) for m in History.of(history).marks
            if "lasts" in m.extra]


def perturbed(history: Recorded) -> list[tuple[float, float]]:
    """When anchored faults perturbed the implementation: from each firing until STORM_GRACE
    after it was lifted, as a retry backs off."""
    return [(start, lifted + STORM_GRACE) for start, lifted in fired(history)]


def perturbation_over(history: Recorded) -> float:
    """When the last anchored fault that fired was lifted; 0.0 if none fired."""
    return max((lifted for _, lifted in fired(history)), default=0.0)


def split_by(found: list[Action], windows: list[tuple[float, float]]) -> tuple[list, list]:
    """(the requests answered inside any window, the others)."""
    inside, outside = [], []
    for action in found:
        within = any(start <= action.hi <= end for start, end in windows)
        (inside if within else outside).append(action)
    return inside, outside


def refused_storm(history: Recorded, actor: str,
                  namespace: str | None = None) -> list[Action]:
    """The most writes of ``actor`` the API server refused within any STORM_WINDOW seconds."""
    return densest(refused(history, actor, namespace))


def densest(refused: list[Action]) -> list[Action]:
    """The most of ``refused`` answered within any STORM_WINDOW seconds (on the API server's
    clock: the order the audit log was read in is not the order they were answered in)."""
    refused = sorted(refused, key=lambda a: a.hi)
    best: list[Action] = []
    start = 0
    for end, action in enumerate(refused):
        while action.hi - refused[start].hi > STORM_WINDOW:
            start += 1
        if end - start + 1 > len(best):
            best = refused[start:end + 1]
    return best


def last_entries(history: Recorded, namespace: str, resource: str) -> list[Entry]:
    """The last recorded change of each object of ``resource`` in ``namespace``."""
    last: dict[str, Any] = {}
    for change in History.of(history).changes_of(resource):
        if change.namespace == namespace:
            last[change.name] = change
    return [c.entry for c in sorted(last.values(), key=lambda c: c.order)]
