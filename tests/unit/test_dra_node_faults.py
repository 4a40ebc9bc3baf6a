"""D8-D11, the driver contract under faults of the node agent, judged from what the API server
recorded and what each node's kubelet checkpointed; each shown failing on the history of the
bug it guards, and passing on the history of a node that kept the contract."""

from __future__ import annotations

import copy
import json
import zlib
from datetime import UTC, datetime

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.concepts.dra import kubelet_duplicates
from aftershock.history import History, Span
from aftershock.properties import Judgement
from aftershock.properties.dra_node import pending
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.store import load
from tests.verdict_corpus import CORPUS, SCENARIO, keep

DRIVER = "gpu.example.com"
WALL = 1.9e9  # the nodes' clock (this machine's, on kind) at recorder time 100
OFFSET = 100 - WALL


def checkpoint(*claims: tuple[str, list[str] | None, list[str]],
               cdi: dict[str, list[str]] | None = None) -> str:
    """The kubelet's DRA checkpoint: claims (name, devices, pod UIDs) of namespace ns; devices
    None for a claim whose preparation the kubelet began (its drivers asked, no answer yet)."""
    entries = [{"ClaimUID": f"uid-{name}", "ClaimName": name, "Namespace": "ns",
                "PodUIDs": {uid: {} for uid in pods},
                "DriverState": {DRIVER: {"Devices": None if devices is None else [
                    {"PoolName": "node-1", "DeviceName": device, "RequestNames": ["gpu"],
                     "CDIDeviceIDs": (cdi or {}).get(device, [f"k8s.{DRIVER}/gpu={device}"])}
                    for device in devices]}}} for name, devices, pods in claims]
    data = json.dumps({"kind": "DRACheckpoint", "ClaimInfoStateList": entries})
    return json.dumps({"Data": data, "Checksum": zlib.crc32(data.encode())})


def reads(*texts: str, start: float = 0.0, every: float = 1.0, node: str = "node-1"):
    """A node's read loop: one copy per second from recorder time 100 + start."""
    return [{"time": WALL + start + i * every, "node": node, "text": text}
            for i, text in enumerate(texts)]


def stamp(at: float) -> str:
    """An RFC 3339 time (whole seconds, as the kubelet writes) at recorder time ``at``."""
    return datetime.fromtimestamp(at - OFFSET, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name: str, node: str = "node-1", started: float | None = None,
        waiting: str | None = None, claim: str | None = "gpu", phase: str = "Running") -> dict:
    containers = [{"name": "main", "state": (
        {"running": {"startedAt": stamp(started)}} if started is not None else
        {"waiting": {"reason": waiting, "message": "failed to inject CDI devices"}})}]
    ready = "True" if started is not None else "False"
    spec = {"nodeName": node}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}, "spec": spec,
            "status": {"phase": phase, "containerStatuses": containers,
                       "conditions": [{"type": "Ready", "status": ready}]}}


def history(*changes: tuple[float, str, dict | str], nodes=("node-1",)) -> list[Entry]:
    """Watch events at recorder times: (time, type, pod) or (time, "DELETED", name)."""
    entries = [Entry(seq=0, mono=100.0, wall=WALL, kind=WATCH, resource="nodes", name=node,
                     uid=node, rv="1", type="SYNC", object={"metadata": {"name": node}})
               for node in nodes]
    for seq, (at, kind, obj) in enumerate(changes, len(entries)):
        name = obj if isinstance(obj, str) else obj["metadata"]["name"]
        entries.append(Entry(seq=seq, mono=at, wall=at - OFFSET, kind=WATCH, resource="pods",
                             namespace="ns", name=name, uid=f"uid-{name}", rv=str(seq + 1),
                             type=kind, object=None if isinstance(obj, str) else obj))
    return entries


def judge(label: str, check: str, params: dict, timeline: list[Entry]):
    return properties.judge([label], Judgement(check, params), timeline)


# --- D8: a pod runs again after its node rebooted ----------------------------------------

def reboot(timeline, within=30):
    return judge("D8", "ran_again", {"node": "node-1", "since": 110.0, "within": within,
                                     "namespace": "ns"}, timeline)


def test_a_pod_that_runs_again_after_the_reboot_passes():
    verdict = reboot(history((101, "ADDED", pod("p", started=101)),
                             (118, "MODIFIED", pod("p", waiting="ContainerCreating")),
                             (125, "MODIFIED", pod("p", started=124)),
                             (150, "MODIFIED", pod("p", started=124))))
    assert verdict.status == PASS, verdict.explain()
    assert "ran again, the last after 15.0s" in verdict.summary


def test_a_pod_stuck_after_the_reboot_is_a_violation_naming_its_containers_state():
    """kubernetes#141433: the checkpoint said prepared, the CDI spec on tmpfs was gone."""
    verdict = reboot(history((101, "ADDED", pod("p", started=101)),
                             (118, "MODIFIED", pod("p", waiting="CreateContainerError")),
                             (150, "MODIFIED", pod("p", waiting="CreateContainerError"))))
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/ns/p, running on node/node-1 when it rebooted (+10.0s), did not run again " \
           "within 30s: container main waiting, CreateContainerError: failed to inject" \
           in verdict.summary


def test_a_status_from_before_the_reboot_is_not_running_again():
    """The API server may still show the pod running as it ran before the node went down."""
    verdict = reboot(history((101, "ADDED", pod("p", started=101)),
                             (150, "MODIFIED", pod("p", started=101))))
    assert verdict.status == VIOLATED and "from before the reboot" in verdict.summary


def test_a_bound_that_passed_with_nothing_recorded_at_it_is_judged():
    """On kind at 1.35.4 the step waited out its bound (+129.3s) and judged; the last event
    was recorded 0.1 s before the bound, and D8 said the history ended before it (UNKNOWN).
    The history is known up to the judgement: the pod had not run again, a violation."""
    timeline = history((101, "ADDED", pod("p", started=101)),
                       (118, "MODIFIED", pod("p", waiting="ContainerCreating")),
                       (139.9, "MODIFIED", pod("p", waiting="ContainerCreating")))
    params = {"node": "node-1", "since": 110.0, "within": 30, "namespace": "ns"}
    assert judge("D8", "ran_again", params, timeline).status == UNKNOWN  # judged when?
    judged = {**params, "now": 140.05}
    verdict = judge("D8", "ran_again", judged, timeline)
    assert verdict.status == VIOLATED, verdict.explain()
    keep("d8-a-bound-reached-between-events", timeline, Judgement("ran_again", judged),
         ["D8"], {"D8": VIOLATED}, UNKNOWN, "its run on kind at 1.35.4 (issue 46)")


def test_a_pod_without_a_claim_is_none_of_d8s():
    """On kind the reference plugin's own pod ran on the rebooted node: it was counted (3 pods
    where the workload had 2 there). A driver's pod is not a pod whose claim was prepared."""
    verdict = reboot(history((101, "ADDED", pod("plugin", started=101, claim=None)),
                             (101, "ADDED", pod("p", started=101)),
                             (125, "MODIFIED", pod("p", started=124)),
                             (150, "MODIFIED", pod("plugin", started=101, claim=None))))
    assert verdict.status == PASS and verdict.summary.startswith("1 pods"), verdict.explain()


def test_no_pod_on_the_node_or_a_history_ending_before_the_bound_is_unknown():
    elsewhere = reboot(history((101, "ADDED", pod("p", node="node-2", started=101)),
                               (150, "MODIFIED", pod("p", node="node-2", started=101))))
    assert elsewhere.status == UNKNOWN and "precondition never held" in elsewhere.summary
    early = reboot(history((101, "ADDED", pod("p", started=101)),
                           (118, "MODIFIED", pod("p", waiting="ContainerCreating"))))
    assert early.status == UNKNOWN and "before the bound" in early.summary, early.explain()


# --- D9: no device or CDI id listed twice ------------------------------------------------

def test_a_device_listed_twice_after_a_kubelet_restart_is_a_violation():
    """kubernetes#140471: the re-preparation's answer appended to the one kept."""
    once = checkpoint(("a", ["gpu-0"], ["uid-p"]))
    twice = checkpoint(("a", ["gpu-0", "gpu-0"], ["uid-p"]))
    assert kubelet_duplicates(once) == []
    verdict = judge("D9", "no_duplicate_devices", {"node_state": reads(once, twice)},
                    history((101, "ADDED", pod("p", started=101))))
    assert verdict.status == VIOLATED, verdict.explain()
    assert f"for claim ns/a, device node-1/gpu-0 of {DRIVER} listed 2 times" in verdict.summary
    cdi = checkpoint(("a", ["gpu-0"], ["uid-p"]), cdi={"gpu-0": ["k8s.x/gpu=0", "k8s.x/gpu=0"]})
    assert kubelet_duplicates(cdi) == [("ns/a", "CDI device k8s.x/gpu=0 listed 2 times")]


def test_a_claim_an_earlier_scenario_left_is_not_this_scenarios_to_judge():
    """On kind the reference plugin's faulty variant left its scenario's claim prepared, with
    its device twice, in node-1's checkpoint; the correct variant's next scenario on the same
    cluster was judged VIOLATED for it. D9 judges the scenario's own claims."""
    left = json.loads(checkpoint(("a", ["gpu-0"], ["uid-p"])))
    data = json.loads(left["Data"])
    old = dict(copy.deepcopy(data["ClaimInfoStateList"][0]), Namespace="earlier",
               ClaimName="shared")
    old["DriverState"][DRIVER]["Devices"] *= 2
    data["ClaimInfoStateList"].append(old)
    text = json.dumps(data)
    both = json.dumps({"Data": text, "Checksum": zlib.crc32(text.encode())})
    timeline = history((101, "ADDED", pod("p", started=101)))
    params = {"node_state": reads(both, both, both), "namespace": "ns"}
    verdict = judge("D9", "no_duplicate_devices", params, timeline)
    assert verdict.status == PASS, verdict.explain()
    unscoped = judge("D9", "no_duplicate_devices", {"node_state": reads(both, both, both)},
                     timeline)
    assert unscoped.status == VIOLATED and "earlier/shared" in unscoped.summary
    keep("d9-a-claim-an-earlier-scenario-left", timeline,
         Judgement("no_duplicate_devices", params), ["D9"], {"D9": PASS}, VIOLATED,
         "the reference plugin pair's run on kind (issue 46)")


def test_distinct_devices_pass_and_a_silent_node_is_unknown():
    text = checkpoint(("a", ["gpu-0"], ["uid-p"]), ("b", ["gpu-1"], ["uid-q"]))
    timeline = history((101, "ADDED", pod("p", started=101)))
    assert judge("D9", "no_duplicate_devices", {"node_state": reads(text, text, text)},
                 timeline).status == PASS
    silent = judge("D9", "no_duplicate_devices",
                   {"node_state": reads(text, text, every=10)}, timeline)
    assert silent.status == UNKNOWN and "not seen" in silent.summary, silent.explain()


# --- D10: unprepared once the plugin is back ---------------------------------------------

def back(texts, timeline, within=10):
    return judge("D10", "unprepared_once_back", {
        "node_state": reads(*texts), "node": "node-1", "back": 103.5, "within": within},
        timeline)


# node-2 is read by no loop here: D10 judges node-1's state alone
GONE = history((101, "ADDED", pod("p", started=101)), (102, "DELETED", "p"),
               (120, "ADDED", pod("q", node="node-2", started=120)), nodes=("node-1", "node-2"))


def test_a_claim_left_prepared_while_the_plugin_was_down_goes_once_it_is_back():
    """node-2, which no loop read, is none of D10's business: on kind at 1.36.3 the
    control-plane node (no loop) made this UNKNOWN, where dra-example-driver had unprepared
    the claim 2 s after its plugin came back."""
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    texts = [held, held, held, held, held, empty] + [empty] * 14
    verdict = back(texts, GONE)
    assert verdict.status == PASS, verdict.explain()
    keep("d10-a-node-it-does-not-judge", GONE, Judgement("unprepared_once_back", {
        "node_state": reads(*texts), "node": "node-1", "back": 103.5, "within": 10}),
        ["D10"], {"D10": PASS}, UNKNOWN, "its first run on kind (issue 46)")


def test_a_claim_still_prepared_past_the_bound_is_a_violation():
    """The NVIDIA GPU driver's #1278: a plugin that forgot the claim never unprepares it."""
    held = checkpoint(("a", ["gpu-0"], ["uid-p"]))
    verdict = back([held] * 130, GONE)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "claim ns/a, whose pods were all gone, was still prepared on node/node-1 120s after" \
           in verdict.summary


def test_a_claim_unprepared_by_the_kubelets_next_retry_is_no_violation():
    """The kubelet retries an unprepare every 60 s (its DRA manager's reconcile loop), and
    Kubernetes' node e2e allows 120 s: a claim unprepared 70 s after the plugin came back was
    VIOLATED under the 60 s the feature asked. The bound is never shorter than the kubelet's
    retry, and the verdict says when the claim was seen gone."""
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    texts = [held] * 74 + [empty] * 60  # read from +100 s, the plugin back at +103.5 s
    verdict = back(texts, GONE, within=60)
    assert verdict.status == PASS, verdict.explain()
    assert "within 120s of its return (the 60s asked for is shorter than the kubelet's " \
           "retry): seen gone 70.5s after it was started again" in verdict.summary
    keep("d10-unprepared-by-the-kubelets-next-retry", GONE, Judgement("unprepared_once_back", {
        "node_state": reads(*texts), "node": "node-1", "back": 103.5, "within": 60}),
        ["D10"], {"D10": PASS}, VIOLATED, "the kubelet's retry read from its source (issue 65)")


def test_a_claim_unprepared_before_the_plugins_pod_was_seen_ready_is_judged():
    """On kind at 1.37.2 the kubelet's pod worker, retrying every second or two, unprepared
    dra-example-driver's claim 1.7 s after the plugin's pod started, before the pod was seen
    Ready, when the step took the plugin for back: the checkpoint then held nothing, and D10
    said its precondition never held. The claims are those held when the plugin was started
    again."""
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    texts = [held] * 5 + [empty] * 130  # read from +100 s: gone at +105 s
    params = {"node_state": reads(*texts), "node": "node-1", "back": 106.0, "within": 120,
              "returning": 103.3}
    verdict = judge("D10", "unprepared_once_back", params, GONE)
    assert verdict.status == PASS, verdict.explain()
    assert "seen gone 1.7s after it was started again" in verdict.summary
    keep("d10-unprepared-before-the-plugins-pod-was-ready", GONE,
         Judgement("unprepared_once_back", params), ["D10"], {"D10": PASS}, UNKNOWN,
         "dra-example-driver v0.2.1 on kind at 1.37.2 (issue 65)")


def test_a_claim_whose_pod_still_runs_is_not_judged_by_d10():
    held = checkpoint(("a", ["gpu-0"], ["uid-p"]))
    running = history((101, "ADDED", pod("p", started=101)))
    assert back([held] * 20, running).status == UNKNOWN


# --- D11: never unprepared while another pod on the node uses it --------------------------

SHARED = checkpoint(("c", ["gpu-0"], ["uid-p1", "uid-p2"]))


def test_a_shared_claim_unprepared_while_its_other_pod_runs_is_a_violation():
    """kubernetes PR #140212: deleting one pod unprepared a claim another still used."""
    timeline = history((101, "ADDED", pod("p1", started=101, claim="c")),
                       (101.5, "ADDED", pod("p2", started=101, claim="c")),
                       (102.5, "DELETED", "p1"), (120, "MODIFIED", pod("p2", started=101,
                                                                       claim="c")))
    verdict = judge("D11", "kept_while_used", {"node_state": reads(SHARED, SHARED, SHARED,
                                                                   checkpoint())}, timeline)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "claim ns/c was unprepared on node/node-1 while pod/ns/p2, running there, still " \
           "used it" in verdict.summary


def test_a_shared_claim_unprepared_after_its_last_pod_left_passes():
    timeline = history((101, "ADDED", pod("p1", started=101, claim="c")),
                       (101.5, "ADDED", pod("p2", started=101, claim="c")),
                       (102.2, "DELETED", "p1"), (102.4, "DELETED", "p2"),
                       (106, "ADDED", pod("q", node="node-2", started=106)))
    empty = checkpoint()
    verdict = judge("D11", "kept_while_used", {"node_state": reads(
        SHARED, SHARED, SHARED, empty, empty, empty, empty)}, timeline)
    assert verdict.status == PASS, verdict.explain()


def test_a_force_deletion_is_dated_by_its_request_to_its_removal():
    """On kind at 1.37.2 (dra-example-driver v0.2.1) the scenario force-deleted a pod: one
    request marked it (no grace, no finalizer) and removed it, two watch events. The history
    dated the mark by the request but left the removal open to the end of the record, so the
    pod was not certainly gone when the plugin was started again, and D10 said its
    precondition never held. A mark with no grace and nothing to wait for is removed by the
    request that made it."""
    slug = "d10-a-force-deletion-dated-by-its-request"
    history = load(CORPUS / slug / SCENARIO)
    record = json.loads((CORPUS / slug / SCENARIO / "judgements.jsonl").read_text())
    (life,) = [life for life in History.of(history).lives_of("pods")
               if life.name.endswith("5wmh9")]
    mark, removal = life.changes[-2:]
    assert removal.type == "DELETED" and (removal.lo, removal.hi) == (mark.lo, mark.hi)
    assert life.holds(Span.at(record["params"]["returning"]), lambda obj: obj is None) is True
    verdict = judge("D10", "unprepared_once_back", record["params"], history)
    assert verdict.status == PASS, verdict.explain()
    assert "seen gone 2.1s after it was started again" in verdict.summary
    keep(slug, history, Judgement("unprepared_once_back", record["params"]), ["D10"],
         {"D10": PASS}, UNKNOWN,
         "dra-example-driver v0.2.1 on kind at 1.37.2, its pods and node-2's reads (issue 65)")


# --- D16: unprepared once its pods are gone, nothing prepared for a pod deleted while down --

def once(texts, timeline, downs=(), within=120, start=0.0):
    return judge("D16", "unprepared_once", {"node_state": reads(*texts, start=start),
                                             "downs": list(downs), "within": within,
                                             "namespace": "ns"}, timeline)


KUBELET_DOWN = {"node": "node-1", "what": "kubelet", "since": 103.0, "back": 140.0}
# the pod is force-deleted at +110 s, while the kubelet of its node is down (+103 to +140 s)
DELETED_WHILE_DOWN = history((101, "ADDED", pod("p", started=101)), (110, "DELETED", "p"))


def test_a_claim_unprepared_once_the_kubelet_is_back_passes():
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    texts = [held] * 45 + [empty] * 20  # read from +100 s: gone at +145 s, 5 s after the return
    verdict = once(texts, DELETED_WHILE_DOWN, [KUBELET_DOWN])
    assert verdict.status == PASS, verdict.explain()
    assert "1 claims, each unprepared once on its node within 120s of its pods' going: seen " \
           "gone 35.0s after it" in verdict.summary


def test_the_bound_starts_again_when_the_kubelet_comes_back():
    """Gone at +110 s, the kubelet back at +140 s: unprepared at +245 s is within 120 s of the
    return, though not of the pod's going."""
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    texts = [held] * 145 + [empty] * 20
    assert once(texts, DELETED_WHILE_DOWN, [KUBELET_DOWN]).status == PASS
    assert once(texts, DELETED_WHILE_DOWN).status == VIOLATED


def test_a_claim_never_unprepared_is_a_violation():
    """What a plugin that reads the claim to unprepare it does when the claim went with its
    pod: the kubelet keeps it in its checkpoint."""
    held = checkpoint(("a", ["gpu-0"], ["uid-p"]))
    verdict = once([held] * 280, DELETED_WHILE_DOWN, [KUBELET_DOWN])
    assert verdict.status == VIOLATED, verdict.explain()
    assert "claim ns/a was still prepared on node/node-1 120s after every pod it was prepared " \
           "for was gone" in verdict.summary
    assert once([held] * 150, DELETED_WHILE_DOWN, [KUBELET_DOWN]).status == UNKNOWN


def test_a_claim_prepared_again_after_it_was_unprepared_is_a_violation():
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    verdict = once([held] * 45 + [empty] * 5 + [held] * 5 + [empty] * 5, DELETED_WHILE_DOWN,
                   [KUBELET_DOWN])
    assert verdict.status == VIOLATED, verdict.explain()
    assert "prepared again on node/node-1 after it was unprepared there" in verdict.summary


def test_a_claim_prepared_for_a_pod_deleted_while_the_kubelet_was_down_is_a_violation():
    """A pod placed on the node while its kubelet was down and deleted before it came back:
    the kubelet must not prepare its claim when it starts again."""
    timeline = history((101, "ADDED", pod("p", started=None, waiting="ContainerCreating",
                                          claim="b")),
                       (105, "MODIFIED", {**pod("p", waiting="ContainerCreating", claim="b"),
                                          "metadata": {"name": "p", "namespace": "ns",
                                                       "uid": "uid-p",
                                                       "deletionTimestamp": stamp(105)}}),
                       (150, "DELETED", "p"))
    empty, held = checkpoint(), checkpoint(("b", ["gpu-0"], ["uid-p"]))
    verdict = once([empty] * 45 + [held] * 3 + [empty] * 20, timeline, [KUBELET_DOWN])
    assert verdict.status == VIOLATED, verdict.explain()
    assert "claim ns/b was prepared on node/node-1 after its kubelet came back (+40.0s), for " \
           "pods whose deletion began while it was down" in verdict.summary
    never = once([empty] * 70, timeline, [KUBELET_DOWN])
    assert never.status == UNKNOWN and "no claim prepared" in never.summary, never.explain()


def test_a_claim_whose_pod_still_runs_is_not_judged_by_d16():
    held = checkpoint(("a", ["gpu-0"], ["uid-p"]))
    running = history((101, "ADDED", pod("p", started=101)))
    assert once([held] * 20, running).status == UNKNOWN


# --- D17: no CDI spec left for a claim the kubelet does not hold, no CDI id for two claims ---

def listing(*uids: str) -> str:
    """A node's CDI spec directories as its loop lists them: a spec per claim uid."""
    return "".join(f"/var/run/cdi/k8s.{DRIVER}-{uid}.json\t{{\"devices\": [{{\"name\": "
                   f"\"{uid}-gpu-0\"}}]}} \n" for uid in uids)


def clean(specs, texts, timeline, within=10):
    return judge("D17", "cdi_clean", {"cdi": reads(*specs), "node_state": reads(*texts),
                                       "within": within, "namespace": "ns"}, timeline)


CLAIMED = history((101, "ADDED", pod("p", started=101)))


def test_a_spec_removed_with_its_claim_passes():
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    verdict = clean([listing("uid-a")] * 10 + [listing()] * 20, [held] * 10 + [empty] * 20,
                    CLAIMED)
    assert verdict.status == PASS, verdict.explain()
    assert "1 claims seen on the nodes: no CDI spec named one for more than 10s" in \
        verdict.summary


def test_a_spec_left_after_its_claim_was_unprepared_is_a_violation():
    """A plugin that forgets to remove the spec when it unprepares (the litter variant)."""
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    verdict = clean([listing("uid-a")] * 30, [held] * 10 + [empty] * 20, CLAIMED)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "the CDI spec /var/run/cdi/k8s.gpu.example.com-uid-a.json on node/node-1 named " \
           "claim ns/a for 11.0s while the node's kubelet did not hold it" in verdict.summary
    short = clean([listing("uid-a")] * 15 + [listing()] * 15, [held] * 10 + [empty] * 20,
                  CLAIMED)
    assert short.status == PASS, short.explain()


def test_a_cdi_device_id_listed_for_two_claims_is_a_violation():
    """A driver that names a CDI device by the device alone gives the next claim of the device
    the name the last one had."""
    first = checkpoint(("a", ["gpu-0"], ["uid-p"]), cdi={"gpu-0": ["k8s.x/gpu=gpu-0"]})
    second = checkpoint(("b", ["gpu-0"], ["uid-q"]), cdi={"gpu-0": ["k8s.x/gpu=gpu-0"]})
    verdict = clean([listing()] * 20, [first] * 10 + [second] * 10, CLAIMED)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "CDI device k8s.x/gpu=gpu-0 was listed for 2 claims in the kubelet's checkpoints: " \
           "ns/a, ns/b" in verdict.summary


def test_a_silent_cdi_loop_is_unknown():
    held = checkpoint(("a", ["gpu-0"], ["uid-p"]))
    verdict = judge("D17", "cdi_clean", {"cdi": reads(listing("uid-a"), listing("uid-a"),
                                                      every=10),
                                         "node_state": reads(*[held] * 20), "within": 10,
                                         "namespace": "ns"}, CLAIMED)
    assert verdict.status == UNKNOWN and "not seen" in verdict.summary, verdict.explain()


def test_the_d17_step_waits_while_a_spec_outlives_its_claim():
    """The litter variant's spec stays past the unprepare: judged at once, a stretch shorter
    than the bound passed (on kind, D17 was judged 8 s after the unprepare). The step waits
    while a spec names a claim its kubelet does not hold at the last read."""
    from aftershock.properties.dra_node import cdi_pending

    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    assert cdi_pending(reads(*[listing("uid-a")] * 12), reads(*[held] * 10 + [empty] * 2),
                       CLAIMED, "ns")
    assert not cdi_pending(reads(*[listing("uid-a")] * 10 + [listing()] * 2),
                           reads(*[held] * 10 + [empty] * 2), CLAIMED, "ns")


def test_a_cdi_device_the_driver_gives_every_claim_is_no_reuse():
    """dra-example-driver lists, beside each claim's own device, a device `common` from a spec
    file of its own that names no claim (the node's name and the driver's, for every
    container): on kind at 1.37.2 D17 first called it a name given to three claims."""
    common = "/var/run/cdi/k8s.gpu.example.com-gpu_common.yaml\t--- devices: - name: common " \
             "kind: k8s.gpu.example.com/gpu \n"
    ids = {"gpu-0": ["k8s.gpu.example.com/gpu=common", "k8s.gpu.example.com/gpu=uid-a-gpu-0"]}
    first = checkpoint(("a", ["gpu-0"], ["uid-p"]), cdi=ids)
    second = checkpoint(("b", ["gpu-0"], ["uid-q"]), cdi={"gpu-0": [
        "k8s.gpu.example.com/gpu=common", "k8s.gpu.example.com/gpu=uid-b-gpu-0"]})
    specs = [common + listing("uid-a")] * 10 + [common + listing("uid-b")] * 10
    verdict = clean(specs, [first] * 10 + [second] * 10, CLAIMED)
    assert verdict.status == PASS, verdict.explain()
    keep("d17-a-cdi-device-the-driver-gives-every-claim", CLAIMED, Judgement("cdi_clean", {
        "cdi": reads(*specs), "node_state": reads(*[first] * 10 + [second] * 10),
        "within": 10, "namespace": "ns"}), ["D17"], {"D17": PASS},
        "D17: VIOLATED: CDI device k8s.gpu.example.com/gpu=common was listed for 2 claims",
        "dra-example-driver v0.2.1 on kind at 1.37.2, dra_driver_life.feature (issue 68)")
    bare = clean([listing("uid-a")] * 10 + [listing("uid-b")] * 10,
                 [first] * 10 + [second] * 10, CLAIMED)
    assert bare.status == VIOLATED and "k8s.gpu.example.com/gpu=common" in bare.summary, \
        bare.explain()


def test_a_claim_unprepared_before_its_pod_was_deleted_passes():
    """A pod deleted the usual way: its kubelet stops its containers, unprepares its claims
    and only then reports it finished and has it deleted. On kind at 1.37.2 (the upgrade
    feature, the correct plugin) D16 counted only copies of the checkpoint after the pod was
    recorded finished, found none without the claim, and called it never unprepared."""
    marked = {**pod("p", started=101), "metadata": {"name": "p", "namespace": "ns",
                                                    "uid": "uid-p",
                                                    "deletionTimestamp": stamp(140)}}
    timeline = history((101, "ADDED", pod("p", started=101)), (110, "MODIFIED", marked),
                       (119, "MODIFIED", {**marked, "status": {"phase": "Succeeded"}}),
                       (120, "DELETED", "p"))
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    texts = [held] * 18 + [empty]  # the claim gone from the checkpoint at +118 s, then beats
    lines = reads(*texts) + [{"time": WALL + 18 + i, "node": "node-1", "beat": True}
                             for i in range(1, 200)]
    judgement = Judgement("unprepared_once", {"node_state": lines, "downs": [],
                                              "within": 120, "namespace": "ns"})
    verdict = properties.judge(["D16"], judgement, timeline)
    assert verdict.status == PASS, verdict.explain()
    assert "seen gone 8.0s after it" in verdict.summary
    keep("d16-unprepared-before-its-pod-was-deleted", timeline, judgement, ["D16"],
         {"D16": PASS}, "D16: VIOLATED: claim ns/a was still prepared on node/node-1 120s "
         "after every pod it was prepared for was gone",
         "drakubelet-correct on kind at 1.37.2, dra_driver_upgrade.feature (issue 68)")


def test_a_claim_whose_preparation_began_is_unprepared_once_too():
    """The kubelet checkpoints a claim with no devices before it asks the driver to prepare it.
    On kind at 1.37.2 (dra_driver_life.feature, the correct plugin) the kubelet stopped as the
    plugin answered that Prepare, the pod was deleted while it was down, and once back it had
    the plugin unprepare the claim: D16 counted only claims with devices, found none, and said
    UNKNOWN. A claim the kubelet held without devices and never let go is a violation."""
    going = {**pod("p", started=None, waiting="ContainerCreating", claim="a"),
             "metadata": {"name": "p", "namespace": "ns", "uid": "uid-p",
                          "deletionTimestamp": stamp(110)}}
    timeline = history((101, "ADDED", pod("p", started=None, waiting="ContainerCreating",
                                          claim="a")),
                       (110, "MODIFIED", going), (152, "DELETED", "p"))
    begun, empty = checkpoint(("a", None, ["uid-p"])), checkpoint()
    texts = [empty] * 2 + [begun] * 49 + [empty] * 80  # let go at +151 s
    verdict = once(texts, timeline, [KUBELET_DOWN])
    assert verdict.status == PASS, verdict.explain()
    assert "1 claims, each unprepared once on its node within 120s of its pods' going: seen " \
           "gone" in verdict.summary
    kept = once([empty] * 2 + [begun] * 300, timeline, [KUBELET_DOWN])
    assert kept.status == VIOLATED and "claim ns/a was still prepared on node/node-1" in \
        kept.summary, kept.explain()
    judgement = Judgement("unprepared_once", {"node_state": reads(*texts),
                                              "downs": [KUBELET_DOWN], "within": 120,
                                              "namespace": "ns"})
    keep("d16-a-claim-whose-preparation-began", timeline, judgement, ["D16"], {"D16": PASS},
         "D16: UNKNOWN: no claim prepared on a node had all its pods gone",
         "drakubelet-correct on kind at 1.37.2, dra_driver_life.feature, the kubelet stopped "
         "as the plugin answered a Prepare (issue 68)")


def test_d16_waits_for_a_going_pod_to_be_gone():
    """drakubelet-tidy on kind at 1.37.2: the kubelet unprepared the claims while their pods,
    marked for deletion, were still there, and D16, judged at once, found no claim whose pods
    were all gone (UNKNOWN); its step now waits for a going pod to be gone."""
    held, empty = checkpoint(("a", ["gpu-0"], ["uid-p"])), checkpoint()
    going = copy.deepcopy(pod("p", started=101))
    going["metadata"]["deletionTimestamp"] = stamp(105)
    texts = reads(*[held] * 6 + [empty] * 3)
    marked = history((101, "ADDED", pod("p", started=101)), (105, "MODIFIED", going))
    assert pending(texts, marked, [], 120, "ns")
    stuck = judge("D16", "unprepared_once", {"node_state": texts, "downs": [], "within": 120,
                                             "namespace": "ns"}, marked)
    assert stuck.status == UNKNOWN and stuck.summary.endswith(
        "no claim prepared on a node had all its pods gone: the deletion of a pod of ns/a on "
        "node/node-1 began and was not done"), stuck.explain()
    gone = history((101, "ADDED", pod("p", started=101)), (105, "MODIFIED", going),
                   (108, "DELETED", "p"))
    assert not pending(texts, gone, [], 120, "ns")
    verdict = judge("D16", "unprepared_once", {"node_state": texts, "downs": [], "within": 120,
                                               "namespace": "ns"}, gone)
    assert verdict.status == PASS, verdict.explain()


# --- D21: nothing kept prepared for a pod another driver keeps from starting ---------------

def kept(specs, texts, since=100.0, until=150.0, within=30):
    return judge("D21", "kept_for_failed", {"cdi": reads(*specs), "node_state": reads(*texts),
                                             "since": since, "until": until, "within": within,
                                             "namespace": "ns"}, CLAIMED)


def test_a_spec_kept_while_the_other_driver_fails_is_a_violation():
    """kubernetes#137819: the first driver prepared the claim, the second failed, and the
    kubelet unprepared nothing: the first driver's spec stays while the pod cannot start (the
    kubelet's checkpoint holds the claim throughout: it writes it before it asks a driver)."""
    held = checkpoint(("a", [], ["uid-p"]))
    verdict = kept([listing("uid-a")] * 50, [held] * 50)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "the CDI spec /var/run/cdi/k8s.gpu.example.com-uid-a.json on node/node-1 named " \
           "claim ns/a for 49.0s while the other driver's preparations failed (from +" in \
        verdict.summary
    # the same spec, once the second driver prepares (from 150), is the running pod's
    assert kept([listing()] * 30 + [listing("uid-a")] * 40, [held] * 70).status == PASS


def test_a_spec_kept_while_the_loop_only_beats_is_a_violation():
    """The node's loop writes a copy when the directory changes and a heartbeat while it does
    not (on kind at 1.37.2 the spec was read once, then 40 s of heartbeats: D21 first passed
    it, counting the copies alone)."""
    held = checkpoint(("a", [], ["uid-p"]))
    cdi = reads(listing("uid-a")) + [{"time": WALL + i, "node": "node-1", "beat": True}
                                      for i in range(1, 50)]
    params = {"cdi": cdi, "node_state": reads(*[held] * 50), "since": 100.0, "until": 150.0,
              "within": 30, "namespace": "ns"}
    verdict = judge("D21", "kept_for_failed", params, CLAIMED)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "named claim ns/a for 49.0s" in verdict.summary
    keep("d21-a-spec-the-loop-read-once", CLAIMED, Judgement("kept_for_failed", params),
         ["D21"], {"D21": VIOLATED}, PASS, "its first run on kind at 1.37.2 (issue 68)")


def test_a_spec_unprepared_after_each_failed_try_passes():
    """With a kubelet that rolls back what one driver prepared when another fails, each try
    leaves the spec for a moment only."""
    held = checkpoint(("a", [], ["uid-p"]))
    tries = ([listing("uid-a")] + [listing()] * 9) * 5
    verdict = kept(tries, [held] * 50)
    assert verdict.status == PASS, verdict.explain()
    assert "1 claims named by CDI specs on the nodes: none for more than 30s while the other " \
           "driver's preparations failed (50s)" in verdict.summary


def test_a_driver_whose_specs_never_name_a_claim_is_unknown_for_d21():
    held = checkpoint(("a", [], ["uid-p"]))
    verdict = kept([listing()] * 50, [held] * 50)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "no CDI spec on a node ever named a claim of the scenario" in verdict.summary


def test_d22_names_the_second_drivers_return():
    """D22 is D19's check from the second driver's return: a pod that never ran within the
    bound names that moment."""
    timeline = history((101, "ADDED", pod("p", started=None, waiting="ContainerCreating")),
                       (200, "MODIFIED", pod("p", started=None, waiting="ContainerCreating")))
    verdict = judge("D22", "pods_started", {"namespace": "ns", "since": 110.0, "within": 60,
                                            "now": 200.0,
                                            "began": "the second driver prepared again"},
                    timeline)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "(the second driver prepared again at +" in verdict.summary
