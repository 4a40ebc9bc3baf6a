"""Fuzzing the judges: random histories with gaps, re-lists, recorder errors, anomalies and a
lagging audit log, judged by every registered check. No judge may answer PASS over a window
with a gap (or an error) on what it reads, or with nothing matching to judge.

The oracle here is independent of the registry's rule: what each check reads is this file's
own table, the window is the whole history (or, for the timed checks, from their start to the
moment they say the condition held, or to their end), and "nothing to judge" is counted from
the history itself. AFTERSHOCK_FUZZ=10000 runs 10,000 histories (the figure in the notes).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aftershock import properties
from aftershock.checks import PASS
from aftershock.properties import Judgement
from aftershock.properties.context import Context
from aftershock.sut.gang import Gang
from aftershock.sut.records import NodeRecords
from aftershock.sut.storage import StorageCluster
from aftershock.timeline.entry import (
    ANOMALY,
    AUDIT,
    AUDIT_SYNC,
    ERROR,
    GAP_END,
    GAP_START,
    MARK,
    WATCH,
    Entry,
)

NS = "ns"
EXAMPLES = int(os.environ.get("AFTERSHOCK_FUZZ", "1500"))
STATS: Counter[str] = Counter()
RG = {"resource": {"group": "x.io", "version": "v1", "plural": "groups", "kind": "Group"},
      "replicas_path": "spec.replicas", "pod_selector": {"app": "{name}"}}
GANG = {"resource": {"group": "x.io", "version": "v1", "plural": "gangs", "kind": "Gang"},
        "group_status_path": "status.groups", "group_label": "group",
        "groups_path": "spec.groups", "min_available_path": "spec.minAvailable",
        "pod_selector": {"app": "{name}"}, "breach_condition": "Breached",
        "termination_reason": "GangTerminated", "scheduled_zero_reason": "ScheduledZero"}
STORAGE = {"resource": {"group": "x.io", "version": "v1", "plural": "storageclusters",
                        "kind": "StorageCluster"},
           "workload": {"kind": "StatefulSet", "name": "{name}"}, "member_pod": "{name}-{ordinal}",
           "members_path": "status.members", "terminal_path": "status.finished",
           "destructive_reasons": ["DataWiped"]}
RECORDS = NodeRecords("noderecords", NS, "spec.index", "spec.node", "status.touched", 5.0, 1.0, 3)
CONTEXT = Context(NS, "fuzz", {"replica_group": RG, "gang": GANG, "storage_cluster": STORAGE},
                  {"drained node": "n1", "node of pod web-0": "n1"}).to_json()
PODS = ("web-0", "web-1", "web-2", "db-0", "data-0", "data-1", "data-2")
NODES = ("n1", "n2", "n3")
STAMPS = ("2001-09-09T01:46:40Z", "2001-09-09T01:46:50Z")


def _pod(name: str, draw) -> dict:
    app = name.rsplit("-", 1)[0]
    meta = {"name": name, "namespace": NS, "uid": f"uid-{name}",
            "labels": {"app": app, "app.kubernetes.io/name": app, "group": "0"}}
    if draw(st.booleans()):
        meta["deletionTimestamp"] = STAMPS[0]
    ready = draw(st.booleans())
    return {"metadata": meta,
            "spec": {"nodeName": draw(st.sampled_from(("", *NODES))),
                     "resourceClaims": [{"name": "d", "resourceClaimName": "c0"}]},
            "status": {"phase": draw(st.sampled_from(("Running", "Pending"))),
                       "conditions": [{"type": "Ready", "status": str(ready)}]}}


def _object(resource: str, name: str, draw) -> dict:
    meta = {"name": name, "namespace": "" if resource in ("nodes", "persistentvolumes") else NS,
            "uid": f"uid-{name}"}
    status = draw(st.sampled_from(("True", "False")))
    stamp = draw(st.sampled_from(STAMPS))
    if resource == "pods":
        return _pod(name, draw)
    if resource == "nodes":
        return {"metadata": meta, "status": {"conditions": [
            {"type": "Ready", "status": status, "lastTransitionTime": stamp}]}}
    if resource == "resourceclaims":
        pool = draw(st.sampled_from(NODES))
        return {"metadata": meta, "status": {
            "allocation": {"devices": {"results": [{"driver": "d", "pool": pool,
                                                    "device": draw(st.sampled_from("ab"))}]}},
            "reservedFor": [{"uid": f"uid-{draw(st.sampled_from(PODS))}"}]}}
    if resource == "gangs":
        return {"metadata": meta, "spec": {"groups": 1, "minAvailable": 2},
                "status": {"groups": [{"index": 0, "conditions": [
            {"type": "Breached", "status": status, "lastTransitionTime": stamp}]}]}}
    if resource == "events":
        return {"metadata": meta, "involvedObject": {"name": "train"},
                "reason": draw(st.sampled_from(("GangTerminated", "ScheduledZero", "DataWiped")))}
    if resource == "statefulsets":
        return {"metadata": meta, "spec": {"replicas": draw(st.integers(1, 3))}}
    if resource == "storageclusters":
        return {"metadata": meta, "status": {"members": [0, 1], "finished": [2]}}
    if resource == "noderecords":
        return {"metadata": meta, "spec": {"index": draw(st.integers(0, 2)),
                                           "node": draw(st.sampled_from(NODES))},
                "status": {"touched": stamp}}
    return {"metadata": meta, "spec": {"volumeName": "pv-0"}}


NAMES = {"pods": PODS, "nodes": NODES, "resourceclaims": ("c0", "c1"), "gangs": ("train", "web"),
         "events": ("e0", "e1"), "statefulsets": ("data",), "storageclusters": ("data",),
         "noderecords": ("r0", "r1"), "persistentvolumeclaims": ("data-data-0", "data-data-2"),
         "persistentvolumes": ("pv-0",), "deployments": ("web",)}


@st.composite
def histories(draw) -> list[Entry]:
    entries: list[Entry] = []
    clock = [0.0]

    def add(kind: str, **fields) -> None:
        clock[0] += draw(st.sampled_from((0.0, 0.1, 1.0, 3.0)))
        entries.append(Entry(len(entries), clock[0], 1e9 + clock[0], kind, **fields))

    if draw(st.booleans()):
        recorded = draw(st.sets(st.sampled_from(sorted(NAMES)), min_size=1))
        add(MARK, detail="recording", extra={"recording": {r: "v1" for r in recorded},
                                             "audit": draw(st.booleans())})
    for _ in range(draw(st.integers(0, 25))):
        what = draw(st.sampled_from(("watch",) * 8 + ("gap", "error", "audit", "audit",
                                                       "sync")))
        resource = draw(st.sampled_from(sorted(NAMES)))
        name = draw(st.sampled_from(NAMES[resource]))
        if what == "watch":
            obj = _object(resource, name, draw)
            add(WATCH, resource=resource, namespace=obj["metadata"]["namespace"], name=name,
                uid=f"uid-{name}", rv=str(len(entries) + 1),
                type=draw(st.sampled_from(("ADDED", "MODIFIED", "DELETED"))), object=obj)
        elif what == "gap":
            add(GAP_START, resource=resource, detail="410 Gone")
            if draw(st.booleans()):
                changes = [{"type": draw(st.sampled_from(("ADDED", "DELETED"))),
                            "object": _object(resource, n, draw)}
                           for n in draw(st.sets(st.sampled_from(NAMES[resource])))]
                add(GAP_END, resource=resource, detail="re-listed", extra={"changes": changes})
        elif what == "error":
            add(draw(st.sampled_from((ERROR, ANOMALY))), resource=resource, detail="broke")
        elif what == "audit":
            add(AUDIT, resource="pods", namespace=NS, name=draw(st.sampled_from(PODS)),
                verb=draw(st.sampled_from(("create", "delete"))), code=201,
                actor=draw(st.sampled_from(("ctl", "other"))),
                extra={"labels": {"app": "web", "app.kubernetes.io/name": "web"}})
        else:
            add(AUDIT_SYNC, extra={"caught_up": draw(st.booleans())})
    return entries


def _gang() -> dict:
    return asdict(Gang("train", NS, GANG))


def _storage() -> dict:
    return asdict(StorageCluster("data", NS, STORAGE))


LEDGER = {"written": [{"object": "o", "member": 2}]}
# check: (params, what it reads: its own table, not the check's word)
JUDGEMENTS = {
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
    "honest_transition": ({"resource": "nodes", "namespace": "", "name": "n1",
                           "condition": "Ready"}, {"nodes"}),
    "termination_timed": ({"gang": _gang(), "group": 0, "delay": 1, "latency": 5,
                           "actor": "ctl"}, {"gangs", "pods", "audit"}),
    "at_most_terminations": ({"gang": _gang(), "limit": 1}, {"events", "gangs"}),
    # a gang of the web pods: their scheduled count rises and falls often enough to judge
    "regression_detected": ({"gang": asdict(Gang("web", NS, GANG)), "latency": 2, "now": 100},
                            {"gangs", "pods"}),
    "one_warning_per_drop": ({"gang": _gang(), "group": 0}, {"pods", "events"}),
    "never_reclaimed_early": ({"records": asdict(RECORDS)}, {"nodes", "noderecords"}),
    "allocated_before_bind": ({"namespace": NS}, {"pods", "resourceclaims"}),
    "exclusive_devices": ({}, {"resourceclaims"}),
    "never_deallocated_in_use": ({}, {"resourceclaims"}),
    "nothing_from_gone_slices": ({"node": "n1"}, {"nodes", "resourceclaims"}),
    "shrank_after_done": ({"cluster": _storage(), "removed": [2]},
                          {"statefulsets", "storageclusters"}),
    "never_shrank": ({"cluster": _storage()}, {"statefulsets"}),
    "only_removed_touched": ({"cluster": _storage(), "removed": [2]}, {"events", "pods"}),
    "claims_retained": ({"namespace": NS, "name": "data"},
                        {"statefulsets", "persistentvolumeclaims", "persistentvolumes"}),
    "own_claim_kept": ({"namespace": NS, "pod": "data-0"},
                       {"persistentvolumeclaims", "persistentvolumes"}),
    "data_kept": ({"cluster": _storage(), "removed": [2], "ledger": LEDGER,
                   "inventory": {"members": {}}}, set()),
    "reads_clean": ({"cluster": _storage(), "removed": [2], "ledger": LEDGER, "results": [],
                     "loss_allowed": True}, set()),
    "node_side_exclusive": ({"prepare_log": []}, set()),
    "end_state_as_reference": ({"namespace": NS, "reference": {"pods": ["{}"]},
                                "masks": {"pods": ["metadata", "spec", "status"]}}, {"pods"}),
    "writes_as_reference": ({"actor": "ctl", "namespace": NS,
                             "expected": {"pods create": [1, 2]}}, {"pods", "audit"}),
    "no_error_storm": ({"actor": "ctl", "limit": 1}, {"audit"}),
}


def _window(check: str, params: dict, verdict, entries: list[Entry]) -> tuple[float, float]:
    end = entries[-1].mono if entries else 0.0
    if check == "eventually":
        return params["start"], (verdict.witness[0].mono if verdict.witness else params["start"])
    if check == "stays_for":
        return params["start"], params["start"] + params["duration"]
    return (entries[0].mono if entries else 0.0), end


def _troubled(entries: list[Entry], reads: set[str], start: float, end: float) -> bool:
    """A gap (until its re-list, or for ever) or an error on ``reads`` touching the window."""
    opened: dict[str, float] = {}
    for entry in entries:
        if entry.resource not in reads:
            continue
        if entry.kind == GAP_START:
            opened.setdefault(entry.resource, entry.mono)
        elif entry.kind == GAP_END and entry.resource in opened:
            if opened.pop(entry.resource) <= end and entry.mono > start:
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


def _nothing(reads: set[str], entries: list[Entry], params: dict) -> bool:
    """Nothing of what it reads was ever recorded (external data: nothing in it)."""
    if not reads:
        return not (params.get("prepare_log") or params.get("results"))
    return not any((e.kind == WATCH and e.resource in reads) or
                   (e.kind == AUDIT and "audit" in reads and reads == {"audit"}) or
                   (e.kind == GAP_END and e.resource in reads and e.extra.get("changes"))
                   for e in entries)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories())
def test_no_judge_passes_over_a_gap_an_error_or_nothing(entries):
    STATS["histories"] += 1
    for check, (params, reads) in JUDGEMENTS.items():
        verdict = properties.judge([check], Judgement(check, params), entries)
        STATS[verdict.status] += 1
        if verdict.status != PASS:
            continue
        start, end = _window(check, params, verdict, entries)
        assert not _troubled(entries, reads, start, end), (check, verdict.explain())
        assert not _nothing(reads, entries, params), (check, verdict.explain())
        assert verdict.subjects, (check, verdict.explain())


def test_the_fuzz_judged_passes_and_everything_else():
    """The fuzz is not vacuous: it saw passes as well as unknowns and violations."""
    assert STATS["histories"] >= min(EXAMPLES, 100), STATS
    assert STATS[PASS] and STATS["unknown"] and STATS["violated"], STATS
    print(f"fuzz: {dict(STATS)}")


def test_every_check_is_fuzzed():
    assert set(JUDGEMENTS) == set(properties.CHECKS)
