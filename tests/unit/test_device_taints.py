"""D14 and D15 (KEP-5055 device taints) over synthetic histories: each fails on the bug it
guards, and a taint tolerated, or laid after the claim was made, is no violation."""

from __future__ import annotations

import json

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.properties.dra import evicted_for_taint, tolerates, untainted_allocation
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.store import load
from tests.verdict_corpus import CORPUS, SCENARIO, keep

NS = "ns"
UNHEALTHY = "example.com/unhealthy"


class History:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, resource: str, name: str, obj: dict, namespace: str = NS,
            type: str = "MODIFIED") -> None:
        at = float(len(self.entries))
        obj.setdefault("metadata", {}).update(name=name, namespace=namespace)
        self.entries.append(Entry(seq=len(self.entries), mono=at, wall=1e9 + at, kind=WATCH,
                                  resource=resource, namespace=namespace, name=name,
                                  uid=f"uid-{name}", rv=str(100 + len(self.entries)),
                                  type=type, object=obj))

    def slice(self, taints: dict[str, str]) -> None:
        """One pool of dev-0 and dev-1; ``taints``: device -> effect of an unhealthy taint."""
        devices = [{"name": d, **({"taints": [{"key": UNHEALTHY, "value": "true",
                                               "effect": taints[d]}]} if d in taints else {})}
                   for d in ("dev-0", "dev-1")]
        self.add("resourceslices", "s", {"spec": {
            "driver": "d", "nodeName": "node-1", "devices": devices,
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}, namespace="")

    def claim(self, name: str, device: str | None = None, tolerations: list | None = None
              ) -> None:
        request = {"name": "r", "exactly": {"deviceClassName": "c",
                                            **({"tolerations": tolerations}
                                               if tolerations else {})}}
        status = {"allocation": {"devices": {"results": [
            {"driver": "d", "pool": "p", "device": device, "request": "r"}]}}} if device else {}
        self.add("resourceclaims", name, {"spec": {"devices": {"requests": [request]}},
                                          "status": status})

    def pod(self, name: str, deleting: bool = False, extended: bool = False) -> None:
        """A pod using claim ``name``: named in its spec, or (``extended``) made by the
        scheduler for an extended resource and named in its status (KEP-5004)."""
        meta = {"deletionTimestamp": "2026-12-01T00:00:09Z"} if deleting else {}
        spec = {"nodeName": "node-1"}
        status = {"phase": "Running"}
        if extended:
            status["extendedResourceClaimStatus"] = {"resourceClaimName": name, "requestMappings": [
                {"containerName": "work", "resourceName": "example.com/gpu",
                 "requestName": "container-0-request-0"}]}
        else:
            spec["resourceClaims"] = [{"name": "dev", "resourceClaimName": name}]
        self.add("pods", name, {"metadata": meta, "spec": spec, "status": status})

    def end(self) -> None:
        for _ in range(15):  # later records: the history reaches 15 s further
            self.add("nodes", "node-1", {"spec": {}}, namespace="")


def test_a_claim_made_after_a_noschedule_taint_and_allocated_that_device_is_violated():
    h = History()
    h.slice({"dev-0": "NoSchedule"})
    h.claim("a")
    h.claim("a", "dev-0")
    verdict = untainted_allocation(h.entries, NS)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "device d/p/dev-0 (taint example.com/unhealthy=true:NoSchedule)" in verdict.summary


def test_a_tolerated_taint_or_an_untainted_device_passes():
    h = History()
    h.slice({"dev-0": "NoSchedule"})
    h.claim("a")
    h.claim("a", "dev-1")
    tolerating = [{"key": UNHEALTHY, "operator": "Exists"}]
    h.claim("t", tolerations=tolerating)
    h.claim("t", "dev-0", tolerations=tolerating)
    verdict = untainted_allocation(h.entries, NS)
    assert verdict.status == PASS and "(2 allocations)" in verdict.summary, verdict.explain()


def test_a_taint_laid_after_the_claim_was_made_is_not_blamed_on_its_allocation():
    h = History()
    h.slice({})
    h.claim("a")
    h.slice({"dev-0": "NoSchedule"})
    h.claim("a", "dev-0")  # the scheduler may have decided on a view a moment old
    assert untainted_allocation(h.entries, NS).status == PASS


def test_no_allocation_is_nothing_to_judge():
    h = History()
    h.slice({})
    h.claim("a")
    assert untainted_allocation(h.entries, NS).status == UNKNOWN


def test_a_pod_on_a_noexecute_device_not_deleted_within_the_bound_is_violated():
    h = History()
    h.slice({})
    h.claim("a", "dev-0")
    h.pod("a")
    h.slice({"dev-0": "NoExecute"})
    h.end()
    verdict = evicted_for_taint(h.entries, NS, 10)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/ns/a used device d/p/dev-0 (taint example.com/unhealthy=true:NoExecute)" in \
        verdict.summary


def test_a_pod_being_deleted_in_time_passes_and_a_tolerating_one_is_not_due():
    h = History()
    h.slice({})
    h.claim("a", "dev-0")
    h.claim("k", "dev-1", tolerations=[{"key": UNHEALTHY, "operator": "Exists",
                                        "effect": "NoExecute"}])
    h.pod("a")
    h.pod("k")
    h.slice({"dev-0": "NoExecute", "dev-1": "NoExecute"})
    h.pod("a", deleting=True)
    h.end()
    verdict = evicted_for_taint(h.entries, NS, 10)
    assert verdict.status == PASS and "each of 1 pods" in verdict.summary, verdict.explain()


def test_a_toleration_with_no_effect_tolerates_every_effect():
    """As for node taints, and as Kubernetes' device taints page says; the 1.37.2 eviction
    controller honours only a toleration whose effect is NoExecute."""
    taint = {"key": UNHEALTHY, "value": "true", "effect": "NoExecute"}
    assert tolerates([{"key": UNHEALTHY, "operator": "Exists"}], taint)
    assert tolerates([{"operator": "Exists"}], taint)
    assert tolerates([{"key": UNHEALTHY, "value": "true"}], taint)
    assert not tolerates([{"key": UNHEALTHY, "value": "false"}], taint)
    assert not tolerates([{"key": UNHEALTHY, "operator": "Exists", "effect": "NoSchedule"}],
                         taint)


def test_a_pod_given_its_device_through_an_extended_resource_is_due_as_well():
    """kubernetes#141290: before 1.37.2 the eviction controller read only the claims of a pod's
    spec, and kept a pod whose claim the scheduler made for its extended resource."""
    h = History()
    h.slice({})
    h.claim("x", "dev-0")
    h.pod("x", extended=True)
    h.slice({"dev-0": "NoExecute"})
    h.end()
    verdict = evicted_for_taint(h.entries, NS, 10)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/ns/x used device d/p/dev-0" in verdict.summary
    h = History()
    h.slice({})
    h.claim("x", "dev-0")
    h.pod("x", extended=True)
    h.slice({"dev-0": "NoExecute"})
    h.pod("x", deleting=True, extended=True)
    h.end()
    verdict = evicted_for_taint(h.entries, NS, 10)
    assert verdict.status == PASS and "each of 1 pods" in verdict.summary, verdict.explain()


def rule(h: History, name: str, effect: str, selector: dict | None) -> None:
    """A DeviceTaintRule (cluster-scoped): an administrator's taint on the devices it selects."""
    h.add("devicetaintrules", name, {"spec": {
        **({"deviceSelector": selector} if selector is not None else {}),
        "taint": {"key": UNHEALTHY, "value": "true", "effect": effect}}}, namespace="")


def test_a_device_taint_rule_evicts_the_pods_on_the_devices_it_selects():
    h = History()
    h.slice({})
    h.claim("a", "dev-0")
    h.claim("b", "dev-1")
    h.pod("a")
    h.pod("b")
    rule(h, "r", "NoExecute", {"driver": "d", "pool": "p", "device": "dev-0"})
    h.end()
    verdict = evicted_for_taint(h.entries, NS, 10)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/ns/a used device d/p/dev-0 (taint example.com/unhealthy=true:NoExecute)" in \
        verdict.summary
    assert "devicetaintrules" in verdict.reads


def test_a_rule_without_a_selector_picks_nothing_and_an_empty_one_everything():
    for selector, due in ((None, False), ({}, True), ({"pool": "other"}, False)):
        h = History()
        h.slice({})
        h.claim("a", "dev-0")
        h.pod("a")
        rule(h, "r", "NoExecute", selector)
        h.end()
        status = evicted_for_taint(h.entries, NS, 10).status
        assert status == (VIOLATED if due else UNKNOWN), (selector, status)


def test_a_claim_made_after_a_rule_tainted_its_device_and_allocated_it_is_violated():
    h = History()
    h.slice({})
    rule(h, "r", "NoSchedule", {"device": "dev-0"})
    h.claim("a")
    h.claim("a", "dev-0")
    verdict = untainted_allocation(h.entries, NS)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "device d/p/dev-0 (taint example.com/unhealthy=true:NoSchedule)" in verdict.summary


CORPUS_CASES = {  # slug: (true status, where it was found); D15 said UNKNOWN on each before
    "d15-a-pod-given-its-device-through-an-extended-resource-kept": (
        VIOLATED, "the embedded cluster at 1.37.0, dra_device_taints.feature (issue 68, "
        "kubernetes#141290)"),
    "d15-a-pod-given-its-device-through-an-extended-resource-evicted": (
        PASS, "the embedded cluster at 1.37.2, dra_device_taints.feature (issue 68)"),
    "d15-a-device-taint-rule-evicts": (
        PASS, "the embedded cluster at 1.37.2, dra_device_taints.feature (issue 68)"),
}


def test_d15_judges_an_extended_resources_claim_and_a_rules_taint_on_real_histories():
    """A pod given its device through an extended resource names its claim in its status, and
    an administrator's DeviceTaintRule is not in a slice: D15 saw neither, and said the
    precondition never held."""
    for slug, (truth, found) in CORPUS_CASES.items():
        history = load(CORPUS / slug / SCENARIO)
        record = json.loads((CORPUS / slug / SCENARIO / "judgements.jsonl").read_text())
        judgement = Judgement("evicted_for_taint", record["params"])
        verdict = properties.judge(["D15"], judgement, history)
        assert verdict.status == truth, (slug, verdict.explain())
        keep(slug, history, judgement, ["D15"], {"D15": truth},
             "D15: UNKNOWN: the precondition never held: no pod of … used a device tainted "
             "NoExecute that its claim does not tolerate", found)
