"""What a start may be given (Grove needs each to serve its webhooks from a local process):
free ports, a key pair for 127.0.0.1 with its CA as a caBundle, and files written from templates
with every placeholder filled; ports and key pair are kept across restarts, files rewritten."""

from __future__ import annotations

import base64
import socket
import ssl
import threading

from aftershock.profile.load import load_profile
from aftershock.sut.runner import Implementation

PROFILE = """name: served
start:
  command: ["{binary}", "--config", "{files}/config.yaml"]
  ports: [webhook, health]
  serving_certificate: true
  files: {config.yaml: config.tmpl}
  ready: {http: "http://127.0.0.1:{port_health}/readyz"}
concepts: {}
"""


def test_a_start_is_given_ports_a_key_pair_and_its_files(tmp_path):
    (tmp_path / "config.tmpl").write_text(
        "port: {port_webhook}\ncerts: {tls_dir}\nkubeconfig: {kubeconfig}\n")
    (tmp_path / "p.yaml").write_text(PROFILE)
    implementation = Implementation(load_profile(tmp_path / "p.yaml"), api=None, namespace="ns",
                                    workdir=tmp_path, server="", ca_data="")
    given = implementation._given({"kubeconfig": "/first"})
    ports = [int(given["port_webhook"]), int(given["port_health"])]
    assert len(set(ports)) == 2
    with socket.socket() as listener:  # free: something can listen there
        listener.bind(("127.0.0.1", ports[0]))
    written = (tmp_path / "x").parent / given["files"] / "config.yaml"
    assert written.read_text() == (f"port: {ports[0]}\ncerts: {given['tls_dir']}\n"
                                   "kubeconfig: /first\n")
    assert _handshake(given) == "127.0.0.1"  # the API server, calling the webhook, trusts it
    again = implementation._given({"kubeconfig": "/through-a-proxy"})
    assert again == given
    assert written.read_text().endswith("kubeconfig: /through-a-proxy\n")


def _handshake(given: dict[str, str]) -> str:
    """A TLS server on 127.0.0.1 with the key pair, and a client that trusts only the caBundle:
    the subject the client verified."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(f"{given['tls_dir']}/tls.crt", f"{given['tls_dir']}/tls.key")
    client = ssl.create_default_context(cadata=base64.b64decode(given["ca_bundle"]).decode())
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        done: dict[str, str] = {}

        def serve() -> None:
            connection, _ = listener.accept()
            with server.wrap_socket(connection, server_side=True) as tls:
                tls.recv(1)

        thread = threading.Thread(target=serve)
        thread.start()
        with socket.create_connection(listener.getsockname()) as raw, \
                client.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            names = dict(x[0] for x in tls.getpeercert()["subject"])
            done["subject"] = names.get("commonName", "")
            tls.send(b"x")
        thread.join(5)
    return done["subject"]


def test_a_cluster_that_reaches_this_machine_elsewhere_gets_its_webhooks_there(tmp_path):
    """On kind the API server runs in a container: a webhook served here is called at the
    nodes' default route, so {host} is that address and the key pair names it too."""
    from cryptography import x509

    (tmp_path / "config.tmpl").write_text("host: {host}\n")
    (tmp_path / "p.yaml").write_text(PROFILE)
    implementation = Implementation(load_profile(tmp_path / "p.yaml"), api=None, namespace="ns",
                                    workdir=tmp_path, server="", ca_data="", host="10.89.0.1")
    given = implementation._given({"kubeconfig": "/k", "host": implementation.host})
    assert (tmp_path / given["files"] / "config.yaml").read_text() == "host: 10.89.0.1\n"
    certificate = x509.load_pem_x509_certificate(
        (tmp_path / given["tls_dir"] / "tls.crt").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == \
        ["10.89.0.1", "127.0.0.1"]


def test_host_is_127_0_0_1_unless_the_cluster_calls_back_elsewhere():
    from aftershock.providers.base import host_of
    from aftershock.providers.kind import KindCluster

    class Local:  # no host of its own: its API server runs on this machine
        pass

    class Kind:
        host = "10.89.0.1"

    assert host_of(Local()) == "127.0.0.1"
    assert host_of(Kind()) == "10.89.0.1"
    assert "host" in vars(KindCluster)  # the kind provider says where its nodes reach us
