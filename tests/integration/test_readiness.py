"""Readiness of an implementation started out of the cluster, other than a log line: a URL
that answers 2xx, and a Lease in the scenario's namespace that someone holds (read from the
real API server)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes import client

from aftershock.sut.profile import Start
from aftershock.sut.readiness import waiting_for

pytestmark = pytest.mark.cluster


def _waiting(scenario, tmp_path, start: Start) -> list[str]:
    return waiting_for(start, tmp_path / "absent.log", 0, scenario.api, scenario.namespace,
                       {"namespace": scenario.namespace})


def test_a_lease_is_ready_once_someone_holds_it(aftershock_scenario, tmp_path):
    scenario = aftershock_scenario
    start = Start(command=("x",), ready_lease="op-{namespace}")
    name = f"op-{scenario.namespace}"
    assert _waiting(scenario, tmp_path, start) == [f"lease/{scenario.namespace}/{name} held"]
    leases = client.CoordinationV1Api(scenario.api)
    leases.create_namespaced_lease(scenario.namespace, {"metadata": {"name": name},
                                                        "spec": {}})
    assert _waiting(scenario, tmp_path, start) == [f"lease/{scenario.namespace}/{name} held"]
    leases.patch_namespaced_lease(name, scenario.namespace,
                                  {"spec": {"holderIdentity": "operator-0"}})
    assert _waiting(scenario, tmp_path, start) == []


def test_a_url_is_ready_once_it_answers_2xx(aftershock_scenario, tmp_path):
    healthy = {"now": False}

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if healthy["now"] else 503)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/healthz"
        start = Start(command=("x",), ready_http=url, ready_log="Started workers")
        both = ["the log line 'Started workers'", f"a 2xx from {url}"]
        assert _waiting(aftershock_scenario, tmp_path, start) == both
        healthy["now"] = True
        assert _waiting(aftershock_scenario, tmp_path, start) == both[:1]
        (tmp_path / "absent.log").write_text("I1123 Started workers\n")
        assert _waiting(aftershock_scenario, tmp_path, start) == []
    finally:
        server.shutdown()
