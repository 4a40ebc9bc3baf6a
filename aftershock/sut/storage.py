"""The storage cluster concept: members of a workload with node-local data, the data probe the
profile names, and the S properties judged over the history and the probe's answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aftershock.checks.temporal import Event, first
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.sut.concepts import concept, get_path
from aftershock.sut.placeholders import fill, fill_all
from aftershock.timeline.entry import QUIET, WATCH, Entry
from aftershock.timeline.state import State, is_ready

PROBE_TIMEOUT = 60


class ProbeFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class StorageCluster:
    """One storage cluster of the scenario, as the profile maps it."""

    name: str
    namespace: str
    mapping: dict[str, Any]

    @classmethod
    def of(cls, scenario, name: str) -> StorageCluster:
        return cls(name, scenario.namespace, concept(scenario, "storage_cluster"))

    @property
    def resource(self) -> str:
        return self.mapping["resource"]["plural"]

    @property
    def workload(self) -> str:
        return fill(self.mapping["workload"]["name"], {"name": self.name})

    def pod(self, ordinal: int) -> str:
        return fill(self.mapping["member_pod"], {"name": self.name, "ordinal": ordinal})

    def ordinal(self, pod: str) -> int | None:
        """The member a pod name stands for, or None if it is not one of this cluster's."""
        pattern = re.escape(self.mapping["member_pod"]).replace(re.escape("{name}"),
                                                               re.escape(self.name))
        found = re.fullmatch(pattern.replace(re.escape("{ordinal}"), r"(\d+)"), pod)
        return int(found.group(1)) if found else None

    def ready_members(self, state: State) -> list[int]:
        ready = []
        for pod in state.select("pods", self.namespace):
            ordinal = self.ordinal(pod["metadata"]["name"])
            if ordinal is not None and is_ready(pod):
                ready.append(ordinal)
        return sorted(ready)

    def obj(self, state: State) -> dict[str, Any] | None:
        return state.get(self.resource, self.namespace, self.name)

    def listed_members(self, state: State) -> list[int] | None:
        obj = self.obj(state)
        members = get_path(obj, self.mapping["members_path"]) if obj else None
        return sorted(members) if members is not None else None

    def finished(self, state: State) -> set[int]:
        obj = self.obj(state)
        return set(get_path(obj, self.mapping["terminal_path"]) or []) if obj else set()

    def members_seen(self, entries: Iterable[Entry]) -> set[int]:
        """The members whose pods the history recorded at any time."""
        return {ordinal for e in entries if e.kind == WATCH and e.resource == "pods"
                and e.namespace == self.namespace
                and (ordinal := self.ordinal(e.name)) is not None}

    def workload_replicas(self, state: State) -> int | None:
        workload = state.get("statefulsets", self.namespace, self.workload)
        return get_path(workload, "spec.replicas") if workload else None


def run_probe(command: list[str], values: dict[str, str], *args: str,
              cwd: Path | None = None) -> dict[str, Any]:
    """Run the profile's data probe with a verb (in ``cwd``, where the implementation's own
    commands run); its one JSON document on stdout."""
    argv = fill_all(command, {"python": sys.executable, **values}) + list(args)
    result = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                            cwd=cwd)
    if result.returncode != 0:
        raise ProbeFailed(f"data probe {' '.join(args)} exited {result.returncode}: "
                          f"{(result.stderr or result.stdout)[-800:]}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as exc:
        raise ProbeFailed(f"data probe {' '.join(args)} printed no JSON: {exc}") from None


# --- judgements ---------------------------------------------------------------------------


def destructive_events(entries: Iterable[Entry], cluster: StorageCluster) -> list[Entry]:
    """Recorded Events announcing a destructive action on one of the cluster's members."""
    reasons = set(cluster.mapping["destructive_reasons"])
    found, seen = [], set()
    for entry in entries:
        if entry.kind != WATCH or entry.resource != "events" or entry.namespace != \
                cluster.namespace or entry.uid in seen:
            continue
        obj = entry.object or {}
        involved = obj.get("involvedObject") or obj.get("regarding") or {}
        if obj.get("reason") in reasons and cluster.ordinal(involved.get("name", "")) is not None:
            seen.add(entry.uid)
            found.append(entry)
    return found


def member_of(entry: Entry, cluster: StorageCluster) -> int | None:
    obj = entry.object or {}
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    return cluster.ordinal(involved.get("name", ""))


def objects_on_disk(inventory: dict[str, Any]) -> dict[int, int]:
    """Objects per member ordinal, over every node's dir that still has an index."""
    present: dict[int, int] = {}
    for where, info in inventory["members"].items():
        ordinal = int(where.rsplit("member-", 1)[1])
        if info.get("index"):
            present[ordinal] = present.get(ordinal, 0) + int(info["objects"])
    return present


def written_to(ledger: dict[str, Any]) -> dict[int, int]:
    written: dict[int, int] = {}
    for item in ledger["written"]:
        written[item["member"]] = written.get(item["member"], 0) + 1
    return written


def only_removed_touched(entries: Iterable[Entry], cluster: StorageCluster, removed: set[int],
                         inventory: dict[str, Any] | None = None,
                         ledger: dict[str, Any] | None = None,
                         name: str = "only_removed_touched") -> Verdict:
    """S1: every destructive action the implementation announced names a member being removed,
    and (given the inventory) no member that stays lost data it was written, announced or not."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    actions = destructive_events(entries, cluster)
    members = cluster.members_seen(entries)
    reads = frozenset({"events", "pods"})
    wrong = [e for e in actions if member_of(e, cluster) not in removed]
    if wrong:
        touched = sorted({member_of(e, cluster) for e in wrong})
        return Verdict(name, VIOLATED, f"{len(wrong)} destructive actions touched members "
                       f"{touched}, which were not being removed (removed: {sorted(removed)})",
                       wrong[:5], origin, subjects=len(members), reads=reads)
    if inventory is not None and ledger is not None:
        present = objects_on_disk(inventory)
        short = {m: (present.get(m, 0), n) for m, n in written_to(ledger).items()
                 if m not in removed and present.get(m, 0) < n}
        if short:
            detail = ", ".join(f"member {m}: {have} of {want} objects"
                               for m, (have, want) in sorted(short.items()))
            # Proven on disk, by the data probe: no recorded state is needed for it.
            return Verdict(name, VIOLATED, f"members that stay lost data ({detail}), with no "
                           "destructive action announced", actions[:5], origin,
                           subjects=len(short), reads=frozenset(), external=PROBE)
    summary = (f"{len(actions)} destructive actions, all on removed members {sorted(removed)}"
               if members else f"no member of storage cluster {cluster.name} was recorded")
    return Verdict(name, PASS, summary, actions[:5], origin, subjects=len(members),
                   reads=reads)


PROBE = "the data probe's inventory of each node's disk and its reads"


def data_kept(inventory: dict[str, Any], ledger: dict[str, Any], removed: set[int],
              evidence: list[Entry], origin: float, name: str = "data_kept") -> Verdict:
    """S2: every object written to a removed member is still in that member's node-local dir."""
    written = {m: n for m, n in written_to(ledger).items() if m in removed}
    reads: frozenset[str] = frozenset()  # the data probe's inventory, not the timeline
    if not written:
        return Verdict(name, PASS, f"nothing was written to the removed members "
                       f"{sorted(removed)}: the scenario cannot show their data was kept",
                       [], origin, subjects=0, reads=reads, external=PROBE)
    present = objects_on_disk(inventory)
    short = {m: (present.get(m, 0), count) for m, count in written.items()
             if present.get(m, 0) < count}
    if short:
        detail = ", ".join(f"member {m}: {have} of {want} objects" for m, (have, want)
                           in sorted(short.items()))
        return Verdict(name, VIOLATED, f"node-local data of removed members is gone ({detail})",
                       evidence, origin, subjects=len(written), reads=reads, external=PROBE)
    return Verdict(name, PASS, f"the data of removed members {sorted(removed)} is all there "
                   f"({sum(written.values())} objects)", [], origin, subjects=len(written),
                   reads=reads, external=PROBE)


def reads_clean(results: list[dict[str, Any]], ledger: dict[str, Any], removed: set[int],
                loss_allowed: bool, evidence: list[Entry], origin: float,
                name: str = "reads_clean") -> Verdict:
    """S3: each object reads back with its checksum, or a clean not-found where the mode lets
    the removed members' data go; never a server error."""
    member = {item["object"]: item["member"] for item in ledger["written"]}
    unread = set(member) - {r["object"] for r in results}
    reads: frozenset[str] = frozenset()  # the data probe's reads, not the timeline
    if unread:
        return Verdict(name, VIOLATED, f"{len(unread)} of {len(member)} objects written were "
                       f"not read back at all (e.g. {sorted(unread)[0]})", evidence, origin,
                       subjects=len(member), reads=reads, external=PROBE)
    errors = [r for r in results if r["status"] not in ("ok", "not_found")]
    lost = [r for r in results if r["status"] == "not_found"
            and not (loss_allowed and member.get(r["object"]) in removed)]
    if errors or lost:
        parts = []
        if errors:
            parts.append(f"{len(errors)} server errors (e.g. {errors[0]['object']}: "
                         f"{errors[0].get('detail', '')})")
        if lost:
            parts.append(f"{len(lost)} objects lost that the mode keeps (e.g. "
                         f"{lost[0]['object']})")
        return Verdict(name, VIOLATED, f"of {len(results)} objects read back: "
                       + "; ".join(parts), evidence, origin, subjects=len(results),
                       reads=reads, external=PROBE)
    ok = sum(1 for r in results if r["status"] == "ok")
    return Verdict(name, PASS, f"{ok} of {len(results)} objects read back intact, the rest "
                   "cleanly not found", [], origin, subjects=len(results), reads=reads,
                   external=PROBE)


def _revision(entry: Entry) -> int:
    """etcd's revision: one order across every resource (the recorder's order is per watch)."""
    return int(entry.rv) if entry.rv.isdigit() else 0


def shrank_after_done(entries: Iterable[Entry], cluster: StorageCluster, removed: set[int],
                      name: str = "shrank_after_done") -> Verdict:
    """S5: the workload drops each removed ordinal only after that member is recorded done."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({"statefulsets", cluster.resource, QUIET})
    for ordinal in sorted(removed, reverse=True):
        done = first(entries, Event(f"member {ordinal} of {cluster.name} finished its removal",
                                    lambda _e, s, o=ordinal: o in cluster.finished(s)))
        shrunk = first(entries, Event(
            f"{cluster.workload} shrank below {ordinal + 1} replicas",
            lambda _e, s, o=ordinal: cluster.workload_replicas(s) is not None
            and cluster.workload_replicas(s) <= o))
        if shrunk is None:
            return Verdict(name, VIOLATED, f"{cluster.workload} never shrank below "
                           f"{ordinal + 1} replicas", [], origin, subjects=len(removed),
                           by_absence=True, reads=reads)
        if done is None or _revision(shrunk) < _revision(done):
            when = "never" if done is None else "only after it"
            return Verdict(name, VIOLATED, f"{cluster.workload} shrank below {ordinal + 1} "
                           f"replicas while member {ordinal} had not finished its removal "
                           f"({when} finished)", [e for e in (shrunk, done) if e], origin,
                           subjects=len(removed), by_absence=True, reads=reads)
    return Verdict(name, PASS, f"the workload shrank only after members {sorted(removed)} "
                   "were done", [], origin, subjects=len(removed), reads=reads)


def never_shrank(entries: Iterable[Entry], cluster: StorageCluster,
                 name: str = "never_shrank") -> Verdict:
    """S6: the workload's replicas never go down."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    highest: Entry | None = None
    for entry in entries:
        if entry.kind != WATCH or entry.resource != "statefulsets" or \
                entry.namespace != cluster.namespace or entry.name != cluster.workload:
            continue
        replicas = get_path(entry.object or {}, "spec.replicas")
        if replicas is None:
            continue
        before = get_path(highest.object or {}, "spec.replicas") if highest else None
        if before is not None and replicas < before:
            return Verdict(name, VIOLATED, f"statefulset/{cluster.namespace}/{cluster.workload} "
                           f"shrank from {before} to {replicas} replicas", [highest, entry],
                           origin, subjects=1, reads=frozenset({"statefulsets"}))
        if before is None or replicas > before:
            highest = entry
    if highest is None:
        return Verdict(name, UNKNOWN, f"statefulset/{cluster.namespace}/{cluster.workload} was "
                       "never recorded", [], origin, subjects=0,
                       reads=frozenset({"statefulsets"}))
    return Verdict(name, PASS, f"{cluster.workload} never shrank", [], origin, subjects=1,
                   reads=frozenset({"statefulsets"}))


def save_json(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1))
    return path
