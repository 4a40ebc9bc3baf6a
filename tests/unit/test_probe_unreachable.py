"""S3 judges what the storage system answered, not the data probe's trouble reaching it: a read
that got no answer (refused, timed out, reset: a drained node) says nothing of the
implementation, and is UNKNOWN naming the node the probe could not reach."""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import json
import socket
import threading
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

from aftershock import properties
from aftershock.checks import PASS, UNKNOWN, VIOLATED
from aftershock.concepts.storage import StorageCluster
from aftershock.properties import Judgement
from aftershock.timeline.entry import WATCH, Entry
from tests.unit.concept_maps import STORAGE
from tests.verdict_corpus import keep

NS = "ns"
LEDGER = {"written": [{"object": "obj-0", "member": 0, "node": "node-1"},
                      {"object": "obj-1", "member": 1, "node": "node-2"},
                      {"object": "obj-2", "member": 2, "node": "node-3"}]}
HISTORY = [Entry(0, 0.0, 1e9, WATCH, resource="pods", namespace=NS, name="data-0",
                 uid="uid-data-0", rv="100", type="ADDED",
                 object={"metadata": {"name": "data-0", "namespace": NS}})]
REFUSED = {"object": "obj-1", "status": "error", "error_kind": "transport",
           "address": "172.18.0.3:51081", "node": "node-2",
           "detail": "172.18.0.3:51081: [Errno 111] Connection refused"}


def judge(results: list[dict], loss_allowed: bool = False):
    return properties.judge(["S3"], Judgement("reads_clean", {
        "cluster": asdict(StorageCluster("data", NS, STORAGE)), "results": results,
        "ledger": LEDGER, "removed": [2], "loss_allowed": loss_allowed}), HISTORY)


def test_a_read_the_probe_could_not_deliver_is_not_the_implementations():
    """obj-1's read was refused on node-2's address (its node drained): no answer from the
    storage system, so nothing to blame it for. It used to be VIOLATED (a server error)."""
    results = [{"object": "obj-0", "status": "ok"}, REFUSED,
               {"object": "obj-2", "status": "ok"}]
    verdict = judge(results)
    assert verdict.status == UNKNOWN, verdict.explain()
    assert "could not reach node/node-2" in verdict.summary, verdict.summary
    keep("s3-a-probe-that-could-not-reach-a-node", HISTORY, Judgement("reads_clean", {
        "cluster": asdict(StorageCluster("data", NS, STORAGE)), "results": results,
        "ledger": LEDGER, "removed": [2], "loss_allowed": False}), ["S3"], {"S3": UNKNOWN},
        VIOLATED, "the review of issue 43, item 9")
    # What the storage system did answer is still judged.
    lost = [{"object": "obj-0", "status": "not_found"}, REFUSED,
            {"object": "obj-2", "status": "ok"}]
    verdict = judge(lost)
    assert verdict.status == VIOLATED and "1 objects lost" in verdict.summary, verdict.explain()
    served = [{"object": "obj-0", "status": "error", "detail": "HTTP 500: boom"}, REFUSED,
              {"object": "obj-2", "status": "ok"}]
    assert judge(served).status == VIOLATED
    fine = [{"object": "obj-0", "status": "ok"}, {"object": "obj-1", "status": "ok"},
            {"object": "obj-2", "status": "not_found"}]
    assert judge(fine, loss_allowed=True).status == PASS


def test_an_object_the_probe_said_nothing_of_is_not_a_loss():
    verdict = judge([{"object": "obj-0", "status": "ok"}, {"object": "obj-2", "status": "ok"}])
    assert verdict.status == UNKNOWN and "no answer for 1 of 3" in verdict.summary, \
        verdict.explain()


# --- the AIStore probe records a read that got no answer as such ----------------------------


def _probe():
    path = Path(__file__).resolve().parents[2] / "profiles/thirdparty/ais/probe.py"
    spec = importlib.util.spec_from_file_location("ais_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.2", 0))
        return sock.getsockname()[1]


def test_the_ais_probe_marks_a_read_that_got_no_answer(tmp_path, monkeypatch):
    """AIStore's proxy (here, a server on 127.0.0.1) redirects obj-1's read to its target on
    node-2 (127.0.0.2), whose port refuses: the answer names the address and its node."""
    probe = _probe()
    payload = b"the bytes of obj-0"
    gone = _closed_port()

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # http.server calls it by this name
            if "/obj-1" in self.path:
                self.send_response(307)
                self.send_header("Location", f"http://127.0.0.2:{gone}{self.path}")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif "/obj-0" in self.path:
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(probe, "PROXY_PORT", server.server_address[1])
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps({"written": [
        {"object": "obj-0", "checksum": hashlib.sha256(payload).hexdigest()},
        {"object": "obj-1", "checksum": "?"}, {"object": "obj-2", "checksum": "?"}]}))

    def node(name: str, address: str):
        return SimpleNamespace(metadata=SimpleNamespace(name=name), status=SimpleNamespace(
            addresses=[SimpleNamespace(type="InternalIP", address=address)]))

    core = SimpleNamespace(  # the answers the probe asks the API server for
        read_namespaced_pod=lambda name, namespace: SimpleNamespace(
            status=SimpleNamespace(host_ip="127.0.0.1")),
        list_node=lambda: SimpleNamespace(items=[node("node-1", "127.0.0.1"),
                                                 node("node-2", "127.0.0.2")]))
    try:
        results = {r["object"]: r for r in probe.get(core, NS, "data", ledger)["results"]}
    finally:
        server.shutdown()
    assert results["obj-0"]["status"] == "ok" and results["obj-2"]["status"] == "not_found"
    refused = results["obj-1"]
    assert refused.get("error_kind") == "transport", refused
    assert refused.get("node") == "node-2", refused
    assert refused.get("address") == f"127.0.0.2:{gone}", refused


# --- the AIStore probe's maintenance: what the cluster map says of a target in it -------------


def _smap(flags: dict[int, int]) -> dict:
    return {"version": 7, "tmap": {f"id{o}": {
        "daemon_id": f"id{o}", "flags": f,
        "intra_control_net": {"node_ip_addr": f"data-target-{o}.data-sts-info.ns.svc"}}
        for o, f in flags.items()}}


def test_a_target_is_moved_only_once_its_rebalance_into_maintenance_is_over():
    """AIStore flags a target 4 when it enters maintenance and adds 16 when the rebalance that
    moves its objects to the others is over (aistore v1.4.9 ais/prxclu.go, rmNodeFinal)."""
    probe = _probe()
    entering = probe.members_of(_smap({0: 4, 1: 0, 2: 0}), "data", set())
    assert entering["maintenance"] == [0] and entering["moved"] == []
    moved = probe.members_of(_smap({0: 4 | 16, 1: 0, 2: 0}), "data", set())
    assert moved["maintenance"] == [0] and moved["moved"] == [0]
    assert moved["members"] == [1, 2]
    decommissioned = probe.members_of(_smap({0: 0, 1: 0, 2: 8}), "data", set())
    assert decommissioned["moved"] == []


def test_maintenance_names_the_target_by_its_member(monkeypatch):
    probe = _probe()
    sent = []
    monkeypatch.setattr(probe, "proxy_url", lambda core, namespace, cluster: "http://proxy")
    monkeypatch.setattr(probe, "cluster_map", lambda base: _smap({0: 0, 1: 0}))
    monkeypatch.setattr(probe, "request", lambda method, url, body=None, headers=None:
                        sent.append((method, url, json.loads(body))) or (200, b"reb-1"))
    assert probe.maintain(None, NS, "data", 1) == {"member": 1, "daemon": "id1", "xid": "reb-1"}
    assert sent == [("PUT", "http://proxy/v1/cluster",
                     {"action": "start-maintenance", "value": {"sid": "id1"}})]
    try:
        probe.maintain(None, NS, "data", 5)
    except SystemExit as exc:
        assert "member 5 is no target in the cluster map (listed: 0, 1)" in str(exc)
    else:
        raise AssertionError("a member not in the cluster map was put into maintenance")
