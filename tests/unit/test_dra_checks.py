"""The D judgements over synthetic histories: each fails on the bug it guards."""

from __future__ import annotations

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.properties.dra import (
    allocated_before_bind,
    exclusive_devices,
    node_side_exclusive,
    nothing_from_gone_slices,
)
from aftershock.timeline.entry import GAP_END, GAP_START, WATCH, Entry
from tests.verdict_corpus import keep

NS = "ns"
SELECTOR = {"nodeSelectorTerms": [{"matchFields": [
    {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}


class History:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, resource: str, name: str, obj: dict, type: str = "MODIFIED",
            namespace: str = NS) -> None:
        at = float(len(self.entries))
        obj.setdefault("metadata", {}).update(name=name, namespace=namespace)
        self.entries.append(Entry(seq=len(self.entries), mono=at, wall=1e9 + at, kind=WATCH,
                                  resource=resource, namespace=namespace, name=name,
                                  uid=f"uid-{name}", rv=str(100 + len(self.entries)),
                                  type=type, object=obj))

    def claim(self, name: str, device: str | None, reserved: list[str] | None = None,
              type: str = "MODIFIED", pool: str = "node-1") -> None:
        status: dict = {}
        if device:
            status["allocation"] = {"devices": {"results": [
                {"driver": "gpu", "pool": pool, "device": device, "request": "r"}]},
                "nodeSelector": SELECTOR}
        if reserved:
            status["reservedFor"] = [{"resource": "pods", "name": p, "uid": f"uid-{p}"}
                                     for p in reserved]
        self.add("resourceclaims", name, {"status": status}, type)

    def pod(self, name: str, claim: str, node: str | None) -> None:
        self.add("pods", name, {"spec": {"nodeName": node} if node else {},
                                "status": {"resourceClaimStatuses": [
                                    {"name": "device", "resourceClaimName": claim}]}})


def test_binding_after_allocation_and_reservation_passes():
    history = History()
    history.pod("web-a", "web-a-device", None)
    history.claim("web-a-device", None)
    history.claim("web-a-device", "dev-0", ["web-a"])
    history.pod("web-a", "web-a-device", "node-1")
    assert allocated_before_bind(history.entries, NS).status == PASS


def test_binding_before_the_claim_is_allocated_is_caught():
    history = History()
    history.claim("web-a-device", None)
    history.pod("web-a", "web-a-device", "node-1")
    history.claim("web-a-device", "dev-0", ["web-a"])
    verdict = allocated_before_bind(history.entries, NS)
    assert verdict.status == VIOLATED and "was not allocated" in verdict.summary


def test_binding_to_a_node_the_allocation_does_not_select_is_caught():
    history = History()
    history.claim("web-a-device", "dev-0", ["web-a"])
    history.pod("web-a", "web-a-device", "node-2")
    assert "another node" in allocated_before_bind(history.entries, NS).summary


def test_a_device_in_two_allocations_is_caught():
    history = History()
    history.claim("a", "dev-0")
    history.claim("b", "dev-1")
    assert exclusive_devices(history.entries).status == PASS
    history.claim("b", "dev-0")
    verdict = exclusive_devices(history.entries)
    assert verdict.status == VIOLATED and "ns/a, ns/b" in verdict.summary


def test_admin_access_and_distinct_shares_of_a_device_are_not_two_holders():
    """An admin-access result sees a device another claim holds, by design; two shares of a
    device with consumable capacity are two holdings. Two claims with the same share, or
    one ordinary claim beside another, still break D2."""
    history = History()
    history.claim("a", "dev-0")
    history.add("resourceclaims", "monitor", {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu", "pool": "node-1", "device": "dev-0", "request": "r",
         "adminAccess": True}]}}}})
    for name, share in (("s1", "aaa"), ("s2", "bbb")):
        history.add("resourceclaims", name, {"status": {"allocation": {"devices": {"results": [
            {"driver": "gpu", "pool": "node-1", "device": "dev-9", "request": "r",
             "shareID": share}]}}}})
    assert exclusive_devices(history.entries).status == PASS
    keep("admin-access-and-shares-are-not-two-holders", history.entries,
         Judgement("exclusive_devices"), ["D2"], {"D2": "pass"},
         wrong="D2: VIOLATED: device gpu/node-1/dev-0 is allocated to 2 claims at once: ns/a, "
               "ns/monitor", found="issue 44, while writing the #136269 feature: D2 counted "
               "every result of an allocation, an admin-access one and a share too")
    history.add("resourceclaims", "s3", {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu", "pool": "node-1", "device": "dev-9", "request": "r",
         "shareID": "aaa"}]}}}})
    verdict = exclusive_devices(history.entries)
    assert verdict.status == VIOLATED and "ns/s1, ns/s3" in verdict.summary


def _log(time: float, action: str, claim: str) -> dict:
    return {"time": 1e9 + time, "action": action, "node": "node-1", "pool": "node-1",
            "device": "dev-0", "claim": f"ns/{claim}", "claim_uid": f"uid-{claim}",
            "pod": f"ns/{claim}-pod"}


def test_node_side_prepare_over_a_stale_claim_is_caught():
    history = History()
    history.claim("a", None)
    fine = [_log(1, "prepare", "a"), _log(2, "unprepare", "a"), _log(3, "prepare", "b")]
    assert node_side_exclusive(fine, history.entries).status == PASS
    stale = [_log(1, "prepare", "a"), _log(3, "prepare", "b")]
    verdict = node_side_exclusive(stale, history.entries)
    assert verdict.status == VIOLATED and "still prepared for ns/a" in verdict.summary
    assert len(verdict.witness) == 2


def test_node_side_an_admin_access_preparation_is_not_a_second_claim():
    """KEP-5018: the driver prepares a device for an admin-access claim beside the claim that
    holds it; its log shows both, and D5 read that as a double preparation."""
    history = History()
    history.add("resourceclaims", "monitor", {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu", "pool": "node-1", "device": "dev-0", "request": "r",
         "adminAccess": True}]}}}})
    both = [_log(1, "prepare", "a"), _log(2, "prepare", "monitor")]
    assert node_side_exclusive(both, history.entries).status == PASS
    fresh = History()  # the same claim without admin access: two holders
    fresh.claim("monitor", "dev-0")
    assert node_side_exclusive(both, fresh.entries).status == VIOLATED


def _slice(history: History, node: str, pool: str) -> None:
    history.add("resourceslices", f"{node}-gpu", {"spec": {
        "driver": "gpu", "nodeName": node, "pool": {"name": pool}}}, "ADDED", namespace="")


def test_allocating_from_a_deleted_node_is_caught():
    history = History()
    _slice(history, "node-1", "node-1")
    history.claim("a", "dev-0")
    history.add("nodes", "node-1", {}, "DELETED", namespace="")
    history.claim("a", "dev-0")
    assert nothing_from_gone_slices(history.entries, "node-1").status == PASS
    history.claim("b", "dev-0")
    assert nothing_from_gone_slices(history.entries, "node-1").status == VIOLATED


def test_the_pools_of_a_deleted_node_are_the_ones_its_slices_published():
    """A pool need not be named after its node: the slices say which pools were the node's."""
    history = History()
    _slice(history, "node-1", "rack-a")
    history.add("nodes", "node-1", {}, "DELETED", namespace="")
    history.claim("b", "dev-0", pool="rack-a")
    assert nothing_from_gone_slices(history.entries, "node-1").status == VIOLATED


def test_gone_slices_judge_the_claims_recorded_after_the_deletion():
    """No claim after the deletion: nothing was judged (it used to pass, counting 1); no slice
    of the node recorded: its devices are unknown; the node never deleted: a precondition."""
    history = History()
    _slice(history, "node-1", "node-1")
    history.claim("a", "dev-0")
    history.add("nodes", "node-1", {}, "DELETED", namespace="")
    assert nothing_from_gone_slices(history.entries, "node-1").subjects == 0
    assert "precondition" in nothing_from_gone_slices(history.entries, "node-2").summary
    bare = History()
    bare.add("nodes", "node-1", {}, "DELETED", namespace="")
    bare.claim("b", "dev-0")
    assert nothing_from_gone_slices(bare.entries, "node-1").status == UNKNOWN


def test_a_claim_reallocated_or_freed_in_use_is_caught():
    from aftershock.properties.dra import never_deallocated_in_use

    history = History()
    history.claim("a", "dev-0", ["p"])
    history.claim("a", "dev-0", ["p"])
    history.claim("a", "dev-0", [])
    history.claim("a", None, [])
    assert never_deallocated_in_use(history.entries).status == PASS
    moved = History()
    moved.claim("a", "dev-0", ["p"])
    moved.claim("a", "dev-1", ["p"])
    assert "re-allocated" in never_deallocated_in_use(moved.entries).summary
    freed = History()
    freed.claim("a", "dev-0", ["p"])
    freed.claim("a", None, ["p"])
    assert "while still reserved" in never_deallocated_in_use(freed.entries).summary


def test_claims_of_departed_pods_must_be_released():
    from aftershock.concepts.dra import departed_released
    from aftershock.timeline.state import State

    state = State()
    state.put(("pods", NS, "p"), {"metadata": {"name": "p", "uid": "uid-p"}})
    owned = {"metadata": {"name": "c", "ownerReferences": [{"kind": "Pod", "uid": "uid-p"}]},
             "status": {"reservedFor": [{"uid": "uid-p"}]}}
    state.put(("resourceclaims", NS, "c"), owned)
    assert departed_released(state, NS)
    state.put(("pods", NS, "p"), None)
    assert not departed_released(state, NS), "reserved for, and generated for, a gone pod"
    owned["status"] = {}
    assert not departed_released(state, NS), "a generated claim outliving its pod"
    state.put(("resourceclaims", NS, "c"), None)
    assert departed_released(state, NS)


GROUP_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "workers",
             "uid": "uid-workers"}


def test_a_claim_reserved_for_the_pods_podgroup_reserves_the_pod():
    """KEP-5729 (beta in 1.37): a PodGroup's claim is reserved for the PodGroup, not for each
    pod, until the PodGroup goes. D1 asked for the pod in reservedFor: a false VIOLATED, "was
    not reserved for the pod"; D4 took the PodGroup for a pod that had departed."""
    from aftershock.concepts.dra import departed_released
    from aftershock.timeline.state import State

    history = History()
    history.add("resourceclaims", "shared", {"status": {
        "allocation": {"devices": {"results": [{"driver": "gpu", "pool": "node-1",
                                                "device": "dev-0", "request": "r"}]},
                       "nodeSelector": SELECTOR},
        "reservedFor": [GROUP_REF]}})
    history.add("pods", "w-0", {"spec": {"nodeName": "node-1",
                                         "schedulingGroup": {"podGroupName": "workers"}},
                                "status": {"resourceClaimStatuses": [
                                    {"name": "device", "resourceClaimName": "shared"}]}})
    verdict = allocated_before_bind(history.entries, NS)
    assert verdict.status == PASS, verdict.explain()
    keep("d1-a-claim-reserved-for-the-pods-podgroup", history.entries,
         Judgement("allocated_before_bind", {"namespace": NS}), ["D1"], {"D1": "pass"},
         "D1: VIOLATED: pod/ns/w-0 was bound to node/node-1 while resourceclaim/ns/shared was "
         "not reserved for the pod", "issue 65: KEP-5729's claims for PodGroups, read against D1")
    other = History()  # the same claim, the pod in another group: not reserved for it
    other.entries = [history.entries[0]]
    other.add("pods", "w-0", {"spec": {"nodeName": "node-1",
                                       "schedulingGroup": {"podGroupName": "others"}},
                              "status": {"resourceClaimStatuses": [
                                  {"name": "device", "resourceClaimName": "shared"}]}})
    assert allocated_before_bind(other.entries, NS).status == VIOLATED
    state = State()
    state.put(("resourceclaims", NS, "shared"), {"metadata": {"name": "shared"},
                                                 "status": {"reservedFor": [GROUP_REF]}})
    assert departed_released(state, NS), "a PodGroup is no departed pod"


def test_a_finished_pods_claim_must_be_released_too():
    """Issue 46: D4 counted deleted pods only, so a Succeeded or Failed pod could keep its
    device reserved for ever and D4 still passed. The resource-claim controller releases a
    finished pod's claims (its isPodDone), and D4 now asks for that."""
    from aftershock.concepts.dra import departed_released
    from aftershock.timeline.state import State

    for phase in ("Succeeded", "Failed"):
        state = State()
        pod = {"metadata": {"name": "p", "uid": "uid-p"}, "status": {"phase": "Running"}}
        state.put(("pods", NS, "p"), pod)
        state.put(("resourceclaims", NS, "c"), {
            "metadata": {"name": "c"}, "status": {"reservedFor": [{"uid": "uid-p"}]}})
        assert departed_released(state, NS)
        pod["status"]["phase"] = phase
        assert not departed_released(state, NS), f"reserved for a pod that {phase}"
        state.put(("resourceclaims", NS, "c"), {"metadata": {"name": "c"}, "status": {}})
        assert departed_released(state, NS)


def _relist(at: float, claims: list[tuple[str, str]]) -> list[Entry]:
    """A gap in the claims' watch, closed by a re-list that found ``claims`` (name, device)."""
    changes = [{"type": "ADDED", "object": {
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "status": {"allocation": {"devices": {"results": [
            {"driver": "gpu", "pool": pool, "device": device, "request": "r"}]}}}}}
        for name, (pool, device) in ((n, d.split("/")) for n, d in claims)]
    return [Entry(seq=0, mono=at, wall=1e9 + at, kind=GAP_START, resource="resourceclaims",
                  detail="410 Gone"),
            Entry(seq=0, mono=at + 0.5, wall=1e9 + at + 0.5, kind=GAP_END,
                  resource="resourceclaims", rv="200", detail="re-listed",
                  extra={"changes": changes})]


def test_a_relist_is_one_snapshot_not_a_state_per_listed_claim():
    """A re-list that finds claim c1 on the device c0 held before the gap, and c0 moved to
    another, shows no state with both on one device: applied one listed claim at a time (c1
    first), D2 saw one. What the gap hid is unknown, and said so."""
    history = History()
    history.claim("c0", "b", pool="n2")
    history.entries += _relist(2.0, [("c1", "n2/b"), ("c0", "n1/a")])
    for seq, entry in enumerate(history.entries):
        entry.seq = seq
    judged = properties.judge(["D2"], Judgement("exclusive_devices"), history.entries)
    assert judged.status == UNKNOWN and "gap" in judged.explain(), judged.explain()
    keep("d2-a-relist-read-one-claim-at-a-time", history.entries,
         Judgement("exclusive_devices"), ["D2"], {"D2": "unknown"},
         wrong="D2: VIOLATED: device gpu/n2/b is allocated to 2 claims at once: ns/c0, ns/c1",
         found="the metamorphic fuzz in CI (a completion of the gap flipped it to PASS): a "
               "re-list's claims were applied one at a time, c1's listed state beside c0's "
               "state from before the gap")
    history.entries += _relist(4.0, [("c0", "n1/a"), ("c1", "n1/a")])
    for seq, entry in enumerate(history.entries):
        entry.seq = seq
    assert exclusive_devices(history.entries).status == VIOLATED
