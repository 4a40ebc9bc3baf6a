"""What a plan's run is judged by: the labelled properties the workload's concepts allow, as
the Then steps a feature would say, and the differential oracles (E1-E3) learned from the
reference runs."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aftershock.bdd.steps.reference import format_counts
from aftershock.checks import differential as diff
from aftershock.grammar import match_step
from aftershock.timeline.entry import Entry
from aftershock.timeline.resources import named, spelled

QUIET = "When the namespace is quiet for 2 seconds"
# Judged at the end of every run, a replay's too: a write an admission webhook denied (the
# implementation's own, under a fault) is a finding, not a plan's error (kueue-2 was counted
# one). A step the API refused so ends the run, which is judged by this alone.
ADMITTED = "Then no write in the namespace was refused by an admission webhook"
GANG_LATENCY = 10  # seconds a gang replica may be regressed before its breach must show
CONVERGE = 30  # seconds the size last asked for may take (R5)
# A pod whose node was deleted without a drain ends only when kube-controller-manager's pod
# garbage collector deletes it (it looks every 20 s and waits 40 s): a StatefulSet's
# controller, which never has two pods of one ordinal, cannot replace it before. No
# implementation can converge sooner, so R5 waits that much longer after such a deletion.
ORPHANS_COLLECTED = 60
UNDRAINED = ("delete_node", "delete_holder", "delete_node_of_workload", "delete_node_of_pod")


def labelled(steps: Sequence[str], concepts: Iterable[str] = ()) -> list[str]:
    """Then steps for the labelled properties the steps (the workload's and the plan's) and the
    profile's concepts make judgeable, as a feature would say them."""
    said = [(found[0].func.__name__, found[1]) for found in map(match_step, steps) if found]
    out = _replica_groups(said) + _storage_clusters(said) + _gangs(said) + _stateful_sets(said)
    concepts = set(concepts)
    if "node_records" in concepts:
        if any(name in UNDRAINED for name, _ in said):
            out.append("Then within the staleness window that node record is released or "
                       "reused (N1)")
        out += ["Then no node record was reclaimed early (N2)",
                "Then at no point were there more node records than nodes plus 1 (N4)"]
    if "device_driver" in concepts:
        out += ["Then every pod was bound only after its claims were allocated for its node "
                "(D1)", "Then no device was ever allocated to two claims at once (D2)",
                "Then the driver never prepared a device for two claims at once on a node (D5)"]
    return out


def _replica_groups(said: list[tuple[str, dict]]) -> list[str]:
    """R1 (never more live pods than the most asked for), R2 (one head), R5 (the size last
    asked for is reached; later after a node was deleted undrained)."""
    sizes: dict[str, list[int]] = {}
    heads: set[str] = set()
    for name, args in said:
        if name in ("a_replica_group", "a_held_replica_group", "a_replica_group_with_head",
                    "scale_group"):
            sizes.setdefault(args["name"], []).append(args["replicas"])
        if name == "a_replica_group_with_head":
            heads.add(args["name"])
    out = []
    bound = CONVERGE + (ORPHANS_COLLECTED if any(n in UNDRAINED for n, _ in said) else 0)
    for group, wanted in sizes.items():
        out.append(f"Then at no point did the replica group {group} have more than "
                   f"{max(wanted)} live pods (R1)")
        if group in heads:
            out.append(f"Then at no point did the replica group {group} have more than 1 live "
                       "head pod (R2)")
        out.append(f"Then within {bound} seconds the replica group {group} has {wanted[-1]} "
                   "live pods (R5)")
    return out


def _storage_clusters(said: list[tuple[str, dict]]) -> list[str]:
    """S1 and S5 after a scale-down, S2 in retain mode, S3 once objects were written."""
    modes: dict[str, str] = {}
    sizes: dict[str, list[int]] = {}
    written: set[str] = set()
    for name, args in said:
        if name in ("a_storage_cluster", "an_autoscaled_storage_cluster"):
            modes[args["name"]] = args["mode"]
            sizes[args["name"]] = [args["size"]]
        elif name == "scale_storage":
            sizes.setdefault(args["name"], []).append(args["size"])
        elif name == "write_objects":
            written.add(args["name"])
    out = []
    for cluster, wanted in sizes.items():
        shrunk = len(wanted) > 1 and wanted[-1] < max(wanted)
        if shrunk:
            out.append(f"Then destructive actions touched only removed members of the storage "
                       f"cluster {cluster} (S1)")
            if modes.get(cluster) == "retain":
                out.append(f"Then the node-local data of the removed members of the storage "
                           f"cluster {cluster} is still there (S2)")
            out.append(f"Then the storage cluster {cluster} shrank only after its removed "
                       "members were done (S5)")
        if cluster in written:
            out.append(f"Then every object written to the storage cluster {cluster} reads back "
                       "or is cleanly not found (S3)")
    return out


def _gangs(said: list[tuple[str, dict]]) -> list[str]:
    """G1 (a regression of a healthy replica is breached), G6 (at most one recycle per
    replica: a plan makes one episode at most), G8 (never more live pods than its size)."""
    out = []
    for name, args in said:
        if name != "a_gang":
            continue
        gang = args["name"]
        out.append(f"Then every regression of the gang {gang} below minAvailable was breached "
                   f"within {GANG_LATENCY} seconds (G1)")
        out.append(f"Then the gang {gang} was terminated at most {args['groups']} times (G6)")
        out += [f"Then at no point did group {group} of the gang {gang} have more than "
                f"{args['size']} live pods (G8)" for group in range(args["groups"])]
    return out


def _stateful_sets(said: list[tuple[str, dict]]) -> list[str]:
    """Never more live pods than the most replicas asked for; after a scale-down with claims
    retained, the removed ordinals' claims and volumes are still there (S2's Kubernetes form)."""
    sizes: dict[str, list[int]] = {}
    retained: set[str] = set()
    for name, args in said:
        if name in ("a_stateful_set_with_claims", "a_stateful_set"):
            sizes[args["name"]] = [args["replicas"]]
            if args.get("policy") == "retained":
                retained.add(args["name"])
        elif name == "scale" and args["kind"] == "StatefulSet" and args["name"] in sizes:
            sizes[args["name"]].append(args["replicas"])
    out = []
    for workload, wanted in sizes.items():
        out.append(f"Then at no point did {workload} have more than {max(wanted)} live pods")
        if workload in retained and wanted[-1] < max(wanted):
            out.append(f"Then the claims of the removed ordinals of {workload} and their "
                       "volumes are still there (S2)")
    return out


@dataclass
class Reference:
    """What the unperturbed runs agree on."""

    counts: dict[str, list[int]] = field(default_factory=dict)  # 'pods create' → [min, max]
    masks: dict[str, list[str]] = field(default_factory=dict)
    objects: dict[str, list[str]] = field(default_factory=dict)
    storm_limit: int = 10
    # Kinds the implementation wrote that the references did not record ((group, plural)):
    # every later run records them, and a finding's feature says so (@records:)
    records: list[tuple[str, str]] = field(default_factory=list)
    path: Path | None = None
    # The lists of each kind whose order means nothing by its schema (compared sorted)
    unordered: dict[str, list[str]] = field(default_factory=dict)

    def steps(self, differential: bool) -> list[str]:
        out = []
        if differential and self.path is not None and any(self.objects.values()):
            out.append(f"Then the objects the implementation owns end as in the reference "
                       f"{shown(self.path)} (E1)")
        if differential and self.counts:  # an implementation that writes nothing here: no E2
            out.append(f"Then the implementation's creates and deletes are as in the "
                       f"reference: {format_counts(self.counts)} (E2)")
        out.append(f"Then the implementation had at most {self.storm_limit} writes refused "
                   "within 10 seconds (E3)")
        return out

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"objects": self.objects, "masks": self.masks,
                                    "counts": self.counts, "storm_limit": self.storm_limit,
                                    "records": [spelled(*kind) for kind in self.records],
                                    "unordered": self.unordered},
                                   indent=1, sort_keys=True))
        self.path = path

    @classmethod
    def load(cls, path: Path) -> Reference:
        raw = json.loads(path.read_text())
        return cls(raw["counts"], raw["masks"], raw["objects"], raw["storm_limit"],
                   [named(kind) for kind in raw.get("records", [])], path,
                   raw.get("unordered", {}))


def shown(path: Path) -> str:
    """A path as a step says it: relative to where aftershock runs, when it is below it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


def _status_of_others(runs: Sequence[tuple[list[Entry], str, str]]) -> set[str]:
    """The kinds whose status others wrote in some reference run, and the implementation in
    none."""
    written = [diff.status_writers(entries, actor, namespace)
               for entries, namespace, actor in runs]
    return {r for _, theirs in written for r in theirs} - \
        {r for ours, _ in written for r in ours}


def learn(runs: Sequence[tuple[list[Entry], str, str]],
          unordered_of: Callable[[list[str]], dict[str, list[str]]] | None = None) -> Reference:
    """From (history, namespace, implementation actor) of each reference run; with
    ``unordered_of``, the lists of the kinds it created whose order means nothing (by the
    cluster's schemas) are compared sorted."""
    made = [diff.writes(entries, actor, namespace) for entries, namespace, actor in runs]
    keys = sorted({key for run in made for key in run})
    counts = {key: [min(len(run.get(key, [])) for run in made),
                    max(len(run.get(key, [])) for run in made)] for key in keys}
    owned = sorted({key.split(" ")[0] for key in keys if key.endswith(" create")})
    unordered = unordered_of(owned) if unordered_of else {}
    ends = []
    for entries, namespace, actor in runs:
        objects = diff.end_objects(entries, namespace, owned, actor)
        ends.append({r: [diff.normal(o, namespace, resource=r, unordered=unordered.get(r, ()))
                         for o in objs] for r, objs in objects.items()})
    masks = diff.learn_masks(ends)
    for resource in _status_of_others(runs) & set(owned):
        if masks.get(resource) != ["*"]:  # another's output, however often it is the same
            masks[resource] = sorted({*masks.get(resource, []), "status"})
    objects = {r: diff.canonical(ends[0].get(r, []), masks.get(r, [])) for r in owned
               if masks.get(r) != ["*"]}
    storm = max(len(diff.refused_storm(entries, actor, namespace))
                for entries, namespace, actor in runs)
    written = set().union(*(diff.written_kinds(entries, actor, namespace)
                            for entries, namespace, actor in runs))
    seen = set().union(*(diff.recorded(entries) for entries, _, _ in runs))
    records = sorted(kind for kind in written if kind[1] not in seen)
    return Reference(counts, masks, objects, 2 * storm + 10, records, unordered=unordered)
