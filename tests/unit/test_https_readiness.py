"""A readiness URL in https is asked as a kubelet's HTTPS probe asks: the certificate is an
implementation's own (Kyverno makes its key pair as it starts), not verified."""

import http.server
import ssl
import threading

from aftershock.machine.certificates import serving_pair
from aftershock.sut.readiness import _answers


class _Ready(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health/readiness" else 503)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_an_https_readiness_url_answers_under_a_certificate_of_its_own(tmp_path):
    serving_pair(tmp_path)
    server = http.server.HTTPServer(("127.0.0.1", 0), _Ready)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        assert _answers(f"https://127.0.0.1:{port}/health/readiness")
        assert not _answers(f"https://127.0.0.1:{port}/other")
    finally:
        server.shutdown()
