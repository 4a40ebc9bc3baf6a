"""S: stateful storage scale-down (CONFORMANCE.md), over the storage_cluster concept and, in
its Kubernetes form, the real StatefulSet controller's retained claims."""

from __future__ import annotations

from aftershock import checks
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.sut import storage as judge
from aftershock.sut.storage import StorageCluster
from aftershock.timeline.entry import WATCH
from aftershock.timeline.state import State


def _cluster(p: Params) -> StorageCluster:
    return StorageCluster(**p["cluster"])


@check("only_removed_touched", "Destructive actions (decommission, maintenance, data wipe) "
       "touch only members being removed, and members that stay lose no data.")
def only_removed_touched(history: History, p: Params) -> Verdict:
    return judge.only_removed_touched(history.entries, _cluster(p), set(p["removed"]),
                                      p.get("inventory"), p.get("ledger"))


@check("data_kept", "Every object written to a removed member is still in its node-local data.")
def data_kept(history: History, p: Params) -> Verdict:
    wipes = judge.destructive_events(history.entries, _cluster(p))
    return judge.data_kept(p["inventory"], p["ledger"], set(p["removed"]), wipes,
                           history.origin)


@check("reads_clean", "Every object written reads back with its checksum, or a clean not "
       "found where the mode allows loss; never a server error.")
def reads_clean(history: History, p: Params) -> Verdict:
    wipes = judge.destructive_events(history.entries, _cluster(p))
    return judge.reads_clean(p["results"], p["ledger"], set(p["removed"]), p["loss_allowed"],
                             wipes, history.origin)


@check("shrank_after_done", "The workload drops a removed member only after that member "
       "finished its removal.")
def shrank_after_done(history: History, p: Params) -> Verdict:
    return judge.shrank_after_done(history.entries, _cluster(p), set(p["removed"]))


@check("never_shrank", "The storage cluster's workload never loses replicas.")
def never_shrank(history: History, p: Params) -> Verdict:
    return judge.never_shrank(history.entries, _cluster(p))


def _claims(entries, namespace: str) -> list[str]:
    return sorted({e.name for e in entries if e.kind == WATCH
                   and e.resource == "persistentvolumeclaims" and e.namespace == namespace})


@check("claims_retained", "The claims of a StatefulSet's removed ordinals, and their volumes, "
       "are never deleted.")
def claims_retained(history: History, p: Params) -> Verdict:
    namespace, name = p["namespace"], p["name"]
    reads = frozenset({"statefulsets", "persistentvolumeclaims", "persistentvolumes"})
    entries = history.entries
    state = State()
    for entry in entries:
        state.apply(entry)
    statefulset = state.get("statefulsets", namespace, name)
    if statefulset is None:
        return Verdict("claims_retained", UNKNOWN, f"statefulset/{namespace}/{name} was not "
                       "recorded", [], history.origin, subjects=0, reads=reads)
    replicas = statefulset["spec"]["replicas"]
    removed = [c for c in _claims(entries, namespace) if c.startswith(f"data-{name}-")
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


    verdict = checks.always(entries, kept, f"claims {', '.join(removed)} and their volumes "
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
    first: dict[str, str] = {}

    def same(s: State) -> bool:
        pvc = s.get("persistentvolumeclaims", namespace, claim)
        if pvc is None:
            return not first  # gone after it existed: lost
        volume = (pvc.get("spec") or {}).get("volumeName")
        if volume:
            first.setdefault("volume", volume)
        return volume in (None, first.get("volume"))


    verdict = checks.always(history.entries, same, f"pvc/{namespace}/{claim} stays bound to "
                            "one volume", resources={"persistentvolumeclaims"},
                            name="own_claim_kept")
    if verdict.status == VIOLATED:  # it remembers the first volume: judged by absence
        return Verdict(verdict.property, VIOLATED, verdict.summary, verdict.witness,
                       verdict.origin, subjects=1, by_absence=True, reads=reads)
    volume = first.get("volume")
    state = State()
    for entry in history.entries:
        state.apply(entry)
    if volume is None:
        return Verdict("own_claim_kept", PASS, f"pvc/{namespace}/{claim} was never bound",
                       [], history.origin, subjects=0, reads=reads)
    if state.get("persistentvolumes", "", volume) is None:
        return Verdict("own_claim_kept", VIOLATED, f"pvc/{namespace}/{claim} has no volume "
                       f"left (bound to pv/{volume})", [], history.origin, subjects=1,
                       by_absence=True, reads=reads)
    return Verdict("own_claim_kept", PASS, f"{verdict.summary}: pv/{volume}", [],
                   history.origin, subjects=1, reads=reads)


CONCEPTS = ("storage_cluster", "stateful_set")
prop("S1", "Destructive actions (decommission, maintenance, data wipe) only touch members being "
     "removed.", ["only_removed_touched"], CONCEPTS, ("destructive_faults",))
prop("S2", "In retain modes the removed member's node-local data is still there after the "
     "scale-down.", ["data_kept", "claims_retained"], CONCEPTS)
prop("S3", "Every object written before the fault reads back with its checksum, or a clean "
     "not found where the mode allows loss; never a server error.",
     ["reads_clean", "own_claim_kept"], CONCEPTS)
prop("S4", "Membership converges to the Ready members; a member that becomes Ready rejoins "
     "within T.", ["eventually"], CONCEPTS)
prop("S5", "The workload shrinks only after removed members reached their terminal state.",
     ["shrank_after_done"], CONCEPTS)
prop("S6", "Cordon without eviction never shrinks an autoscaled cluster.",
     ["never_shrank", "stays_for"], CONCEPTS, ("destructive_faults",))
