"""D18-D20 over recorded histories: a driver's plugin upgraded in place (its slices kept, its
pods started, no registration socket left unserved)."""

from __future__ import annotations

import json

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.properties.dra_upgrade import registry_pending
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.store import load
from tests.unit.test_dra_node_faults import OFFSET, WALL, pod, reads
from tests.verdict_corpus import CORPUS, SCENARIO, keep

DRIVER = "gpu.example.com"
REG = "/var/lib/kubelet/plugins_registry"


def entries(*changes: tuple[float, str, str, dict | str]) -> list[Entry]:
    """Watch events at recorder times: (time, resource, type, object) or, for a deletion,
    (time, resource, "DELETED", name); node-1 is there throughout."""
    found = [Entry(seq=0, mono=100.0, wall=WALL, kind=WATCH, resource="nodes", name="node-1",
                   uid="node-1", rv="1", type="SYNC", object={"metadata": {"name": "node-1"}})]
    objects: dict[str, dict] = {}
    for seq, (at, resource, kind, obj) in enumerate(changes, 1):
        name = obj if isinstance(obj, str) else obj["metadata"]["name"]
        if not isinstance(obj, str):
            objects[name] = obj
        namespace = "" if resource == "resourceslices" else "ns"
        found.append(Entry(seq=seq, mono=at, wall=at - OFFSET, kind=WATCH, resource=resource,
                           namespace=namespace, name=name, uid=f"uid-{name}", rv=str(seq + 1),
                           type=kind, object=objects.get(name) if kind == "DELETED" else obj))
    return found


def slice_(name: str, node: str = "node-1") -> dict:
    return {"metadata": {"name": name}, "spec": {"driver": DRIVER, "nodeName": node,
                                                  "pool": {"name": node, "generation": 1},
                                                  "devices": [{"name": "gpu-0"}]}}


def judge(label: str, check: str, params: dict, timeline: list[Entry]):
    return properties.judge([label], Judgement(check, params), timeline)


# --- D18: no slice deleted once the upgrade began -----------------------------------------

def kept(timeline, since=110.0):
    return judge("D18", "slices_kept", {"driver": DRIVER, "since": since}, timeline)


def test_slices_updated_in_place_through_the_upgrade_pass():
    verdict = kept(entries((101, "resourceslices", "ADDED", slice_("node-1-gpu-a")),
                           (115, "resourceslices", "MODIFIED", slice_("node-1-gpu-a")),
                           (130, "pods", "ADDED", pod("p"))))
    assert verdict.status == PASS, verdict.explain()
    assert "the 1 ResourceSlices of gpu.example.com for 1 nodes" in verdict.summary


def test_a_slice_deleted_and_made_again_during_the_upgrade_is_a_violation():
    """The tidy variant: the old pod deletes the node's slices as it stops, its successor's."""
    verdict = kept(entries((101, "resourceslices", "ADDED", slice_("node-1-gpu-a")),
                           (115, "resourceslices", "DELETED", "node-1-gpu-a"),
                           (116, "resourceslices", "ADDED", slice_("node-1-gpu-b")),
                           (130, "pods", "ADDED", pod("p"))))
    assert verdict.status == VIOLATED, verdict.explain()
    assert "resourceslice/node-1-gpu-a of gpu.example.com for node/node-1 was deleted at " \
           "+15.0s, after the driver's plugin began its upgrade (+10.0s); a slice for the " \
           "node was made again after it (resourceslice/node-1-gpu-b, by +16.0s)" in verdict.summary


def test_a_slice_deleted_before_the_upgrade_or_none_there_is_not_d18s():
    before = kept(entries((101, "resourceslices", "ADDED", slice_("node-1-gpu-a")),
                          (105, "resourceslices", "DELETED", "node-1-gpu-a"),
                          (106, "resourceslices", "ADDED", slice_("node-1-gpu-b")),
                          (130, "pods", "ADDED", pod("p"))))
    assert before.status == PASS, before.explain()
    none = kept(entries((130, "pods", "ADDED", pod("p"))))
    assert none.status == UNKNOWN and "precondition never held" in none.summary, \
        none.explain()


# --- D19: pods with claims start through the upgrade ---------------------------------------

def started(timeline, within=30, since=110.0):
    return judge("D19", "pods_started", {"namespace": "ns", "since": since, "within": within},
                 timeline)


def placed(name: str) -> dict:
    return pod(name, waiting="ContainerCreating", phase="Pending")


def test_pods_placed_during_the_upgrade_that_run_in_time_pass():
    verdict = started(entries((101, "pods", "ADDED", pod("old", started=101)),
                              (112, "pods", "ADDED", placed("new")),
                              (120, "pods", "MODIFIED", pod("new", started=120)),
                              (150, "pods", "MODIFIED", pod("old", started=101))))
    assert verdict.status == PASS, verdict.explain()
    assert "1 pods with a claim not yet running when the driver's plugin began its upgrade " \
           "(+" in verdict.summary and "ran, the slowest within 8.0s of that or of its " \
           "placement, if later" in verdict.summary


def test_a_pod_that_never_starts_is_a_violation_naming_its_state():
    verdict = started(entries((101, "pods", "ADDED", pod("old", started=101)),
                              (112, "pods", "ADDED", placed("new")),
                              (160, "pods", "MODIFIED", pod("old", started=101))))
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/ns/new, placed at +12.0s (the driver's plugin began its upgrade at +10.0s), " \
           "did not run within 30s: container main waiting, ContainerCreating" in \
           verdict.summary


def test_a_pod_with_a_claim_that_fails_is_a_violation():
    verdict = started(entries((101, "pods", "ADDED", pod("old", started=101)),
                              (115, "pods", "MODIFIED", pod("old", waiting="Error",
                                                            phase="Failed"))))
    assert verdict.status == VIOLATED and "pod/ns/old, which uses a claim, failed at +15.0s" \
        in verdict.summary, verdict.explain()


def test_a_history_ending_before_the_bound_or_no_pod_placed_is_unknown():
    early = started(entries((101, "pods", "ADDED", pod("old", started=101)),
                            (112, "pods", "ADDED", placed("new"))), within=60)
    assert early.status == UNKNOWN and "before the 60s bound of pod/ns/new" in early.summary, \
        early.explain()
    none = started(entries((101, "pods", "ADDED", pod("old", started=101)),
                           (150, "pods", "MODIFIED", pod("old", started=101))))
    assert none.status == UNKNOWN and "no pod with a claim not yet running" in none.summary, \
        none.explain()


# --- D20: no registration socket left unserved --------------------------------------------

def registry(*sockets: tuple[str, str]) -> str:
    return "".join(f"{state} {REG}/{name}\n" for name, state in sockets)


def live(lines, within=10):
    return judge("D20", "registrations_live", {"registry": reads(*lines), "within": within},
                 entries((101, "pods", "ADDED", pod("p", started=101)),
                         (100 + len(lines), "pods", "MODIFIED", pod("p", started=101))))


OLD, NEW = f"{DRIVER}-uid-old-reg.sock", f"{DRIVER}-uid-new-reg.sock"


def test_a_socket_removed_as_its_plugin_stops_passes():
    verdict = live([registry((OLD, "live"))] * 5 + [registry((OLD, "live"), (NEW, "live"))] * 3
                   + [registry((OLD, "dead"), (NEW, "live"))] + [registry((NEW, "live"))] * 10)
    assert verdict.status == PASS, verdict.explain()
    assert "2 plugin sockets served on 1 nodes, none refused for more than 10s" in \
        verdict.summary


def test_a_socket_left_unserved_is_a_violation():
    """The stale variant: it exits without closing its sockets."""
    verdict = live([registry((OLD, "live"))] * 5
                   + [registry((OLD, "dead"), (NEW, "live"))] * 15)
    assert verdict.status == VIOLATED, verdict.explain()
    assert f"the plugin socket {REG}/{OLD} on node/node-1 was refused for 14.0s" in \
        verdict.summary
    assert registry_pending(reads(*[registry((OLD, "live"))] * 2 + [registry((OLD, "dead"))]))
    assert not registry_pending(reads(registry((OLD, "live")), registry()))


def test_a_socket_refused_from_the_first_read_is_not_the_scenarios():
    """Left by an earlier scenario's plugin on a reused cluster: never served in this one."""
    verdict = live([registry((OLD, "dead"), (NEW, "live"))] * 20)
    assert verdict.status == PASS, verdict.explain()


def test_no_socket_served_or_a_silent_loop_is_unknown():
    none = live([registry()] * 20)
    assert none.status == UNKNOWN and "no plugin socket" in none.summary, none.explain()
    silent = judge("D20", "registrations_live", {
        "registry": reads(registry((OLD, "live")), registry((OLD, "live")), every=10),
        "within": 10}, entries((101, "pods", "ADDED", pod("p", started=101)),
                               (125, "pods", "MODIFIED", pod("p", started=101))))
    assert silent.status == UNKNOWN and "not seen" in silent.summary, silent.explain()


def test_a_pod_that_ends_failed_once_deleted_did_not_fail_to_start():
    """Scaled down, a Deployment's pod may end Failed (its container stopped by a signal): on
    kind at 1.37.2 D19 first called that a failure."""
    going = pod("old", waiting="Error", phase="Failed")
    going["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    timeline = entries((101, "pods", "ADDED", pod("old", started=101)),
                       (112, "pods", "ADDED", placed("new")),
                       (120, "pods", "MODIFIED", pod("new", started=120)),
                       (130, "pods", "MODIFIED", going), (131, "pods", "DELETED", "old"),
                       (150, "pods", "MODIFIED", pod("new", started=120)))
    judgement = Judgement("pods_started", {"namespace": "ns", "since": 110.0, "within": 30})
    verdict = properties.judge(["D19"], judgement, timeline)
    assert verdict.status == PASS, verdict.explain()
    keep("d19-a-pod-that-ends-failed-once-deleted", timeline, judgement, ["D19"],
         {"D19": PASS}, "D19: VIOLATED: pod/ns/old, which uses a claim, failed at +30.0s",
         "drakubelet-correct on kind at 1.37.2, dra_driver_upgrade.feature (issue 68)")


def test_a_deletion_no_request_dates_is_placed_by_the_clusters_order():
    """The tidy variant deletes the node's slices with one collection request: no audited
    request names the slice, so its deletion's moment reaches back to its last change, before
    the upgrade began. On kind at 1.37.2 D18 said UNKNOWN; a change certainly made after the
    upgrade began comes before the deletion in the cluster's order, so the deletion came
    after it too."""
    slug = "d18-a-slice-deleted-by-a-collection-request"
    history = load(CORPUS / slug / SCENARIO)
    record = json.loads((CORPUS / slug / SCENARIO / "judgements.jsonl").read_text())
    verdict = properties.judge(["D18"], Judgement("slices_kept", record["params"]), history)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "was deleted between +11.5s and +25.8s, after controllerrevision/" in verdict.summary
    assert "in the cluster's order, after the driver's plugin began its upgrade" in \
        verdict.summary
    keep(slug, history, Judgement("slices_kept", record["params"]), ["D18"],
         {"D18": VIOLATED}, "D18: UNKNOWN: resourceslice/00000-gpu.aftershock.io-node-3-4w8dp "
         "of gpu.aftershock.io for node/node-3 was deleted by +21.0s, perhaps before the "
         "upgrade began (+11.5s)",
         "drakubelet-tidy on kind at 1.37.2, dra_driver_upgrade.feature (issue 68)")


def test_a_deletion_known_only_between_two_moments_is_told_so():
    """dra-example-driver on kind at 1.37.2: its slice went in a kubelet's collection delete,
    which no audited request names, so the deletion is known only between its last change and
    the history's end; D18 said it was "deleted at" the end."""
    slug = "d18-a-slice-deleted-by-a-collection-request"
    history = load(CORPUS / slug / SCENARIO)
    params = json.loads((CORPUS / slug / SCENARIO / "judgements.jsonl").read_text())["params"]
    earlier = {**params, "since": params["since"] - 5}  # before the deletion's last change
    verdict = properties.judge(["D18"], Judgement("slices_kept", earlier), history)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "was deleted between +8.4s and +25.8s, after the driver's plugin began its upgrade " \
           "(+6.5s)" in verdict.summary
