"""S: stateful storage scale-down (docs/properties.md), over the storage_cluster concept and, in
its Kubernetes form, the real StatefulSet controller's retained claims."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from aftershock import checks
from aftershock.checks.temporal import Event, first
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts import get_path
from aftershock.concepts.storage import StorageCluster
from aftershock.history import Change, Entry, History
from aftershock.history.names import APP_STATES, AUDIT_LOG, QUIET
from aftershock.history.state import State
from aftershock.properties.base import Params, check, prop

Recorded = History | Iterable


def destructive_events(history: Recorded, cluster: StorageCluster) -> list[Entry]:
    """Recorded Events announcing a destructive action on one of the cluster's members."""
    reasons = set(cluster.mapping.get("destructive_reasons") or ())
    found, seen = [], set()
    for change in History.of(history).changes_of("events", cluster.namespace):
        if change.after is None or change.uid in seen:
            continue
        involved = change.after.get("involvedObject") or change.after.get("regarding") or {}
        if change.after.get("reason") in reasons and \
                cluster.ordinal(involved.get("name", "")) is not None:
            seen.add(change.uid)
            found.append(change.entry)
    return found


def member_of(entry: Entry, cluster: StorageCluster) -> int | None:
    obj = entry.object or {}
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    return cluster.ordinal(involved.get("name", ""))


def objects_on_disk(inventory: dict[str, Any],
                    ledger: dict[str, Any] | None = None) -> dict[int, int]:
    """Objects per member ordinal still on disk. An inventory of member directories counts
    each one that still has an index; an inventory of nodes (what each node's disk keeps)
    counts each object of the ledger found on the node it was written to."""
    present: dict[int, int] = {}
    if "nodes" in inventory:
        for item in (ledger or {}).get("written", []):
            if item["object"] in _kept_on(inventory, item):
                present[item["member"]] = present.get(item["member"], 0) + 1
        return present
    for where, info in inventory["members"].items():
        ordinal = int(where.rsplit("member-", 1)[1])
        if info.get("index"):
            present[ordinal] = present.get(ordinal, 0) + int(info["objects"])
    return present


def _kept_on(inventory: dict[str, Any], item: dict[str, Any]) -> set[str]:
    return set((inventory["nodes"].get(item.get("node") or "") or {}).get("objects") or ())


def gone_from_disk(inventory: dict[str, Any], ledger: dict[str, Any],
                   members: set[int]) -> str:
    """Which objects of ``members`` a node inventory no longer has, by member and node, for a
    verdict's summary ("" for an inventory of member directories, which names no object)."""
    if "nodes" not in inventory:
        return ""
    lost: dict[tuple[int, str], list[str]] = {}
    for item in ledger.get("written", []):
        if item["member"] in members and item["object"] not in _kept_on(inventory, item):
            lost.setdefault((item["member"], item.get("node") or "?"), []).append(
                item["object"])
    return _by_member(lost)


def _by_member(lost: dict[tuple[int, str], list[str]]) -> str:
    return "; ".join(f"member {m} (written on node/{node}): {', '.join(sorted(names)[:8])}"
                     + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                     for (m, node), names in sorted(lost.items()))


def written_to(ledger: dict[str, Any]) -> dict[int, int]:
    written: dict[int, int] = {}
    for item in ledger["written"]:
        written[item["member"]] = written.get(item["member"], 0) + 1
    return written


def only_removed_touched(history: Recorded, cluster: StorageCluster, removed: set[int],
                         inventory: dict[str, Any] | None = None,
                         ledger: dict[str, Any] | None = None,
                         name: str = "only_removed_touched") -> Verdict:
    """S1: every destructive action the implementation announced names a member being removed,
    and (given the inventory) no member that stays lost data it was written, announced or not."""
    history = History.of(history)
    origin = history.origin
    actions = destructive_events(history, cluster)
    members = cluster.members_seen(history)
    reads = frozenset({"events", "pods"})
    wrong = [e for e in actions if member_of(e, cluster) not in removed]
    if wrong:
        touched = sorted({member_of(e, cluster) for e in wrong})
        return Verdict(name, VIOLATED, f"{len(wrong)} destructive actions touched members "
                       f"{touched}, which were not being removed (removed: {sorted(removed)})",
                       wrong[:5], origin, subjects=len(members), reads=reads)
    if inventory is not None and ledger is not None:
        present = objects_on_disk(inventory, ledger)
        short = {m: (present.get(m, 0), n) for m, n in written_to(ledger).items()
                 if m not in removed and present.get(m, 0) < n}
        if short:
            detail = ", ".join(f"member {m}: {have} of {want} objects"
                               for m, (have, want) in sorted(short.items()))
            which = gone_from_disk(inventory, ledger, set(short))
            detail += f"; gone: {which}" if which else ""
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
              evidence: list[Entry], origin: float, loss_allowed: bool = False,
              name: str = "data_kept") -> Verdict:
    """S2: every object written to a removed member is still on a node's disk (left where it
    was, or moved to a member that stays), unless the mode lets removed members' data go."""
    written = {m: n for m, n in written_to(ledger).items() if m in removed}
    reads: frozenset[str] = frozenset()  # the data probe's inventory, not the timeline
    if not written:
        return Verdict(name, PASS, f"nothing was written to the removed members "
                       f"{sorted(removed)}: the scenario cannot show their data was kept",
                       [], origin, subjects=0, reads=reads, external=PROBE)
    kept = kept_anywhere(inventory, ledger, removed)
    if loss_allowed:
        have, want = sum(kept.values()), sum(written.values())
        return Verdict(name, PASS, f"{have} of the {want} objects of removed members "
                       f"{sorted(removed)} are still on disk; the mode lets the rest go", [],
                       origin, subjects=len(written), reads=reads, external=PROBE)
    short = {m: (kept.get(m, 0), count) for m, count in written.items()
             if kept.get(m, 0) < count}
    if short:
        detail = ", ".join(f"member {m}: {have} of {want} objects" for m, (have, want)
                           in sorted(short.items()))
        which = gone_everywhere(inventory, ledger, set(short))
        detail += f"; on no node's disk: {which}" if which else ""
        return Verdict(name, VIOLATED, f"data of removed members is gone ({detail})",
                       evidence, origin, subjects=len(written), reads=reads, external=PROBE)
    return Verdict(name, PASS, f"the data of removed members {sorted(removed)} is all there "
                   f"({sum(written.values())} objects)", [], origin, subjects=len(written),
                   reads=reads, external=PROBE)


def kept_anywhere(inventory: dict[str, Any], ledger: dict[str, Any],
                  removed: set[int]) -> dict[int, int]:
    """Objects of each removed member still on some node's disk. An inventory of nodes names
    them; one of member directories counts them: what a removed member's own directory holds,
    and what members that stay hold beyond what was written to them (moved there)."""
    kept: dict[int, int] = {}
    if "nodes" in inventory:
        everywhere = {o for node in inventory["nodes"].values() for o in node.get("objects", ())}
        for item in ledger.get("written", []):
            if item["member"] in removed and item["object"] in everywhere:
                kept[item["member"]] = kept.get(item["member"], 0) + 1
        return kept
    present, written = objects_on_disk(inventory), written_to(ledger)
    moved = sum(max(0, have - written.get(m, 0)) for m, have in present.items()
                if m not in removed)
    for member in sorted(m for m in written if m in removed):
        own = min(present.get(member, 0), written[member])
        extra = min(moved, written[member] - own)
        moved -= extra
        kept[member] = own + extra
    return kept


def gone_everywhere(inventory: dict[str, Any], ledger: dict[str, Any], members: set[int]) -> str:
    """The objects of ``members`` on no node's disk, by member and the node they were written
    on ("" for an inventory of member directories, which names no object)."""
    if "nodes" not in inventory:
        return ""
    everywhere = {o for node in inventory["nodes"].values() for o in node.get("objects", ())}
    lost: dict[tuple[int, str], list[str]] = {}
    for item in ledger.get("written", []):
        if item["member"] in members and item["object"] not in everywhere:
            lost.setdefault((item["member"], item.get("node") or "?"), []).append(
                item["object"])
    return _by_member(lost)


def reads_clean(results: list[dict[str, Any]], ledger: dict[str, Any], removed: set[int],
                loss_allowed: bool, evidence: list[Entry], origin: float,
                name: str = "reads_clean", inventory: dict[str, Any] | None = None) -> Verdict:
    """S3: each object reads back with its checksum, or a clean not-found where the mode lets
    the removed members' data go; never a server error. Only what the storage system answered
    is judged: a read that failed in transport (``error_kind: transport``: refused, timed out,
    reset, no such host; the probe could not reach a node, say a drained one) is no answer,
    and neither is an object the probe said nothing of. Without the answers, UNKNOWN, naming
    where the probe could not reach."""
    member = {item["object"]: item["member"] for item in ledger["written"]}
    unreached = [r for r in results if r.get("error_kind") == TRANSPORT]
    answered = [r for r in results if r.get("error_kind") != TRANSPORT]
    unread = set(member) - {r["object"] for r in results}
    reads: frozenset[str] = frozenset()  # the data probe's reads, not the timeline
    errors = [r for r in answered if r["status"] not in ("ok", "not_found")]
    lost = [r for r in answered if r["status"] == "not_found"
            and not (loss_allowed and member.get(r["object"]) in removed)]
    if errors or lost:
        parts = []
        if errors:
            parts.append(f"{len(errors)} server errors (e.g. {errors[0]['object']}: "
                         f"{errors[0].get('detail', '')})")
        if lost:
            parts.append(f"{len(lost)} objects lost that the mode keeps: "
                         f"{_where([r['object'] for r in lost], ledger, inventory)}")
        return Verdict(name, VIOLATED, f"of {len(answered)} objects read back: "
                       + "; ".join(parts), evidence, origin,
                       subjects=len(answered), reads=reads, external=PROBE,
                       found=_each([*errors, *lost], ledger, inventory))
    ok = sum(1 for r in answered if r["status"] == "ok")
    summary = f"{ok} of {len(answered)} objects read back intact, the rest cleanly not found"
    if unreached:
        return Verdict(name, UNKNOWN, f"{_unreached(unreached)}: no answer from the storage "
                       f"system for them; {summary}", [], origin, subjects=len(answered),
                       reads=reads, external=PROBE)
    if unread:
        return Verdict(name, UNKNOWN, f"the data probe gave no answer for {len(unread)} of "
                       f"{len(member)} objects written (e.g. {sorted(unread)[0]}); {summary}",
                       [], origin, subjects=len(answered), reads=reads, external=PROBE)
    return Verdict(name, PASS, summary, [], origin, subjects=len(answered), reads=reads,
                   external=PROBE)


TRANSPORT = "transport"  # a probe's read that reached no answer (`error_kind`)


def _each(results: list[dict[str, Any]], ledger: dict[str, Any],
          inventory: dict[str, Any] | None) -> tuple[str, ...]:
    """Each object read wrong, one line: what the read got, the member and node it was written
    to, and the nodes whose disks keep it."""
    written = {item["object"]: item for item in ledger["written"]}
    kept = _kept(inventory)
    lines = []
    for result in sorted(results, key=lambda r: _natural_key(r["object"])):
        item = written.get(result["object"], {})
        got = "not found" if result["status"] == "not_found" else \
            f"{result['status']}: {result.get('detail', '')}"
        disks = ", ".join(f"node/{n}" for n in kept.get(result["object"], [])) or \
            ("no node" if inventory is not None else "not looked at")
        lines.append(f"{result['object']}: {got}; written to member {item.get('member')} on "
                     f"node/{item.get('node')}; kept on the disk of {disks}")
    return tuple(lines)


def _natural_key(name: str) -> tuple[str, int]:
    head, _, tail = name.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (name, -1)


def _kept(inventory: dict[str, Any] | None) -> dict[str, list[str]]:
    """Object → the nodes whose disks keep it (the data probe's inventory)."""
    kept: dict[str, list[str]] = {}
    for node, disk in sorted(((inventory or {}).get("nodes") or {}).items()):
        for name in disk.get("objects") or []:
            kept.setdefault(name, []).append(node)
    return kept


def _where(objects: list[str], ledger: dict[str, Any], inventory: dict[str, Any] | None) -> str:
    """Objects as the member and node they were written to, and where the nodes' disks keep
    them (the data probe's inventory): a read that found nothing of an object its node's disk
    still holds is the storage system not serving it."""
    written = {item["object"]: item for item in ledger["written"]}
    groups: dict[tuple[Any, Any], list[str]] = {}
    for name in objects:
        item = written.get(name, {})
        groups.setdefault((item.get("member"), item.get("node")), []).append(name)
    kept = _kept(inventory)
    parts = []
    for (member, node), names in sorted(groups.items(), key=str):
        disks = Counter(place for name in names for place in kept.get(name, []))
        found = ("; the nodes' disks keep " + ", ".join(
            f"{count} on node/{place}" for place, count in sorted(disks.items()))
                 if disks else "; on no node's disk" if inventory is not None else "")
        parts.append(f"{len(names)} written to member {member} on node/{node}{found} "
                     f"(e.g. {names[0]})")
    return "; ".join(parts)


def _unreached(results: list[dict[str, Any]]) -> str:
    """Where the probe could not reach, as kubectl names a node (else the address it tried),
    with how many objects and one example."""
    where: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        place = (f"node/{result['node']}" if result.get("node") else
                 result.get("address") or "the storage system")
        where.setdefault(place, []).append(result)
    places = ", ".join(f"{place} ({len(found)} objects)" for place, found in sorted(where.items()))
    first = results[0]
    return (f"the data probe could not reach {places} (e.g. {first['object']}: "
            f"{first.get('detail', '')})")


def shrank_after_done(history: Recorded, cluster: StorageCluster, removed: set[int],
                      name: str = "shrank_after_done", since: float | None = None) -> Verdict:
    """S5: the workload drops each removed ordinal only after that member is recorded done
    (the cluster's order)."""
    history = History.of(history)
    if cluster.from_app:
        return _shrank_after_app_done(history, cluster, removed, name, since)
    origin = history.origin
    reads = frozenset({"statefulsets", cluster.resource, QUIET})
    if not cluster.mapping.get("terminal_path"):
        return Verdict(name, UNKNOWN, f"the profile maps no state in which a member's removal "
                       f"has finished (storage_cluster.terminal_path): nothing recorded says "
                       f"when members {sorted(removed)} were done", [], origin, subjects=0,
                       reads=reads)
    for ordinal in sorted(removed, reverse=True):
        done = first(history, Event(f"member {ordinal} of {cluster.name} finished its removal",
                                    lambda _c, s, o=ordinal: o in cluster.finished(s),
                                    frozenset({cluster.resource})))
        shrunk = _shrink(history, cluster, ordinal)
        if shrunk is None:
            return Verdict(name, VIOLATED, f"{cluster.workload} never shrank below "
                           f"{ordinal + 1} replicas", [], origin, subjects=len(removed),
                           by_absence=True, reads=reads)
        if done is None or shrunk.order < done.order:
            when = "never" if done is None else "only after it"
            return Verdict(name, VIOLATED, f"{cluster.workload} shrank below {ordinal + 1} "
                           f"replicas while member {ordinal} had not finished its removal "
                           f"({when} finished)", [c.entry for c in (shrunk, done) if c], origin,
                           subjects=len(removed), by_absence=True, reads=reads)
    return Verdict(name, PASS, f"the workload shrank only after members {sorted(removed)} "
                   "were done", [], origin, subjects=len(removed), reads=reads)


def _shrank_after_app_done(history: History, cluster: StorageCluster, removed: set[int],
                           name: str, since: float | None) -> Verdict:
    """S5 where the application says when a member is done (its own state, read on a schedule:
    each read asked and answered at moments of the nodes' clock): the workload's shrink, when
    the API server wrote it, against the reads. When is the second its managedFields give,
    narrowed by the audit log to the writes of the workload's spec in that second. A read
    answered before the shrink saying the member was done, and the shrink was after; a read
    asked after it saying it was not, and it was before (the witness: the shrink and that
    read); a read whose asking and answer straddle the shrink cannot order them."""
    origin, offset = history.origin, history.offset
    reads = frozenset({"statefulsets", APP_STATES, QUIET, AUDIT_LOG})
    said = [(read, cluster.finished(state))
            for read, state in _app_reads(history, cluster)]
    for ordinal in sorted(removed, reverse=True):
        shrunk = _shrink(history, cluster, ordinal)
        if shrunk is None:
            return Verdict(name, VIOLATED, f"{cluster.workload} never shrank below "
                           f"{ordinal + 1} replicas", [], origin, subjects=len(removed),
                           by_absence=True, reads=reads)
        at = shrunk.written
        if at != at:  # NaN: the API server's time of the write was not recorded
            return Verdict(name, UNKNOWN, f"when the API server wrote {cluster.workload}'s "
                           "shrink was not recorded", [shrunk.entry], origin, subjects=0,
                           reads=reads)
        low, high = _write_moments(history, cluster, at)
        when = _stamp(low) if low == high else f"{_stamp(low)} to {_stamp(high)}"
        done = next((r for r, finished in said if ordinal in finished), None)
        if done is not None and done.hi - offset < low:
            continue
        late = next((r for r, finished in said if r.lo - offset > high
                     and ordinal not in finished), None)
        if late is not None:
            return Verdict(name, VIOLATED, f"{cluster.workload} shrank below {ordinal + 1} "
                           f"replicas (written {when}) while member {ordinal} had not "
                           f"finished its removal: the application said so, asked at "
                           f"{_stamp(late.lo - offset)} (its version {late.entry.rv or '?'})",
                           [shrunk.entry, late.entry], origin, subjects=len(removed),
                           reads=reads)
        before = [r for r, _ in said if done is not None and r.hi < done.lo]
        why = (f"the shrink was written ({when}) between its read at "
               f"{_stamp(before[-1].hi - offset)} (member {ordinal} not done) and at "
               f"{_stamp(done.lo - offset)} (done)"
               if done is not None and before and done.lo - offset > high else
               f"it said member {ordinal} was done in a read asked at "
               f"{_stamp(done.lo - offset)} and answered at {_stamp(done.hi - offset)}, while "
               f"the shrink was being written ({when})" if done is not None else
               f"nothing it said after the shrink ({when}) tells whether member "
               f"{ordinal} was done")
        return Verdict(name, UNKNOWN, f"the application's reads cannot order member "
                       f"{ordinal}'s removal and {cluster.workload}'s shrink: {why}",
                       [c.entry for c in (shrunk, done) if c], origin, subjects=0, reads=reads)
    return Verdict(name, PASS, f"the workload shrank only after members {sorted(removed)} were "
                   "done, by what the application said of itself before each shrink", [],
                   origin, subjects=len(removed), reads=reads,
                   window=(since, history.end) if since is not None else None)


def _app_reads(history: History, cluster: StorageCluster) -> list[tuple[Change, State]]:
    """Each read of the application's own state, with what it said (a State holding it)."""
    found = []
    state = State()
    for read in history.reads:
        if read.key == (APP_STATES, cluster.namespace, cluster.name):
            state.put(read.key, read.after, read)
            held = State()
            held.put(read.key, read.after, read)
            found.append((read, held))
    return found


def _shrink(history: History, cluster: StorageCluster, ordinal: int) -> Change | None:
    """The change that took the workload below ``ordinal + 1`` replicas (None: none did)."""
    return first(history, Event(f"{cluster.workload} shrank below {ordinal + 1} replicas",
                                lambda _c, s: cluster.workload_replicas(s) is not None
                                and cluster.workload_replicas(s) <= ordinal,
                                frozenset({"statefulsets"})))


def _write_moments(history: History, cluster: StorageCluster,
                   second: float) -> tuple[float, float]:
    """When the shrink written in ``second`` (managedFields' whole second, wall clock) was
    written: from the first to the last write of the workload's spec the audit log has in that
    second (each received to completed), else the second itself."""
    offset = history.offset
    found = [a for a in history.actions if a.resource == "statefulsets"
             and a.namespace == cluster.namespace and a.name == cluster.workload
             and a.subresource != "status" and a.verb in ("patch", "update") and a.ok
             and second <= a.hi - offset < second + 1]
    if not found:
        return second, second + 1 - 1e-6
    return min(a.lo for a in found) - offset, max(a.hi for a in found) - offset


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%H:%M:%S.%f")[:-3]


def never_shrank(history: Recorded, cluster: StorageCluster,
                 name: str = "never_shrank") -> Verdict:
    """S6: the workload's replicas never go down."""
    history = History.of(history)
    origin = history.origin
    highest: Change | None = None
    for change in history.changes_of("statefulsets", cluster.namespace):
        if change.name != cluster.workload or change.after is None:
            continue
        replicas = get_path(change.after, "spec.replicas")
        if replicas is None:
            continue
        before = get_path(highest.after or {}, "spec.replicas") if highest else None
        if before is not None and replicas < before:
            return Verdict(name, VIOLATED, f"statefulset/{cluster.namespace}/{cluster.workload} "
                           f"shrank from {before} to {replicas} replicas",
                           [highest.entry, change.entry], origin, subjects=1,
                           reads=frozenset({"statefulsets"}))
        if before is None or replicas > before:
            highest = change
    if highest is None:
        return Verdict(name, UNKNOWN, f"statefulset/{cluster.namespace}/{cluster.workload} was "
                       "never recorded", [], origin, subjects=0,
                       reads=frozenset({"statefulsets"}))
    return Verdict(name, PASS, f"{cluster.workload} never shrank", [], origin, subjects=1,
                   reads=frozenset({"statefulsets"}))


def _cluster(p: Params) -> StorageCluster:
    return StorageCluster(**p["cluster"])


@check("only_removed_touched", "Destructive actions (decommission, maintenance, data wipe) "
       "touch only members being removed, and members that stay lose no data.")
def _only_removed_touched(history: History, p: Params) -> Verdict:
    return only_removed_touched(history, _cluster(p), set(p["removed"]),
                                      p.get("inventory"), p.get("ledger"))


@check("data_kept", "Every object written to a removed member is still on a node's disk (left "
       "where it was, or moved to a member that stays), unless the mode lets it go.")
def _data_kept(history: History, p: Params) -> Verdict:
    wipes = destructive_events(history, _cluster(p))
    return data_kept(p["inventory"], p["ledger"], set(p["removed"]), wipes,
                     history.origin, bool(p.get("loss_allowed", False)))


@check("reads_clean", "Every object written reads back with its checksum, or a clean not "
       "found where the mode allows loss; never a server error.")
def _reads_clean(history: History, p: Params) -> Verdict:
    wipes = destructive_events(history, _cluster(p))
    return reads_clean(p["results"], p["ledger"], set(p["removed"]), p["loss_allowed"],
                       wipes, history.origin, inventory=p.get("inventory"))


@check("shrank_after_done", "The workload drops a removed member only after that member "
       "finished its removal.", audit=True)
def _shrank_after_done(history: History, p: Params) -> Verdict:
    return shrank_after_done(history, _cluster(p), set(p["removed"]),
                             since=p.get("since"))


@check("never_shrank", "The storage cluster's workload never loses replicas.")
def _never_shrank(history: History, p: Params) -> Verdict:
    return never_shrank(history, _cluster(p))


def _claims(history: History, namespace: str) -> list[str]:
    return sorted({life.name for life in history.lives_of("persistentvolumeclaims", namespace)})


@check("claims_retained", "The claims of a StatefulSet's removed ordinals, and their volumes, "
       "are never deleted.")
def claims_retained(history: History, p: Params) -> Verdict:
    namespace, name = p["namespace"], p["name"]
    reads = frozenset({"statefulsets", "persistentvolumeclaims", "persistentvolumes"})
    lives = history.lives_of("statefulsets", namespace, name)
    statefulset = lives[-1].last.after if lives else None
    if statefulset is None:
        return Verdict("claims_retained", UNKNOWN, f"statefulset/{namespace}/{name} was not "
                       "recorded", [], history.origin, subjects=0, reads=reads)
    replicas = statefulset["spec"]["replicas"]
    removed = [c for c in _claims(history, namespace) if c.startswith(f"data-{name}-")
               and c.rsplit("-", 1)[1].isdigit() and int(c.rsplit("-", 1)[1]) >= replicas]
    volumes: dict[str, str] = {}

    def kept(s: State) -> bool:
        for claim in removed:
            pvc = s.get("persistentvolumeclaims", namespace, claim)
            if pvc is None:
                if claim in volumes:
                    return False
                continue
            volume = (pvc.get("spec") or {}).get("volumeName") or volumes.get(claim)
            if volume:
                volumes[claim] = volume
                if s.get("persistentvolumes", "", volume) is None:
                    return False
        return True

    verdict = checks.always(history, kept, f"claims {', '.join(removed)} and their volumes "
                            "exist", resources={"persistentvolumeclaims", "persistentvolumes"},
                            name="claims_retained")
    if verdict.status == VIOLATED:  # it remembers volumes seen earlier: judged by absence
        return Verdict(verdict.property, VIOLATED, verdict.summary, verdict.witness,
                       verdict.origin, subjects=len(removed), by_absence=True, reads=reads)
    unbound = [claim for claim in removed if claim not in volumes]
    if unbound or not removed:
        why = (f"claims {', '.join(unbound)} were never bound to a volume: nothing shows "
               "their volumes survived" if unbound else
               f"{name} had no claims above ordinal {replicas - 1} to judge")
        return Verdict("claims_retained", PASS, why, [], history.origin, subjects=0,
                       reads=reads)
    return Verdict("claims_retained", PASS, verdict.summary, [], history.origin,
                   subjects=len(removed), reads=reads)


@check("own_claim_kept", "A StatefulSet pod keeps its own claim, bound to one volume that "
       "still exists.")
def own_claim_kept(history: History, p: Params) -> Verdict:
    namespace, claim = p["namespace"], f"data-{p['pod']}"
    reads = frozenset({"persistentvolumeclaims", "persistentvolumes"})
    first_seen: dict[str, str] = {}

    def same(s: State) -> bool:
        pvc = s.get("persistentvolumeclaims", namespace, claim)
        if pvc is None:
            return not first_seen  # gone after it existed: lost
        volume = (pvc.get("spec") or {}).get("volumeName")
        if volume:
            first_seen.setdefault("volume", volume)
        return volume in (None, first_seen.get("volume"))

    verdict = checks.always(history, same, f"pvc/{namespace}/{claim} stays bound to "
                            "one volume", resources={"persistentvolumeclaims"},
                            name="own_claim_kept")
    if verdict.status == VIOLATED:  # it remembers the first volume: judged by absence
        return Verdict(verdict.property, VIOLATED, verdict.summary, verdict.witness,
                       verdict.origin, subjects=1, by_absence=True, reads=reads)
    volume = first_seen.get("volume")
    if volume is None:
        return Verdict("own_claim_kept", PASS, f"pvc/{namespace}/{claim} was never bound",
                       [], history.origin, subjects=0, reads=reads)
    volumes = history.lives_of("persistentvolumes", "", volume)
    if not volumes or volumes[-1].last.after is None:
        return Verdict("own_claim_kept", VIOLATED, f"pvc/{namespace}/{claim} has no volume "
                       f"left (bound to pv/{volume})", [], history.origin, subjects=1,
                       by_absence=True, reads=reads)
    return Verdict("own_claim_kept", PASS, f"{verdict.summary}: pv/{volume}", [],
                   history.origin, subjects=1, reads=reads)


CONCEPTS = ("storage_cluster", "stateful_set")
prop("S1", "Destructive actions (decommission, maintenance, data wipe) only touch members being "
     "removed.", ["only_removed_touched"], CONCEPTS, ("destructive_faults",))
prop("S2", "A removed member's data is not lost: it stays on its node's disk, or moves to a "
     "member that stays, unless the mode lets it go.", ["data_kept", "claims_retained"],
     CONCEPTS)
prop("S3", "Every object written before the fault reads back with its checksum, or a clean "
     "not found where the mode allows loss; never a server error.",
     ["reads_clean", "own_claim_kept"], CONCEPTS)
prop("S4", "Membership converges to the Ready members; a member that becomes Ready rejoins "
     "within T.", ["eventually"], CONCEPTS)
prop("S5", "The workload shrinks only after removed members reached their terminal state.",
     ["shrank_after_done"], CONCEPTS)
prop("S6", "Cordon without eviction never shrinks an autoscaled cluster.",
     ["never_shrank", "stays_for"], CONCEPTS, ("destructive_faults",))
