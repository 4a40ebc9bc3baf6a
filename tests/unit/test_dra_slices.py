"""D12, what a driver's ResourceSlices list of a node's devices: each check shown failing on the
history of the bug it guards (a device the node does not have; a slice the kubelet deleted at
its restart never published again) and passing on a driver that kept the contract."""

from __future__ import annotations

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.timeline.entry import WATCH, Entry

DRIVER = "gpu.aftershock.io"


def a_slice(node: str, count: int, generation: int = 1, first: int = 0,
            driver: str = DRIVER) -> dict:
    return {"metadata": {"name": f"{node}-{driver}-{generation}"},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
                     "devices": [{"name": f"dev-{i}"} for i in range(first, first + count)]}}


def history(*changes: tuple[float, str, dict]) -> list[Entry]:
    """Watch events of resourceslices at recorder times: (time, type, slice)."""
    return [Entry(seq=seq, mono=at, wall=at, kind=WATCH, resource="resourceslices",
                  name=obj["metadata"]["name"], uid=obj["metadata"]["name"], rv=str(seq + 1),
                  type=kind, object=obj)
            for seq, (at, kind, obj) in enumerate(changes)]


def judge(check: str, params: dict, timeline: list[Entry]):
    return properties.judge(["D12"], Judgement(check, params), timeline)


def present(timeline: list[Entry], per_node: int = 4):
    return judge("only_present_devices", {"driver": DRIVER, "per_node": per_node}, timeline)


def again(timeline: list[Entry], now: float | None = None):
    return judge("published_again", {"driver": DRIVER, "node": "node-1", "since": 110.0,
                                     "back": 115.0, "within": 60, "now": now}, timeline)


# --- only the devices a node has --------------------------------------------------------------

def test_a_slice_with_one_device_more_than_the_node_has_is_a_violation():
    verdict = present(history((100, "ADDED", a_slice("node-1", 4)),
                                (101, "ADDED", a_slice("node-2", 5))))
    assert verdict.status == VIOLATED, verdict.explain()
    assert f"the ResourceSlices of {DRIVER} for node/node-2 listed 5 devices (dev-0, dev-1, " \
           "dev-2, dev-3, dev-4), and a node has 4" in verdict.summary


def test_a_device_in_two_slices_of_one_pool_is_a_violation_an_older_generation_is_not():
    newer = a_slice("node-1", 2, generation=2)
    newer["metadata"]["name"] = "other"
    verdict = present(history((100, "ADDED", a_slice("node-1", 2)),
                                (101, "ADDED", a_slice("node-1", 2, generation=2)),
                                (102, "ADDED", newer)))
    assert verdict.status == VIOLATED, verdict.explain()
    assert "device dev-0 of pool node-1 listed 2 times" in verdict.summary
    assert verdict.witness[0].mono == 102  # generation 1 beside 2 was a rollover, not a double


def test_slices_within_the_nodes_devices_pass_and_another_drivers_are_not_judged():
    timeline = history((100, "ADDED", a_slice("node-1", 4)), (101, "ADDED", a_slice("node-2", 4)),
                       (102, "ADDED", a_slice("node-3", 9, driver="other.example.com")))
    verdict = present(timeline)
    assert verdict.status == PASS, verdict.explain()
    assert "2 nodes, each listing at most 4 devices" in verdict.summary
    verdict = present(timeline[2:])
    assert verdict.status == UNKNOWN and "no ResourceSlice of gpu.aftershock.io" in \
        verdict.summary


# --- published again after the kubelet (or the plugin) is back ------------------------------

def test_a_slice_the_kubelet_deleted_at_its_restart_and_never_made_again_is_a_violation():
    timeline = history((100, "ADDED", a_slice("node-1", 4)),
                       (111, "DELETED", a_slice("node-1", 4)),
                       (120, "ADDED", a_slice("node-2", 4)))
    verdict = again(timeline, now=180)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "no longer listed 4 of the 4 devices they listed when the fault began" in \
        verdict.summary
    assert verdict.witness[0].type == "DELETED"


def test_a_slice_listed_again_within_the_bound_passes_and_one_never_withdrawn_too():
    timeline = history((100, "ADDED", a_slice("node-1", 4)),
                       (111, "DELETED", a_slice("node-1", 4)),
                       (140, "ADDED", a_slice("node-1", 4, generation=2)))
    verdict = again(timeline, now=180)
    assert verdict.status == PASS, verdict.explain()
    assert "withdrawn at +11.0s and listed again by +40.0s" in verdict.summary
    verdict = again(timeline[:1], now=180)
    assert verdict.status == PASS and "never withdrawn" in verdict.summary


def test_nothing_published_before_or_a_history_ending_before_the_bound_is_unknown():
    verdict = again(history((120, "ADDED", a_slice("node-1", 4))), now=180)
    assert verdict.status == UNKNOWN and "the precondition never held" in verdict.summary
    verdict = again(history((100, "ADDED", a_slice("node-1", 4)),
                              (111, "DELETED", a_slice("node-1", 4))), now=150)
    assert verdict.status == UNKNOWN and "before the bound of 60s" in verdict.summary
