"""B6 (bound_when_room): a pod group waiting for its minimum while the recorded nodes have room
for the pods it lacks is bound within a bound; a wait with no room, a wait that ended in time,
one whose pods are placed by more than their requests, and one a gap hides are not violations."""

from __future__ import annotations

from dataclasses import asdict

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.concepts.gang_scheduler import PodGroup
from aftershock.properties import Judgement
from aftershock.timeline.entry import GAP_END, GAP_START, WATCH, Entry
from tests.verdict_corpus import keep

NS = "ns"
MAPPING = {"scheduler_name": "s", "min_member_path": "spec.minMember",
           "resource": {"group": "aftershock.io", "version": "v1", "plural": "podgroups",
                        "kind": "PodGroup"},
           "pod_selector": {"aftershock.io/pod-group": "{name}"}}


class History:
    """Nodes with room for one pod each (80Mi asked of 150Mi), and pod groups of such pods."""

    def __init__(self, nodes: int = 3) -> None:
        self.entries: list[Entry] = []
        for i in range(nodes):
            self.node(0.0, f"n{i}")

    def _add(self, at: float, kind: str, **fields) -> None:
        self.entries.append(Entry(seq=len(self.entries), mono=at, wall=1e9 + at, kind=kind,
                                  rv=str(len(self.entries) + 1), **fields))

    def node(self, at: float, name: str, cordoned: bool = False, memory: str = "150Mi") -> None:
        self._add(at, WATCH, resource="nodes", name=name, type="MODIFIED", object={
            "metadata": {"name": name}, "spec": {"unschedulable": cordoned},
            "status": {"allocatable": {"cpu": "1", "memory": memory, "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})

    def group(self, at: float, name: str, minimum: int, pods: int | None = None,
              **spec) -> None:
        self._add(at, WATCH, resource="podgroups", namespace=NS, name=name, type="ADDED",
                  object={"metadata": {"name": name, "namespace": NS},
                          "spec": {"minMember": minimum}})
        for i in range(minimum if pods is None else pods):
            self.pod(at, name, f"{name}-{i}", type="ADDED", **spec)

    def pod(self, at: float, group: str, name: str, node: str = "", type: str = "MODIFIED",
            created: int | None = None, **spec) -> None:
        """A pod of ``group`` ("": of no group), ``created`` that many seconds into the
        cluster's day when given."""
        meta = {"name": name, "namespace": NS, "uid": f"uid-{name}",
                "labels": {"aftershock.io/pod-group": group} if group else {}}
        if created is not None:
            meta["creationTimestamp"] = f"2026-12-01T00:00:{created:02d}Z"
        self._add(at, WATCH, resource="pods", namespace=NS, name=name, uid=meta["uid"],
                  type=type, object={"metadata": meta, "spec": {
                      "nodeName": node, **spec, "containers": [
                          {"name": "work", "resources": {"requests": {"memory": "80Mi"}}}]},
                      "status": {"phase": "Running" if node else "Pending"}})

    def bind(self, at: float, group: str, pods: int, nodes: list[str]) -> None:
        for i, node in zip(range(pods), nodes, strict=False):
            self.pod(at, group, f"{group}-{i}", node)

    def devices(self, at: float, expression: str = 'device.driver == "d"') -> None:
        """A DeviceClass c of driver d, and a slice of one device on each node."""
        self._add(at, WATCH, resource="deviceclasses", name="c", type="ADDED", object={
            "metadata": {"name": "c"}, "spec": {"selectors": [{"cel": {
                "expression": expression}}]}})
        for node in sorted({e.name for e in self.entries if e.resource == "nodes"}):
            self._add(at, WATCH, resource="resourceslices", name=f"s-{node}", type="ADDED",
                      object={"metadata": {"name": f"s-{node}"}, "spec": {
                          "driver": "d", "nodeName": node, "pool": {
                              "name": node, "generation": 1, "resourceSliceCount": 1},
                          "devices": [{"name": "dev"}]}})

    def claim(self, at: float, name: str, on: str = "") -> None:
        """A claim of one device of class c; ``on``: allocated that node's device."""
        status = {"allocation": {"devices": {"results": [
            {"driver": "d", "pool": on, "device": "dev", "request": "r"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [on]}]}]}}} if on else {}
        self._add(at, WATCH, resource="resourceclaims", namespace=NS, name=name, type="ADDED",
                  object={"metadata": {"name": name, "namespace": NS}, "spec": {"devices": {
                      "requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}},
                      "status": status})

    def gap(self, at: float, until: float) -> None:
        self._add(at, GAP_START, resource="pods", detail="410 Gone")
        self._add(until, GAP_END, resource="pods", detail="re-listed")

    def end(self, at: float) -> None:
        self.node(at, "n0")  # a later record: the history reaches this moment


def judge(h: History, group: str, within: float = 10):
    return properties.judge(["B6"], Judgement("bound_when_room", {
        "group": asdict(PodGroup(group, NS, MAPPING)), "within": within}), h.entries)


def test_a_group_kept_waiting_while_the_nodes_had_room_for_it_is_violated():
    h = History(nodes=3)
    h.group(1, "small", 2)
    h.end(20)
    verdict = judge(h, "small")
    assert verdict.status == VIOLATED, verdict.explain()
    assert "podgroup/ns/small waited for its minimum from +1.000s" in verdict.summary
    assert "pod/ns/small-0 on node/n0, pod/ns/small-1 on node/n1" in verdict.summary


def test_a_group_bound_in_time_passes():
    h = History(nodes=3)
    h.group(1, "small", 2)
    h.bind(3, "small", 2, ["n0", "n1"])
    h.end(20)
    verdict = judge(h, "small")
    assert verdict.status == PASS, verdict.explain()
    assert "1 waits with room, each ended in time" in verdict.summary


def test_a_group_with_no_room_for_what_it_lacks_may_wait():
    """Two gangs of 2 on 3 nodes: one bound, the other lacks 2 and 1 node is free."""
    h = History(nodes=3)
    h.group(1, "a", 2)
    h.bind(1.5, "a", 2, ["n0", "n1"])
    h.group(2, "b", 2)
    h.end(20)
    assert judge(h, "b").status == PASS


def test_room_freed_by_a_group_that_went_must_be_given_within_the_bound():
    h = History(nodes=3)
    h.group(1, "a", 2)
    h.bind(1.5, "a", 2, ["n0", "n1"])
    h.group(2, "b", 2)
    h._add(5, WATCH, resource="pods", namespace=NS, name="a-0", uid="uid-a-0", type="DELETED",
           object={"metadata": {"name": "a-0", "namespace": NS, "uid": "uid-a-0",
                                "labels": {"aftershock.io/pod-group": "a"}},
                   "spec": {"nodeName": "n0"}, "status": {"phase": "Running"}})
    h.end(20)
    verdict = judge(h, "b")
    assert verdict.status == VIOLATED and "from +5.000s" in verdict.summary, verdict.explain()


def test_a_node_nominated_for_another_pod_is_no_room():
    """kube-scheduler nominates a node for a pod it preempts for: that room is promised."""
    h = History(nodes=2)
    h._add(0.5, WATCH, resource="pods", namespace=NS, name="urgent", uid="uid-urgent",
           type="ADDED", object={"metadata": {"name": "urgent", "namespace": NS,
                                              "uid": "uid-urgent"},
                                 "spec": {"containers": [{"name": "w", "resources": {
                                     "requests": {"memory": "80Mi"}}}]},
                                 "status": {"phase": "Pending", "nominatedNodeName": "n1"}})
    h.group(1, "small", 2)
    h.end(20)
    assert judge(h, "small").status == PASS


def test_a_cordoned_node_is_no_room():
    h = History(nodes=3)
    h.node(0.5, "n2", cordoned=True)
    h.group(1, "small", 3)
    h.end(20)
    assert judge(h, "small").status == PASS


def test_a_node_selector_no_node_matches_is_no_room():
    h = History(nodes=3)
    h.group(1, "small", 2, nodeSelector={"zone": "a"})
    h.end(20)
    assert judge(h, "small").status == PASS


def test_a_pod_placed_by_more_than_its_requests_is_not_judged():
    h = History(nodes=3)
    h.group(1, "small", 2, affinity={"nodeAffinity": {}})
    h.end(20)
    verdict = judge(h, "small")
    assert verdict.status == UNKNOWN and "asks for affinity" in verdict.summary


def test_a_wait_whose_bound_is_not_over_is_unknown():
    h = History(nodes=3)
    h.group(1, "small", 2)
    h.end(5)
    verdict = judge(h, "small")
    assert verdict.status == UNKNOWN and "less than 10s before the history ends" in \
        verdict.summary


def test_a_wait_a_gap_may_have_hidden_a_binding_in_is_unknown():
    h = History(nodes=3)
    h.group(1, "small", 2)
    h.gap(4, 6)
    h.end(20)
    verdict = judge(h, "small")
    assert verdict.status == UNKNOWN and "gap" in verdict.summary, verdict.explain()


def test_a_group_never_recorded_is_nothing_to_judge():
    h = History(nodes=3)
    h.end(20)
    assert judge(h, "small").status == UNKNOWN


# --- B7: a gang that is not bound holds no device ---------------------------------------------


def _claimed(h: History, at: float, group: str, pod: str, node: str = "") -> None:
    """The group's pod, its claim (generated from a template: named in its status)."""
    meta = {"name": pod, "namespace": NS, "uid": f"uid-{pod}",
            "labels": {"aftershock.io/pod-group": group}}
    h._add(at, WATCH, resource="pods", namespace=NS, name=pod, uid=meta["uid"], type="MODIFIED",
           object={"metadata": meta, "spec": {"nodeName": node, "resourceClaims": [
               {"name": "device", "resourceClaimTemplateName": "t"}]},
               "status": {"phase": "Running" if node else "Pending", "resourceClaimStatuses": [
                   {"name": "device", "resourceClaimName": f"{pod}-device"}]}})


def _claim(h: History, at: float, pod: str, allocated: bool) -> None:
    status = {"allocation": {"devices": {"results": [
        {"driver": "d", "pool": "n0", "device": "dev-0"}]}}} if allocated else {}
    h._add(at, WATCH, resource="resourceclaims", namespace=NS, name=f"{pod}-device",
           uid=f"uid-{pod}-device", type="MODIFIED",
           object={"metadata": {"name": f"{pod}-device", "namespace": NS}, "status": status})


def hold(h: History, group: str = "big", within: float = 5):
    return properties.judge(["B7"], Judgement("holds_no_device", {
        "group": asdict(PodGroup(group, NS, MAPPING)), "within": within}), h.entries)


def test_a_claim_allocated_for_a_pod_of_a_gang_that_is_not_bound_is_violated():
    h = History(nodes=3)
    h.group(1, "big", 4, pods=0)
    for i in range(4):
        _claimed(h, 1, "big", f"big-{i}")
        _claim(h, 1, f"big-{i}", allocated=False)
    _claim(h, 2, "big-0", allocated=True)  # allocated, never bound: the group waits
    h.end(20)
    verdict = hold(h)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "resourceclaim/ns/big-0-device was allocated for an unbound pod of " \
           "podgroup/ns/big from +2.000s" in verdict.summary


def test_claims_allocated_just_before_their_pods_bind_pass():
    h = History(nodes=3)
    h.group(1, "g", 2, pods=0)
    for i in range(2):
        _claimed(h, 1, "g", f"g-{i}")
        _claim(h, 1, f"g-{i}", allocated=False)
    for i in range(2):
        _claim(h, 2, f"g-{i}", allocated=True)
        _claimed(h, 2.1, "g", f"g-{i}", node=f"n{i}")
    h.end(20)
    verdict = hold(h, "g")
    assert verdict.status == PASS and "(2 claims)" in verdict.summary, verdict.explain()


def test_a_claim_held_less_than_the_bound_before_the_end_is_unknown():
    h = History(nodes=3)
    h.group(1, "big", 2, pods=0)
    _claimed(h, 1, "big", "big-0")
    _claim(h, 2, "big-0", allocated=True)
    h.end(4)
    assert hold(h).status == UNKNOWN


SHARED = [{"name": "device", "resourceClaimName": "shared"}]


def test_a_gang_sharing_a_claim_kept_waiting_by_a_node_with_its_device_and_room_is_violated():
    """kubernetes#137617: both pods fit the first node, which has the device: the wait was
    needless, and the placement says where the claim would go."""
    h = History(nodes=2)
    for node in ("n0", "n1"):
        h.node(0.1, node, memory="300Mi")
    h.devices(0.2)
    h.claim(0.3, "shared")
    h.group(1, "g", 2, resourceClaims=SHARED)
    h.end(20)
    verdict = judge(h, "g")
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/ns/g-0 on node/n0, pod/ns/g-1 on node/n0" in verdict.summary


def test_a_shared_claim_is_placed_once_so_its_pods_need_one_node_with_room_for_all():
    h = History(nodes=2)  # one pod a node: the two sharers cannot be together
    h.devices(0.2)
    h.claim(0.3, "shared")
    h.group(1, "g", 2, resourceClaims=SHARED)
    h.end(20)
    assert judge(h, "g").status == PASS


def test_a_device_allocated_to_another_claim_is_no_room_and_an_allocated_claim_pins_its_pods():
    h = History(nodes=2)
    for node in ("n0", "n1"):
        h.node(0.1, node, memory="300Mi")
    h.devices(0.2)
    h.claim(0.3, "other", on="n0")
    h.claim(0.3, "other2", on="n1")
    h.claim(0.3, "shared")
    h.group(1, "g", 2, resourceClaims=SHARED)
    h.end(20)
    assert judge(h, "g").status == PASS
    h = History(nodes=2)
    for node in ("n0", "n1"):
        h.node(0.1, node, memory="300Mi")
    h.devices(0.2)
    h.claim(0.3, "shared", on="n1")
    h.group(1, "g", 2, resourceClaims=SHARED)
    h.end(20)
    verdict = judge(h, "g")
    assert verdict.status == VIOLATED and "g-0 on node/n1, pod/ns/g-1 on node/n1" in \
        verdict.summary


def test_a_claim_not_made_yet_is_no_room_and_a_class_beyond_its_driver_is_not_judged():
    h = History(nodes=2)
    for node in ("n0", "n1"):
        h.node(0.1, node, memory="300Mi")
    h.devices(0.2)
    h.group(1, "g", 2, resourceClaims=SHARED)
    h.end(20)
    assert judge(h, "g").status == PASS  # the scheduler waits for the claim too
    h = History(nodes=2)
    for node in ("n0", "n1"):
        h.node(0.1, node, memory="300Mi")
    h.devices(0.2, expression='device.driver == "d" && device.attributes["x"].y')
    h.claim(0.3, "shared")
    h.group(1, "g", 2, resourceClaims=SHARED)
    h.end(20)
    verdict = judge(h, "g")
    assert verdict.status == UNKNOWN and "selects devices by more than their driver" in \
        verdict.summary


def _waiting_group_and_single(single_created: int, priority: int = 0) -> History:
    """Gang g of 2 created at :01 waits on 3 nodes, 1 taken; at +3 the taken node frees (room
    for g) and a single pod created at ``single_created`` is bound to n0 (room gone)."""
    h = History(nodes=3)
    h.pod(0.5, "other", "other-0", "n2", type="ADDED", created=0, schedulerName="s")
    h._add(1, WATCH, resource="podgroups", namespace=NS, name="g", type="ADDED",
           object={"metadata": {"name": "g", "namespace": NS}, "spec": {"minMember": 2}})
    for i in range(2):
        h.pod(1, "g", f"g-{i}", type="ADDED", created=1, schedulerName="s")
    h.pod(2, "", "single", type="ADDED", created=single_created, schedulerName="s",
          priority=priority)
    h.node(2.5, "n1", memory="70Mi")  # n1 too small for now: g has no room
    h.node(3, "n1")  # room for g (n0, n1) ...
    h.pod(3.5, "", "single", "n0", created=single_created, schedulerName="s",
          priority=priority)  # ... taken by the single pod
    h.end(20)
    return h


def test_a_gang_passed_over_by_a_single_pod_created_after_it_is_violated():
    """A stream of single pods starving a gang (volcano#5805, koordinator#872): room the gang
    had, taken by a pod that came later, is still room it waited in."""
    h = _waiting_group_and_single(single_created=2)
    verdict = judge(h, "g")
    assert verdict.status == VIOLATED, verdict.explain()
    keep("b6-a-gang-passed-over-by-a-later-single-pod", h.entries,
         Judgement("bound_when_room", {"group": asdict(PodGroup("g", NS, MAPPING)),
                                       "within": 10}), ["B6"], {"B6": "violated"},
         wrong="B6: PASS: podgroup/ns/g never waited 10s with room for its minimum (2 waits "
               "with room, each ended in time)",
         found="issue 67, writing the scenario of a gang against single pods: the room a "
               "single pod made after the gang took ended the gang's wait, so a stream of "
               "them could starve it and B6 pass")
    assert "pod/ns/single, created after them and of no higher priority, was bound into it " \
        "at +3.500s" in verdict.summary, verdict.summary
    assert "from +3.000s" in verdict.summary


def test_a_single_pod_older_than_the_gang_or_of_higher_priority_may_take_its_room():
    assert judge(_waiting_group_and_single(single_created=0), "g").status == PASS
    assert judge(_waiting_group_and_single(single_created=2, priority=5), "g").status == PASS
