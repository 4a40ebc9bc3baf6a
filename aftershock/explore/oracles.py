"""What a plan's run is judged by: the labelled properties the workload's concepts allow, as
the Then steps a feature would say, and the differential oracles (E1-E3) learned from the
reference runs."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aftershock.explore import differential as diff
from aftershock.timeline.entry import Entry

QUIET = "When the namespace is quiet for 2 seconds"


def labelled(steps: Sequence[str]) -> list[str]:
    """Then steps for the properties the workload's steps make judgeable (R1, R2, R5 for a
    replica group: never more live pods than the most it was asked for, one head, and the
    size it was last asked for reached)."""
    from aftershock.scenario import match_step

    sizes: dict[str, list[int]] = {}
    heads: set[str] = set()
    for text in steps:
        found = match_step(text)
        if found is None:
            continue
        name, args = found[0].func.__name__, found[1]
        if name in ("a_replica_group", "a_held_replica_group", "a_replica_group_with_head",
                    "scale_group"):
            sizes.setdefault(args["name"], []).append(args["replicas"])
        if name == "a_replica_group_with_head":
            heads.add(args["name"])
    out = []
    for group, wanted in sizes.items():
        out.append(f"Then at no point did the replica group {group} have more than "
                   f"{max(wanted)} live pods (R1)")
        if group in heads:
            out.append(f"Then at no point did the replica group {group} have more than 1 live "
                       "head pod (R2)")
        out.append(f"Then within 30 seconds the replica group {group} has {wanted[-1]} live "
                   "pods (R5)")
    return out


@dataclass
class Reference:
    """What the unperturbed runs agree on."""

    counts: dict[str, list[int]] = field(default_factory=dict)  # 'pods create' → [min, max]
    masks: dict[str, list[str]] = field(default_factory=dict)
    objects: dict[str, list[str]] = field(default_factory=dict)
    storm_limit: int = 10
    path: Path | None = None

    def steps(self, differential: bool) -> list[str]:
        from aftershock.bdd.steps.reference import format_counts

        out = []
        if differential and self.path is not None and self.objects:
            out.append(f"Then the objects the implementation owns end as in the reference "
                       f"{shown(self.path)} (E1)")
        if differential:
            out.append(f"Then the implementation's creates and deletes are as in the "
                       f"reference: {format_counts(self.counts)} (E2)")
        out.append(f"Then the implementation had at most {self.storm_limit} writes refused "
                   "within 10 seconds (E3)")
        return out

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"objects": self.objects, "masks": self.masks,
                                    "counts": self.counts, "storm_limit": self.storm_limit},
                                   indent=1, sort_keys=True))
        self.path = path


def shown(path: Path) -> str:
    """A path as a step says it: relative to where aftershock runs, when it is below it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


def learn(runs: Sequence[tuple[list[Entry], str, str]]) -> Reference:
    """From (history, namespace, implementation actor) of each reference run."""
    made = [diff.writes(entries, actor, namespace) for entries, namespace, actor in runs]
    keys = sorted({key for run in made for key in run})
    counts = {key: [min(len(run.get(key, [])) for run in made),
                    max(len(run.get(key, [])) for run in made)] for key in keys}
    owned = sorted({key.split(" ")[0] for key in keys if key.endswith(" create")})
    ends = []
    for entries, namespace, _ in runs:
        objects = diff.end_objects(entries, namespace, owned)
        ends.append({r: [diff.normal(o, namespace) for o in objs] for r, objs in objects.items()})
    masks = diff.learn_masks(ends)
    objects = {r: diff.canonical(ends[0].get(r, []), masks.get(r, [])) for r in owned
               if masks.get(r) != ["*"]}
    storm = max(len(diff.refused_storm(entries, actor)) for entries, _, actor in runs)
    return Reference(counts, masks, objects, 2 * storm + 10)
