"""Fuzzing the judges: random histories with gaps, re-lists, recorder errors, anomalies and a
lagging audit log, judged by every registered check.

- No judge may answer PASS over a window with a gap (or an error) on what it reads, or with
  nothing matching to judge. The oracle is independent of the registry's rule: what each check
  reads is this file's own table, the window is the whole history (or, for the timed checks,
  from their start to the moment they say the condition held, or to their end), and what it
  judges is counted from the history itself (``SUBJECTS``).
- No PASS or VIOLATED may change when what the recorder did not see is filled in: each gap with
  changes that end in what its re-list found, a resource or an audit log it did not record with
  anything at all (``complete``). A verdict that a filling flips was a guess.

AFTERSHOCK_FUZZ=10000 runs 10,000 histories in each (the figure in the notes; `make test` runs
500 and 120). Each test runs alone (``-k``).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aftershock import properties
from aftershock.checks import PASS, VIOLATED
from aftershock.checks.verdict import describe
from aftershock.concepts.gang import Gang
from aftershock.concepts.gang_scheduler import PodGroup, Queue
from aftershock.concepts.records import NodeRecords
from aftershock.concepts.storage import StorageCluster
from aftershock.properties import Judgement
from aftershock.properties.context import Context
from aftershock.timeline.entry import (
    ANOMALY,
    AUDIT,
    AUDIT_SYNC,
    ERROR,
    FIELDS,
    GAP_END,
    GAP_START,
    MARK,
    WATCH,
    Entry,
)
from aftershock.timeline.state import State
from tests import histories as made
from tests.histories import NAMES, PODS
from tests.unit.concept_maps import GANG, RG, STORAGE

NS = "ns"
EXAMPLES = int(os.environ.get("AFTERSHOCK_FUZZ", "500"))
# Each history of the completions test is judged four times (as recorded, and three fillings).
COMPLETED = int(os.environ.get("AFTERSHOCK_FUZZ", "120"))
STATS: Counter[str] = Counter()
RECORDS = NodeRecords("noderecords", NS, "spec.index", "spec.node", "status.touched", 5.0, 1.0, 3)
CONTEXT = Context(NS, "fuzz", {"replica_group": RG, "gang": GANG, "storage_cluster": STORAGE},
                  {"drained node": "n1", "node of pod web-0": "n1"}).to_json()


def _object(resource: str, name: str, draw) -> dict:
    """One state of an object, drawn as the metamorphic fuzz draws it (its uid from its name)."""
    return made.make(resource, name, f"uid-{name}", draw)


@st.composite
def histories(draw, only: frozenset[str] | None = None) -> list[Entry]:
    """A history as the recorder writes one: while a resource's gap is open no change of it is
    recorded, and nothing of a resource (or of the audit log) it said it does not record.
    ``only``: the resources that change (by default a few drawn each time)."""
    entries: list[Entry] = []
    clock = [0.0]
    recorded, audited = set(NAMES), True
    gaps: set[str] = set()

    def add(kind: str, **fields) -> None:
        clock[0] += draw(st.sampled_from((0.0, 0.1, 1.0, 3.0)))
        entries.append(Entry(len(entries), clock[0], 1e9 + clock[0], kind, **fields))

    def relist(resource: str) -> None:
        # a re-list deletes only what the record had: an object it never had cannot be
        # missing from a list (one made and deleted within the gap leaves no trace)
        changes = [{"type": draw(st.sampled_from(("ADDED", "DELETED")))
                    if _recorded(entries, resource, n) else "ADDED",
                    "object": _object(resource, n, draw)}
                   for n in draw(st.sets(st.sampled_from(NAMES[resource])))]
        add(GAP_END, resource=resource, detail="re-listed", extra={"changes": changes})
        gaps.discard(resource)

    if draw(st.booleans()):
        recorded = draw(st.sets(st.sampled_from(sorted(NAMES)), min_size=1)) | (only or set())
        audited = draw(st.booleans())
        add(MARK, detail="recording", extra={"recording": {r: "v1" for r in recorded},
                                             "audit": audited})
    # A few resources each time, so that what a check reads changes often enough to judge.
    active = sorted(only or draw(st.sets(st.sampled_from(sorted(recorded)), min_size=1,
                                         max_size=3)))
    for _ in range(draw(st.integers(0, 25))):
        what = draw(st.sampled_from(("watch",) * 8 + ("gap", "gap", "error", "audit", "audit",
                                                       "sync", "missed")))
        resource = draw(st.sampled_from(active))
        name = draw(st.sampled_from(NAMES[resource]))
        if what == "watch" and resource in gaps:
            relist(resource)
        elif what == "watch":
            obj = _object(resource, name, draw)
            add(WATCH, resource=resource, namespace=obj["metadata"]["namespace"], name=name,
                uid=f"uid-{name}", rv=str(len(entries) + 1),
                type=draw(st.sampled_from(("ADDED", "MODIFIED", "DELETED"))), object=obj)
        elif what == "gap" and resource not in gaps:
            add(GAP_START, resource=resource, detail="410 Gone")
            gaps.add(resource)
        elif what == "missed" and resource not in gaps and entries and \
                _recorded(entries, resource, name):
            # a deletion the watch never delivered, closed by a catch-up's list: a gap from
            # a moment before (its last change) whose changes delete it (a catch-up names
            # only an object the record has: one it never had cannot be missing from a list)
            since = draw(st.sampled_from([e.mono for e in entries]))
            add(GAP_START, resource=resource, detail="the watch missed a deletion",
                extra={"since": since})
            add(GAP_END, resource=resource, detail="caught up", extra={"changes": [
                {"type": "DELETED", "object": _object(resource, name, draw)}]})
        elif what == "error":
            add(draw(st.sampled_from((ERROR, ANOMALY))), resource=resource, detail="broke")
        elif what == "audit" and audited:
            add(AUDIT, **_audit(draw))
        elif what == "sync":
            add(AUDIT_SYNC, extra={"caught_up": draw(st.booleans())})
    return entries


def _recorded(entries: list[Entry], resource: str, name: str) -> bool:
    """Whether the record has that object now (its last change, a watch's or a list's, left
    it there)."""
    state = State()
    for entry in entries:
        state.apply(entry)
    return any(key[2] == name for key in state.of(resource))


def _audit(draw) -> dict:
    return {"resource": "pods", "namespace": NS, "name": draw(st.sampled_from(PODS)),
            "verb": draw(st.sampled_from(("create", "delete"))), "code": 201,
            "actor": draw(st.sampled_from(("ctl", "other"))),
            "extra": {"labels": {"app": "web", "app.kubernetes.io/name": "web"}}}


# --- completions: what the recorded history could have been -----------------------------


def _blind_spans(entries: list[Entry]) -> list[tuple[str, int, int]]:
    """(resource, first, last): fillers go after the entries at positions first..last (last
    may be the end) in every stretch the recorder did not see:
    a gap from its start to its re-list (or past the end) the audit log does not vouch for, a
    resource or the audit log it does not record (the whole history), the audit log after its
    last caught-up reading when a later reading had not caught up."""
    spans, opened = [], {}
    recording = next((e for e in entries if e.kind == MARK and "recording" in e.extra), None)
    vouched = _vouched(entries)  # the audit log says nothing was written in those
    for pos, entry in enumerate(entries):
        if entry.kind == GAP_START:
            opened.setdefault(entry.resource, pos)
        elif entry.kind == GAP_END and entry.resource in opened:
            first = opened.pop(entry.resource)
            if entry.seq not in vouched:
                spans.append((entry.resource, first, pos - 1))
    spans += [(resource, pos, len(entries)) for resource, pos in opened.items()]
    if recording is not None:
        spans += [(r, 0, len(entries)) for r in NAMES if r not in recording.extra["recording"]]
        if not recording.extra.get("audit", True):
            spans.append(("audit", 0, len(entries)))
    syncs = [pos for pos, e in enumerate(entries) if e.kind == AUDIT_SYNC]
    if syncs and not entries[syncs[-1]].extra["caught_up"]:
        trusted = [pos for pos in syncs if entries[pos].extra["caught_up"]]
        spans.append(("audit", trusted[-1] if trusted else 0, len(entries)))
    return spans


def _filler(resource: str, draw) -> dict:
    if resource == "audit":
        return {"kind": AUDIT, **_audit(draw)}
    name = draw(st.sampled_from(NAMES[resource]))
    obj = _object(resource, name, draw)
    return {"kind": WATCH, "resource": resource, "namespace": obj["metadata"]["namespace"],
            "name": name, "uid": f"uid-{name}",
            "type": draw(st.sampled_from(("ADDED", "MODIFIED", "DELETED"))), "object": obj}


def _closing(resource: str, had: dict, relisted: dict) -> list[dict]:
    """The changes that take ``had`` (the filled-in objects) to what the re-list found."""
    out = [{"kind": WATCH, "resource": resource, "namespace": key[1], "name": key[2],
            "uid": f"uid-{key[2]}", "type": "DELETED", "object": had[key]}
           for key in had if key not in relisted]
    out += [{"kind": WATCH, "resource": resource, "namespace": key[1], "name": key[2],
             "uid": f"uid-{key[2]}", "type": "MODIFIED", "object": obj}
            for key, obj in relisted.items() if had.get(key) != obj]
    return out


def complete(entries: list[Entry], draw, early: bool = False) -> list[Entry]:
    """One complete history the recorded one could stand for: every stretch the recorder did
    not see filled with changes drawn at random, and no gap, error, anomaly or lagging audit log
    left. A gap's filling ends in the state its re-list found; that state may also be reached
    at once when the gap opens (everything changed early: ``early`` does that for every gap,
    and fills in nothing else) or only at its re-list (late)."""
    relisted, recorded = {}, State()  # what each re-list found, by the position of its end
    for pos, entry in enumerate(entries):
        recorded.apply(entry)
        if entry.kind == GAP_END:
            relisted[pos] = {k: o for k, o in recorded.objects.items() if k[0] == entry.resource}
    after: dict[int, list] = {}  # fillers placed after the entry at this position
    for resource, first, last in _blind_spans(entries):
        closed_at = last + 1 if last + 1 in relisted and last < len(entries) else None
        if closed_at is not None and (early or draw(st.booleans())):
            at = first if early else draw(st.integers(first, last))
            after.setdefault(at, []).append(("close", closed_at))
        for _ in range(0 if early else draw(st.integers(0, 3))):
            after.setdefault(draw(st.integers(first, last)), []).append(
                _filler(resource, draw))
    out: list[Entry] = []
    truth = State()  # the filled-in history so far

    def emit(kind: str, mono: float, **fields) -> None:
        entry = Entry(len(out), mono, 1e9 + mono, kind, rv=str(len(out) + 1), **fields)
        truth.apply(entry)
        out.append(entry)

    def close(pos: int, mono: float) -> None:
        resource = entries[pos].resource
        had = {k: o for k, o in truth.objects.items() if k[0] == resource}
        for fields in _closing(resource, had, relisted[pos]):
            emit(fields.pop("kind"), mono, **fields)

    for pos, entry in enumerate(entries):
        if entry.kind == GAP_END:
            close(pos, entry.mono)
        elif entry.kind == AUDIT_SYNC:
            emit(AUDIT_SYNC, entry.mono, extra={"caught_up": True})
        elif entry.kind in (WATCH, AUDIT, MARK):
            fields = {f: getattr(entry, f) for f in FIELDS[4:] if f != "rv"}
            emit(entry.kind, entry.mono, **fields)
        for filler in after.get(pos, []):
            if isinstance(filler, tuple):
                close(filler[1], entry.mono)
            else:
                emit(filler.pop("kind"), entry.mono, **filler)
    for filler in after.get(len(entries), []):
        emit(filler.pop("kind"), (out[-1].mono if out else 0.0) + 1.0, **filler)
    return out


def _gang() -> dict:
    return asdict(Gang("train", NS, GANG))


def _storage() -> dict:
    return asdict(StorageCluster("data", NS, STORAGE))


LEDGER = {"written": [{"object": "o", "member": 2}]}
WEB_0 = {"resource": "pods", "namespace": NS, "name": "web-0", "shown": "pod/web-0"}
N1 = {"resource": "nodes", "namespace": "", "name": "n1", "shown": "node/n1"}
POD_GROUP = asdict(PodGroup("web", NS, {
    "scheduler_name": "s", "min_member_path": "spec.minMember", "pod_selector": {"app": "{name}"},
    "resource": {"group": "g", "version": "v1", "plural": "podgroups", "kind": "PodGroup"}}))
QUEUE = asdict(Queue("team", NS, {**POD_GROUP["mapping"], "queue": {
    "resource": {"group": "g", "version": "v1", "plural": "queues", "kind": "Queue"},
    "manifest": "q.yaml", "cpu_limit_path": "spec.limits.cpu", "group_queue_path": "spec.queue",
    "default": "team"}}))
# check: (params, what it reads: its own table, not the check's word)
JUDGEMENTS = {
    "all_or_nothing": ({"group": POD_GROUP, "window": 2}, {"pods", "podgroups"}),
    "bound_onto_fit_nodes": ({"group": POD_GROUP, "grace": 1.0}, {"pods", "nodes"}),
    "bound_when_room": ({"group": POD_GROUP, "within": 2}, {"pods", "nodes", "podgroups"}),
    "holds_no_device": ({"group": POD_GROUP, "within": 2},
                        {"pods", "resourceclaims", "podgroups"}),
    "evicted_whole": ({"group": POD_GROUP, "actor": "ctl", "window": 2}, {"pods", "audit"}),
    "preemption_paid_off": ({"group": POD_GROUP, "preemptor": "db-0", "actor": "ctl",
                             "within": 2}, {"pods", "audit"}),
    "kept_not_evicted": ({"group": POD_GROUP, "actor": "ctl"}, {"pods", "podgroups", "audit"}),
    "within_queue_limit": ({"queue": QUEUE}, {"pods", "podgroups", "queues"}),
    "never_more_than": ({"namespace": NS, "selector": {"app": "web"}, "limit": 2}, {"pods"}),
    "always": ({"condition": "at most 2 pods of web are live", "context": CONTEXT}, {"pods"}),
    "eventually": ({"condition": "2 pods of web are Running", "context": CONTEXT, "start": 5,
                    "within": 30, "now": 100}, {"pods"}),
    "stays_for": ({"condition": "node/n1 is Ready", "context": CONTEXT, "start": 5,
                   "duration": 10, "now": 100}, {"nodes"}),
    "happened_before": ({"first": "a pod of web was created", "second": "pod/db-0 was created",
                         "context": CONTEXT}, {"pods"}),
    "no_earlier_than": ({"event": "a pod of web was created", "after": "node/n1 was created",
                         "delay": 1, "context": CONTEXT}, {"pods", "nodes"}),
    "exactly": ({"event": "a pod of the replica group web was marked for deletion", "count": 1,
                 "context": CONTEXT}, {"pods"}),
    "deleted_by": ({"namespace": NS, "selector": {"app": "web"}, "actor": "ctl", "exact": True,
                    "who": "ctl", "what": "web"}, {"pods", "audit"}),
    "created_by": ({"namespace": NS, "selector": {"app": "web"}, "count": 1, "actor": "ctl",
                    "exact": True, "who": "ctl", "what": "web"}, {"pods", "audit"}),
    "deleted_count": ({"namespace": NS, "selector": {"app": "web"}, "count": 1, "actor": "ctl",
                       "exact": True, "who": "ctl", "what": "web"}, {"pods", "audit"}),
    "admitted": ({"namespace": NS}, {"audit"}),
    "honest_transition": ({"resource": "nodes", "namespace": "", "name": "n1",
                           "condition": "Ready"}, {"nodes"}),
    "termination_timed": ({"gang": _gang(), "group": 0, "delay": 1, "latency": 5,
                           "actor": "ctl"}, {"gangs", "pods", "audit"}),
    "recycled_after_delay": ({"gang": asdict(Gang("web", NS, GANG)), "delay": 1,
                              "actor": "ctl"}, {"gangs", "pods", "audit"}),
    "at_most_terminations": ({"gang": asdict(Gang("web", NS, GANG)), "limit": 1,
                              "actor": "ctl"}, {"pods", "audit"}),
    # a gang left to a gang scheduler to bind whole: an excess after a binding in part is
    # not judged
    "group_never_more_than": ({"gang": asdict(Gang("web", NS, {**GANG,
                                                              "binding": "all_or_nothing"})),
                               "group": 0, "limit": 2, "actor": "ctl"}, {"pods"}),
    # a gang of the web pods: their scheduled count rises and falls often enough to judge
    "regression_detected": ({"gang": asdict(Gang("web", NS, GANG)), "latency": 2, "now": 100},
                            {"gangs", "pods"}),
    "one_warning_per_drop": ({"gang": asdict(Gang("web", NS, GANG)), "group": 0},
                             {"pods", "events"}),
    "never_reclaimed_early": ({"records": asdict(RECORDS)}, {"nodes", "noderecords"}),
    "allocated_before_bind": ({"namespace": NS}, {"pods", "resourceclaims"}),
    "exclusive_devices": ({}, {"resourceclaims"}),
    "never_deallocated_in_use": ({}, {"resourceclaims"}),
    "nothing_from_gone_slices": ({"node": "n1"}, {"nodes", "resourceclaims", "resourceslices"}),
    "untainted_allocation": ({"namespace": NS}, {"resourceclaims", "resourceslices"}),
    "evicted_for_taint": ({"namespace": NS, "within": 2},
                          {"pods", "resourceclaims", "resourceslices"}),
    "shrank_after_done": ({"cluster": _storage(), "removed": [2]},
                          {"statefulsets", "storageclusters"}),
    "never_shrank": ({"cluster": _storage()}, {"statefulsets"}),
    "only_removed_touched": ({"cluster": _storage(), "removed": [2]}, {"events", "pods"}),
    "never_had": ({"object": WEB_0, "comparison": "status.phase == Running"}, {"pods"}),
    "kept": ({"object": WEB_0, "comparison": "status.phase != Running"}, {"pods"}),
    "matches_within": ({"object": WEB_0, "expected": {"status": {"phase": "Running"}},
                        "start": 5, "within": 30, "now": 100}, {"pods"}),
    "matches_for": ({"object": WEB_0, "expected": {"status": {"phase": "Running"}},
                     "start": 5, "duration": 30, "now": 100}, {"pods"}),
    "changed_at_most": ({"object": WEB_0, "limit": 2, "start": 5, "within": 30, "now": 100},
                        {"pods"}),
    "never_has_from": ({"object": WEB_0, "comparison": "status.phase == Running", "start": 5,
                        "now": 100, "until": {"object": N1, "comparison":
                                              'status.conditions[type=Ready].status == "False"'}},
                       {"pods", "nodes"}),
    "never_while": ({"object": WEB_0, "comparison": "status.phase == Running", "while": {
        "object": N1, "comparison": 'status.conditions[type=Ready].status == "False"'}},
        {"pods", "nodes"}),
    "claims_retained": ({"namespace": NS, "name": "data"},
                        {"statefulsets", "persistentvolumeclaims", "persistentvolumes"}),
    "own_claim_kept": ({"namespace": NS, "pod": "data-0"},
                       {"persistentvolumeclaims", "persistentvolumes"}),
    "data_kept": ({"cluster": _storage(), "removed": [2], "ledger": LEDGER,
                   "inventory": {"members": {}}}, set()),
    "reads_clean": ({"cluster": _storage(), "removed": [2], "ledger": LEDGER, "results": [],
                     "loss_allowed": True}, set()),
    "node_side_exclusive": ({"prepare_log": []}, set()),
    "node_state_exclusive": ({"node_state": []}, {"nodes"}),
    "ran_again": ({"node": "n1", "since": 3.0, "within": 5, "namespace": NS}, {"pods"}),
    "no_duplicate_devices": ({"node_state": []}, {"nodes"}),
    "unprepared_once_back": ({"node_state": [], "node": "n1", "back": 3.0, "within": 5},
                             {"nodes"}),
    "kept_while_used": ({"node_state": []}, {"nodes", "pods"}),
    "unprepared_once": ({"node_state": [], "downs": [], "within": 5}, {"nodes", "pods"}),
    "cdi_clean": ({"cdi": [], "node_state": [], "within": 5}, {"nodes", "resourceclaims"}),
    "kept_for_failed": ({"cdi": [], "node_state": [], "since": 3.0, "until": None,
                         "within": 5}, {"nodes", "resourceclaims"}),
    "slices_kept": ({"driver": "d", "since": 3.0}, {"resourceslices", "nodes"}),
    "pods_started": ({"namespace": NS, "since": 3.0, "within": 5}, {"pods"}),
    "registrations_live": ({"registry": [], "within": 5}, {"nodes"}),
    "sees_own_devices": ({"views": [{"pod": "web-0", "uid": "uid-web-0", "container": "main",
                                     "node": "n1", "lines": ["env D_DEVICE=a"],
                                     "complete": True}],
                          "driver": "d", "patterns": [{"env": "D_DEVICE", "device": "{value}"}],
                          "namespace": NS}, {"pods", "resourceclaims"}),
    "only_present_devices": ({"driver": "d", "per_node": 1}, {"resourceslices"}),
    "published_again": ({"driver": "d", "node": "n1", "since": 3.0, "back": 4.0, "within": 5},
                        {"resourceslices"}),
    "end_state_as_reference": ({"namespace": NS, "reference": {"pods": ["{}"]},
                                "masks": {"pods": ["metadata", "spec", "status"]}}, {"pods"}),
    "writes_as_reference": ({"actor": "ctl", "namespace": NS,
                             "expected": {"pods create": [1, 2]}}, {"pods", "audit"}),
    "no_error_storm": ({"actor": "ctl", "limit": 1}, {"audit"}),
}


def _window(check: str, params: dict, verdict, entries: list[Entry]) -> tuple[float, float]:
    end = entries[-1].mono if entries else 0.0
    if check in ("eventually", "matches_within"):
        return params["start"], (verdict.witness[0].mono if verdict.witness else params["start"])
    if check in ("stays_for", "matches_for"):
        return params["start"], params["start"] + params["duration"]
    if check == "changed_at_most":
        return params["start"], params["start"] + params["within"]
    if check == "never_has_from":
        return verdict.window
    if check == "published_again":
        return (entries[0].mono if entries else 0.0), params["back"] + params["within"]
    if check == "ran_again" and verdict.witness:
        # settled once the last of them ran again: what follows cannot undo it
        return (entries[0].mono if entries else 0.0), max(e.mono for e in verdict.witness)
    return (entries[0].mono if entries else 0.0), end


def _troubled(entries: list[Entry], reads: set[str], start: float, end: float) -> bool:
    """A gap (until its re-list, or for ever) or an error on ``reads`` touching the window."""
    opened: dict[str, float] = {}
    vouched = _vouched(entries)
    for entry in entries:
        if entry.resource not in reads:
            continue
        if entry.kind == GAP_START:
            opened.setdefault(entry.resource, entry.mono)
        elif entry.kind == GAP_END and entry.resource in opened:
            began = opened.pop(entry.resource)
            if began <= end and entry.mono > start and entry.seq not in vouched:
                return True
        elif entry.kind in (ERROR, ANOMALY) and start <= entry.mono <= end:
            return True
    if any(began <= end for began in opened.values()):
        return True
    if "audit" in reads:
        syncs = [e for e in entries if e.kind == AUDIT_SYNC]
        if syncs and not syncs[-1].extra["caught_up"]:
            return True
    return False


def _vouched(entries: list[Entry]) -> set[int]:
    """The re-lists (their seq) that close a gap the audit log vouches hid nothing: it found
    no difference, and the log, read whole (audited, its last reading caught up), has no write
    of the resource from a quarter second before the gap to one after it."""
    mark = next((e for e in entries if e.kind == MARK and "recording" in e.extra), None)
    if mark is not None and "audit" in mark.extra:
        audited = bool(mark.extra["audit"])
    else:
        audited = any(e.kind == AUDIT for e in entries)
    syncs = [e for e in entries if e.kind == AUDIT_SYNC]
    if not audited or (syncs and not syncs[-1].extra["caught_up"]):
        return set()
    found, opened = set(), {}
    for entry in entries:
        if entry.kind == GAP_START:
            opened.setdefault(entry.resource, entry.mono)
        elif entry.kind == GAP_END and entry.resource in opened:
            began = opened.pop(entry.resource)
            if not entry.extra.get("changes") and not any(
                    e.kind == AUDIT and e.resource == entry.resource and
                    began - 0.25 <= e.mono <= entry.mono + 0.25 for e in entries):
                found.add(entry.seq)
    return found


def _nothing(reads: set[str], entries: list[Entry], params: dict) -> bool:
    """Nothing of what it reads was ever recorded (external data: nothing in it)."""
    if not reads:
        return not (params.get("prepare_log") or params.get("results"))
    return not any((e.kind == WATCH and e.resource in reads) or
                   (e.kind == AUDIT and "audit" in reads and reads == {"audit"}) or
                   (e.kind == GAP_END and e.resource in reads and e.extra.get("changes"))
                   for e in entries)


WEB, TRAIN = ("pods", "web-"), ("gangs", "train")
# What each check judges, counted here from the history (not from the check's own count):
# (resource, name prefix) pairs; "audit" pairs name the actor; () is external data.
SUBJECTS: dict[str, tuple[tuple[str, str], ...]] = {
    "all_or_nothing": (WEB,), "bound_onto_fit_nodes": (WEB,), "bound_when_room": (WEB,),
    "holds_no_device": (WEB,),
    "evicted_whole": (("audit", "ctl"),), "kept_not_evicted": (WEB,),
    "preemption_paid_off": (("audit", "ctl"),),
    "within_queue_limit": (WEB,),
    "never_more_than": (WEB,), "always": (WEB,), "eventually": (WEB,),
    "stays_for": (("nodes", "n1"),), "happened_before": (WEB, ("pods", "db-0")),
    "no_earlier_than": (WEB,), "exactly": (WEB,), "deleted_by": (WEB,), "created_by": (WEB,),
    "deleted_count": (WEB,), "admitted": (("audit", ""),),
    "honest_transition": (("nodes", "n1"),),
    "termination_timed": (TRAIN,), "at_most_terminations": (WEB,),
    "recycled_after_delay": (WEB,),
    "group_never_more_than": (WEB,),
    "regression_detected": (("gangs", "web"),), "one_warning_per_drop": (WEB,),
    "never_reclaimed_early": (("noderecords", ""),), "allocated_before_bind": (("pods", ""),),
    "exclusive_devices": (("resourceclaims", ""),),
    "never_deallocated_in_use": (("resourceclaims", ""),),
    "nothing_from_gone_slices": (("resourceclaims", ""),),
    "untainted_allocation": (("resourceclaims", ""),),
    "evicted_for_taint": (("pods", ""),),
    "shrank_after_done": (("statefulsets", "data"),), "never_shrank": (("statefulsets", "data"),),
    "only_removed_touched": (("pods", "data-"),), "claims_retained": (("statefulsets", "data"),),
    "own_claim_kept": (("persistentvolumeclaims", "data-data-0"),),
    "data_kept": (), "reads_clean": (), "node_side_exclusive": (), "node_state_exclusive": (),
    "ran_again": (WEB, ("pods", "db-0"), ("pods", "data-")), "no_duplicate_devices": (),
    "unprepared_once_back": (), "kept_while_used": (), "unprepared_once": (), "cdi_clean": (),
    "kept_for_failed": (),
    "slices_kept": (("resourceslices", ""),), "pods_started": (("pods", ""),),
    "registrations_live": (),
    "sees_own_devices": (("pods", "web-0"),),
    "only_present_devices": (("resourceslices", ""),),
    "published_again": (("resourceslices", "n1-"),),
    "end_state_as_reference": (("pods", ""),), "writes_as_reference": (("audit", "ctl"),),
    "no_error_storm": (("audit", "ctl"),),
    "never_had": (("pods", "web-0"),), "kept": (("pods", "web-0"),),
    "matches_within": (("pods", "web-0"),), "matches_for": (("pods", "web-0"),),
    "changed_at_most": (("pods", "web-0"),), "never_has_from": (("pods", "web-0"),),
    "never_while": (("nodes", "n1"),),
}


def _subjects(check: str, entries: list[Entry], params: dict) -> bool:
    """Whether anything the check judges was ever recorded (external data: was given)."""
    wanted = SUBJECTS[check]
    if params.get("condition") == CONDITIONS["nodes"]:
        wanted = (("nodes", "n1"),)
    elif params.get("condition") == CONDITIONS["pods"]:
        wanted = (WEB,)
    if not wanted:
        return bool(JUDGEMENTS[check][0].get("ledger") or JUDGEMENTS[check][0].get("prepare_log"))
    for entry in entries:
        names = [(entry.resource, entry.name)] if entry.kind == WATCH else \
            [("audit", entry.actor)] if entry.kind == AUDIT else \
            [(entry.resource, (c["object"].get("metadata") or {}).get("name", ""))
             for c in entry.extra.get("changes") or []] if entry.kind == GAP_END else []
        if any(r == resource and n.startswith(prefix) for r, n in names
               for resource, prefix in wanted):
            return True
    return False


def _fuzz(body, examples: int = EXAMPLES, only: frozenset[str] | None = None) -> None:
    STATS.clear()
    run = settings(max_examples=examples, deadline=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(
        given(histories(only), st.data())(body))
    run()
    assert STATS["histories"] >= min(examples, 100), STATS
    print(f"fuzz: {dict(STATS)}")


TIMED = {"eventually": "within", "stays_for": "duration"}
CONDITIONS = {"nodes": "node/n1 is Ready", "pods": "2 pods of web are Running"}


def _params(check: str, entries: list[Entry], draw) -> dict:
    """The table's parameters; a timed check's window is drawn around what was recorded (a
    fixed one would seldom meet a gap), and its condition is about what was recorded."""
    params = JUDGEMENTS[check][0]
    if check not in TIMED or not entries:
        return params
    reads = next((r for r in CONDITIONS if any(e.resource == r for e in entries)), "pods")
    start = draw(st.sampled_from([e.mono for e in entries])) + draw(st.sampled_from((0, 0.5)))
    return {**params, "condition": CONDITIONS[reads], "start": start,
            TIMED[check]: draw(st.sampled_from((1, 5, 10)))}


def _judge(check: str, entries: list[Entry], params: dict | None = None):
    params = JUDGEMENTS[check][0] if params is None else params
    return properties.judge([check], Judgement(check, params), entries)


def test_no_judge_passes_over_a_gap_an_error_or_nothing():
    def body(entries: list[Entry], data) -> None:
        STATS["histories"] += 1
        for check, (_, reads) in JUDGEMENTS.items():
            params = _params(check, entries, data.draw)
            verdict = _judge(check, entries, params)
            STATS[verdict.status] += 1
            if verdict.status != PASS:
                continue
            if check in TIMED:
                reads = {"nodes" if params["condition"] == CONDITIONS["nodes"] else "pods"}
            start, end = _window(check, params, verdict, entries)
            assert not _troubled(entries, reads, start, end), (check, verdict.explain())
            assert not _nothing(reads, entries, params), (check, verdict.explain())
            assert _subjects(check, entries, params), (check, verdict.explain())
            assert verdict.subjects, (check, verdict.explain())
    _fuzz(body)
    assert STATS[PASS] and STATS["unknown"] and STATS["violated"], STATS


COMPLETIONS = 2


def test_no_verdict_changes_between_completions_of_a_history():
    """A PASS or a VIOLATED is earned when every history the recorded one could stand for
    (its gaps, unrecorded resources and unread audit log filled in) gets the same answer: a
    verdict that would flip with what the recorder did not see was a guess."""
    def body(entries: list[Entry], data) -> None:
        STATS["histories"] += 1
        for check in JUDGEMENTS:
            params = _params(check, entries, data.draw)
            verdict = _judge(check, entries, params)
            if verdict.status not in (PASS, VIOLATED):
                continue
            STATS[verdict.status] += 1
            for early in (True,) + (False,) * COMPLETIONS:
                filled = complete(entries, data.draw, early)
                other = _judge(check, filled, params).status
                flipped = {verdict.status, other} == {PASS, VIOLATED}
                assert not flipped, (check, verdict.explain(), other, _show(filled))
    _fuzz(body, COMPLETED)
    assert STATS[PASS] and STATS[VIOLATED], STATS


def _show(entries: list[Entry]) -> str:
    return "\n".join(describe(e) for e in entries)


def test_every_check_is_fuzzed():
    assert set(JUDGEMENTS) == set(properties.CHECKS)


WEB_DEPLOYMENT = {"resource": "deployments", "namespace": NS, "name": "web",
                  "shown": "deployment/web"}
COMPARED = ("status.readyReplicas < 1", "status.readyReplicas == 0",
            "status.readyReplicas >= 3", 'status.conditions[type=Available].status == "False"',
            'status.conditions[type=Available].status != "True"', "status.readyReplicas exists")


def test_never_had_and_kept_its_negation_always_agree():
    """'at no point did X have c' and 'every change of X kept not c' are one statement: over
    every history (omitted zero counters, absent list elements, gaps, missed deletions) they
    give the same answer, whatever the schema said of the field."""
    from aftershock.kube.comparison import Comparison

    def body(entries: list[Entry], data) -> None:
        STATS["histories"] += 1
        text = data.draw(st.sampled_from(COMPARED))
        numeric = data.draw(st.sampled_from((True, False, None)))
        negated = Comparison.parse(text).negation().text
        never = _judge("never_had", entries, {"object": WEB_DEPLOYMENT, "comparison": text,
                                              "numeric": numeric})
        kept = _judge("kept", entries, {"object": WEB_DEPLOYMENT, "comparison": negated,
                                        "numeric": numeric})
        STATS[never.status] += 1
        assert never.status == kept.status, (text, numeric, never.explain(), kept.explain(),
                                             _show(entries))
    _fuzz(body, only=frozenset({"deployments"}))
    assert STATS[PASS] and STATS[VIOLATED] and STATS["unknown"], STATS
