"""D5 from node state earns its verdict from what was recorded: every node the history records
was seen by a read loop over its lifetime (a node that joined with no loop, a loop that went
silent, leave a stretch nobody saw: no PASS over it), and a claim an earlier scenario left
prepared is a leak once its pod was recorded gone before its device was prepared again.

Histories and the nodes' lines are built by hand, on the same clock (the node's time is the
recorder's wall time, 1e9 + the recorder's time here)."""

from __future__ import annotations

import json
import subprocess
import time
import zlib
from types import SimpleNamespace

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.properties import Judgement
from aftershock.sut.node_state import NodeStateWatch, loop, parse
from aftershock.timeline.entry import GAP_START, WATCH, Entry
from tests.verdict_corpus import keep

NS = "ns"
DRIVER = "gpu.example.com"
WALL = 1e9  # the wall time of the recorder's 0


class History(list):
    def watch(self, mono: float, resource: str, obj: dict, type: str = "MODIFIED") -> History:
        meta = obj["metadata"]
        self.append(Entry(len(self), mono, WALL + mono, WATCH, resource=resource,
                          namespace=meta.get("namespace", ""), name=meta["name"],
                          uid=meta.get("uid", f"uid-{meta['name']}"), rv=str(100 + len(self)),
                          type=type, object=obj))
        return self

    def mark(self, mono: float, detail: str) -> History:
        self.append(Entry(len(self), mono, WALL + mono, "mark", detail=detail))
        return self


def node(name: str) -> dict:
    return {"metadata": {"name": name, "uid": f"uid-{name}"}}


def checkpoint(*claims: tuple[str, list[str], list[str]]) -> str:
    """The kubelet's file: (claim ``ns/name``, devices, the pods' UIDs it was prepared for)."""
    entries = [{"ClaimUID": f"uid-{name}", "ClaimName": name.split("/")[1],
                "Namespace": name.split("/")[0], "PodUIDs": {pod: {} for pod in pods},
                "DriverState": {DRIVER: {"Devices": [
                    {"PoolName": "worker-1", "DeviceName": device, "RequestNames": ["gpu"]}
                    for device in devices]}}} for name, devices, pods in claims]
    data = json.dumps({"kind": "DRACheckpoint", "apiVersion": "checkpoint.dra.kubelet.k8s.io/v1",
                       "ClaimInfoStateList": entries})
    return json.dumps({"Data": data, "Checksum": zlib.crc32(data.encode())})


def copies(node_name: str, *states: tuple[float, str]) -> list[dict]:
    """A copy of the checkpoint at each recorder time given (every 2 s, as a heartbeat would
    say it, but in the form every version reads: a copy)."""
    return [{"time": WALL + at, "node": node_name, "text": text} for at, text in states]


def judge(snapshots: list[dict], history: list[Entry]):
    return properties.judge(["D5"], Judgement("node_state_exclusive", {
        "node_state": snapshots, "namespace": NS}), history)


A = checkpoint(("ns/a", ["gpu-0"], ["uid-pa"]))
AB = checkpoint(("ns/a", ["gpu-0"], ["uid-pa"]), ("ns/b", ["gpu-1"], ["uid-pb"]))


def test_a_node_the_history_records_with_no_read_loop_is_not_seen():
    """node/n2 joins at +12.3s and no loop ever read it: what it prepared nobody saw, so
    "never two on one device" cannot be said of it (it used to PASS on node/n1's copies)."""
    history = History().watch(0, "nodes", node("n1"), "SYNC").watch(12.3, "nodes", node("n2"),
                                                                     "ADDED")
    history.mark(30, "judged")
    snaps = copies("n1", *[(at, A if at < 10 else AB) for at in range(1, 31, 2)])
    verdict = judge(snaps, history)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "no read loop on node/n2, which joined at +12.3s" in verdict.summary, verdict.summary
    keep("d5-a-node-no-loop-read", history, Judgement("node_state_exclusive", {
        "node_state": snaps, "namespace": NS}), ["D5"], {"D5": UNKNOWN}, PASS,
        "the review of issue 43, item 8")
    alone = judge(snaps, History(history[:1] + history[2:]))  # n1 alone, read throughout
    assert alone.status == PASS, alone.explain()


def test_a_loop_silent_for_longer_than_its_heartbeat_is_a_stretch_not_seen():
    """node/n1's loop shows claim a on gpu-0 at +1s, says nothing for 39 s (a hung read, a
    frozen node), then shows b on gpu-0: the hand-over, and whether a and b ever held gpu-0
    at once, happened where nobody looked. It used to PASS (no copy had both)."""
    history = History().watch(0, "nodes", node("n1"), "SYNC").mark(41, "judged")
    b_on_0 = checkpoint(("ns/b", ["gpu-0"], ["uid-pb"]))
    snaps = copies("n1", (0, checkpoint()), (1, A), (40, b_on_0))
    verdict = judge(snaps, history)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "node/n1 was not seen from +1.0s to +40.0s" in verdict.summary, verdict.summary
    keep("d5-a-silent-read-loop", history, Judgement("node_state_exclusive", {
        "node_state": snaps, "namespace": NS}), ["D5"], {"D5": UNKNOWN}, PASS,
        "the review of issue 43, item 8")
    beats = [{"time": WALL + at, "node": "n1", "beat": True} for at in range(3, 40, 2)]
    seen = judge(snaps + beats, history)  # a heartbeat every 2 s: the loop did read
    assert seen.status == PASS, seen.explain()


def test_an_inherited_claim_whose_pod_was_recorded_gone_is_a_leak():
    """Claim earlier/x was prepared on gpu-3 of node/n1 before the scenario began, for pod
    earlier/x-pod. The pod is recorded DELETED at +5s; at +9s the checkpoint shows gpu-3
    prepared for ns/a too. The kubelet kept x prepared after its pod was gone: a leak, not an
    earlier scenario's excuse (it used to be UNKNOWN for ever on a reused cluster)."""
    x_pod = {"metadata": {"name": "x-pod", "namespace": "earlier", "uid": "uid-x-pod"},
             "spec": {"nodeName": "n1", "resourceClaims": [{"name": "d",
                                                            "resourceClaimName": "x"}]}}
    history = History().watch(0, "nodes", node("n1"), "SYNC").watch(0, "pods", x_pod, "SYNC")
    history.watch(5, "pods", x_pod, "DELETED").mark(12, "judged")
    left = checkpoint(("earlier/x", ["gpu-3"], ["uid-x-pod"]))
    both = checkpoint(("earlier/x", ["gpu-3"], ["uid-x-pod"]), ("ns/a", ["gpu-3"], ["uid-pa"]))
    snaps = copies("n1", (1, left), (3, left), (5.5, left), (7, left), (9, both), (11, both))
    verdict = judge(snaps, history)
    assert verdict.status == VIOLATED, verdict.explain()
    assert "pod/earlier/x-pod at +5.000s" in verdict.summary, verdict.summary
    keep("d5-an-inherited-claim-leaked", history, Judgement("node_state_exclusive", {
        "node_state": snaps, "namespace": NS}), ["D5"], {"D5": VIOLATED}, UNKNOWN,
        "the review of issue 43, item 8")
    assert [e.type for e in verdict.witness if e.kind == WATCH] == ["DELETED"]
    assert "earlier/x, ns/a" in verdict.witness[-1].detail
    # The pod deleted only after the device was prepared again: the history cannot say.
    late = History(history[:2]).watch(10, "pods", x_pod, "DELETED").mark(12, "judged")
    unsure = judge(snaps, late)
    assert unsure.status == UNKNOWN and "pod/earlier/x-pod" in unsure.summary, unsure.explain()
    # No record of its pod at all: UNKNOWN, naming the claim.
    unknown = judge(snaps, History(history[:1]).mark(12, "judged"))
    assert unknown.status == UNKNOWN, unknown.explain()
    assert "earlier/x was prepared there before this scenario began" in unknown.summary
    assert "no record of the pod" in unknown.summary, unknown.summary


def test_an_inherited_claims_pod_can_be_known_from_the_claims_reserved_for():
    claim = {"metadata": {"name": "x", "namespace": "earlier", "uid": "uid-x"},
             "status": {"reservedFor": [{"resource": "pods", "name": "x-pod",
                                         "uid": "uid-x-pod"}]}}
    x_pod = {"metadata": {"name": "x-pod", "namespace": "earlier", "uid": "uid-x-pod"}}
    history = History().watch(0, "resourceclaims", claim, "SYNC").watch(0, "pods", x_pod, "SYNC")
    history.watch(2, "pods", x_pod, "DELETED").mark(8, "judged")
    left = checkpoint(("earlier/x", ["gpu-3"], []))
    both = checkpoint(("earlier/x", ["gpu-3"], []), ("ns/a", ["gpu-3"], ["uid-pa"]))
    verdict = judge(copies("n1", (1, left), (3, left), (5, both)), history)
    assert verdict.status == VIOLATED and "pod/earlier/x-pod" in verdict.summary, \
        verdict.explain()


def test_the_loop_says_it_read_even_when_nothing_changed():
    """Between changes the loop prints a heartbeat with the node's time, so a loop that
    stalls is told from a file that did not change; parse reads it (and old logs)."""
    proc = subprocess.Popen(loop("/dev/null"), stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(5.5)  # a heartbeat is due every 2 s
    finally:
        proc.kill()
    lines = parse("n1", proc.communicate()[0])
    beats = [line for line in lines if line.get("beat")]
    assert lines[0].get("text") == "" and len(beats) >= 2, lines
    assert all(line["node"] == "n1" and line["time"] <= time.time() for line in lines)
    assert [line["time"] for line in lines] == sorted(line["time"] for line in lines)


def test_a_node_that_joins_gets_a_loop_and_the_lines_say_when_they_were_taken(tmp_path):
    """A node that joins after the loops started is read too (the join step adds it), and the
    lines say when they were taken, so a loop silent since long before is told from one that
    just spoke. Here the 'nodes' are this machine: node_command runs the loop as it is."""
    path = tmp_path / "state"
    path.write_text("{}")
    cluster = SimpleNamespace(node_command=lambda node, argv: argv if argv[0] == "sh"
                              else ["true"])  # ending the loop on a node: by its pid here
    watch = NodeStateWatch(cluster, str(path), ["n1"], tmp_path)
    watch.start()
    try:
        assert hasattr(watch, "add"), "no way to read a node that joins"
        watch.add("n2")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and \
                {s["node"] for s in watch.snapshots() if "text" in s} != {"n1", "n2"}:
            time.sleep(0.1)  # the loops' start has no event to wait on
        before = time.time()
        lines = watch.snapshots()
    finally:
        watch.stop()
    assert {line["node"] for line in lines if "text" in line} == {"n1", "n2"}, lines
    taken = {line["node"]: line["time"] for line in lines if line.get("taken")}
    assert set(taken) == {"n1", "n2"}, lines
    assert all(before <= at <= time.time() for at in taken.values()), taken



def test_a_node_the_record_lost_in_a_gap_of_nodes_is_not_known_seen():
    """The watch of nodes breaks at +5s and is never re-listed: a node that joined after the
    break is in no life, and no loop read it. node/n1's loop read throughout, but whether every
    node had a loop the record cannot say. D11 (which reads only pods from the API server) used
    to PASS: the metamorphic fuzz found it, relation (e)."""
    history = History().watch(0, "nodes", node("n1"), "SYNC")
    history.append(Entry(len(history), 5, WALL + 5, GAP_START, resource="nodes",
                         detail="410 Gone"))
    history.mark(30, "judged")
    snaps = copies("n1", *[(at, A if at < 10 else checkpoint()) for at in range(1, 31, 2)])
    judgement = Judgement("kept_while_used", {"node_state": snaps, "namespace": NS})
    verdict = properties.judge(["D11"], judgement, history)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "the nodes the cluster had from +1.0s to +29.0s are not known" in verdict.summary, \
        verdict.summary
    keep("d11-a-gap-in-the-record-of-nodes", history, judgement, ["D11"], {"D11": UNKNOWN},
         "D11: PASS: 1 claims unprepared on their nodes, each once no pod there used it",
         "the metamorphic fuzz of issue 64, relation (e)")
    seen = properties.judge(["D11"], judgement, History(history[:1] + history[2:]))
    assert seen.status == PASS, seen.explain()  # no gap: n1 alone, read throughout
