"""What scaling down does to a removed member's dir, per retention mode (filesystem only).

retain            — nothing is touched.
decommission      — index.json first, then the buckets, then the dir: interrupted at any step the
                    member's objects read as a clean not_found, never as an error.
safe_decommission — the objects are copied into a remaining member's dir (its index updated in one
                    rename), then the member is decommissioned as above: nothing is lost.
faulty wipe       — the incident: every member dir of the cluster on the node, bucket by bucket,
                    index.json left in place, stopping halfway: reads of the lost objects fail.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from implementations.storage import data
from implementations.storage.data import INDEX, Member

DATA_WIPED, DATA_MIGRATED, RETAINED = "DataWiped", "DataMigrated", "Retained"


@dataclass(frozen=True)
class Step:
    action: str  # remove_index | remove_bucket | remove_dir
    path: Path


@dataclass(frozen=True)
class Outcome:
    """One member dir touched (or deliberately kept): becomes one Event on the member's pod."""

    reason: str
    member: Member
    message: str


def _buckets(path: Path) -> list[Path]:
    return sorted(p for p in Path(path).glob("bucket-*") if p.is_dir())


def decommission_steps(path: Path) -> list[Step]:
    steps = [Step("remove_index", Path(path) / INDEX)] if (Path(path) / INDEX).exists() else []
    steps += [Step("remove_bucket", bucket) for bucket in _buckets(path)]
    return [*steps, Step("remove_dir", Path(path))]


def apply(step: Step) -> None:
    if step.action == "remove_index":
        step.path.unlink(missing_ok=True)
    elif step.action in ("remove_bucket", "remove_dir"):
        shutil.rmtree(step.path, ignore_errors=True)
    else:
        raise ValueError(f"unknown step {step.action}")


def run(steps: list[Step], limit: int | None = None) -> int:
    """Apply the steps in order, the first `limit` only when given (an interruption)."""
    done = steps if limit is None else steps[:limit]
    for step in done:
        apply(step)
    return len(done)


def decommission(member: Member, mode: str = "decommission") -> Outcome:
    buckets = len(_buckets(member.path))
    run(decommission_steps(member.path))
    return Outcome(DATA_WIPED, member,
                   f"removed member-{member.ordinal} on node/{member.node} ({mode}): "
                   f"index.json first, then {buckets} buckets, then the dir")


def retain(member: Member, why: str = "retain") -> Outcome:
    return Outcome(RETAINED, member,
                   f"kept the data of member-{member.ordinal} on node/{member.node} ({why})")


def migrate(member: Member, target: Member) -> Outcome:
    """Copy every verifiable object of member into target, indexed in one rename."""
    index = data.read_index(member.path) or {}
    copied: dict[str, tuple[int, bytes]] = {}
    for name, expected in index.items():
        found = data.object_file(member.path, name)
        if found is not None and data.checksum(found.read_bytes()) == expected:
            copied[name] = (int(found.parent.name.split("-")[1]), found.read_bytes())
    data.store(target.path, copied)
    skipped = len(index) - len(copied)
    return Outcome(DATA_MIGRATED, member,
                   f"copied {len(copied)} objects of member-{member.ordinal} on "
                   f"node/{member.node} to member-{target.ordinal} on node/{target.node} "
                   f"(safe_decommission)" + (f", {skipped} unreadable left behind" if skipped
                                             else ""))


def retire(member: Member, mode: str, target: Member | None = None) -> list[Outcome]:
    """The correct scale-down of one removed member's dir in the given retention mode."""
    if mode == "retain":
        return [retain(member)]
    if mode == "decommission":
        return [decommission(member)]
    if mode != "safe_decommission":
        raise ValueError(f"unknown retention mode {mode!r}")
    if target is None:
        return [retain(member, "safe_decommission: no remaining member to copy into")]
    try:
        migrated = migrate(member, target)
    except data.UnreadableIndex as exc:
        return [retain(member, f"safe_decommission: index unreadable, {exc}")]
    return [migrated, decommission(member, mode)]


def faulty_wipe_steps(member: Member) -> list[Step]:
    """The steps the faulty wipe gets through before it fails: about half the buckets."""
    buckets = _buckets(member.path)
    return [Step("remove_bucket", b) for b in buckets[:math.ceil(len(buckets) / 2)]]


def faulty_wipe(root: Path, node: str, namespace: str, cluster: str) -> list[Outcome]:
    """The incident's wipe of a whole node: every member dir there, index.json left in place."""
    outcomes = []
    for member in data.members_on(root, node, namespace, cluster):
        total = len(_buckets(member.path))
        removed = run(faulty_wipe_steps(member))
        outcomes.append(Outcome(DATA_WIPED, member,
                                f"wiping node/{node}: removed {removed} of {total} buckets of "
                                f"member-{member.ordinal}, interrupted (index.json left)"))
    return outcomes
