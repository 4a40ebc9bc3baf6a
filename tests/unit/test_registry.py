"""The pull-only registry kind's nodes pull aftershock.local/... images from: what it serves is
exactly what the archive holds, addressed as the OCI distribution API addresses it."""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
from pathlib import Path

from aftershock.containers.images import archive, registry


def get(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def test_an_archive_is_served_by_tag_and_digest(tmp_path: Path) -> None:
    program = tmp_path / "prog"
    program.write_bytes(b"#!/bin/true\n")
    image = archive.Image("aftershock.local/ais/aisnode:v4.9",
                          (archive.Entry("/usr/bin/aisnode", program),), entrypoint=("aisnode",))
    path = tmp_path / "image.tar"
    image_id = archive.write(image, path)
    store = tmp_path / "store"
    assert registry.add_archive(store, path) == ["aftershock.local/ais/aisnode:v4.9"]
    sock = registry.listen("127.0.0.1")
    port = sock.getsockname()[1]
    threading.Thread(target=registry.serve, args=(store, sock.detach()), daemon=True).start()

    status, _, _ = get(port, "/v2/")
    assert status == 200
    status, headers, body = get(port, "/v2/ais/aisnode/manifests/v4.9?ns=aftershock.local")
    assert status == 200
    assert headers["Content-Type"] == registry.MANIFEST
    digest = headers["Docker-Content-Digest"]
    assert digest == "sha256:" + hashlib.sha256(body).hexdigest()
    manifest = json.loads(body)
    assert manifest["config"]["digest"] == image_id  # the image the node imported, by ID
    for blob in (manifest["config"], *manifest["layers"]):
        status, headers, data = get(port, f"/v2/ais/aisnode/blobs/{blob['digest']}")
        assert status == 200 and len(data) == blob["size"]
        assert "sha256:" + hashlib.sha256(data).hexdigest() == blob["digest"]
    status, headers, body = get(port, f"/v2/ais/aisnode/manifests/{digest}", "HEAD")
    assert status == 200 and body == b"" and headers["Docker-Content-Digest"] == digest


def test_what_is_not_there_is_a_registry_not_found(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    sock = registry.listen("127.0.0.1")
    port = sock.getsockname()[1]
    threading.Thread(target=registry.serve, args=(store, sock.detach()), daemon=True).start()
    status, _, body = get(port, "/v2/ais/aisnode/manifests/v4.9")
    assert status == 404 and json.loads(body)["errors"][0]["code"] == "MANIFEST_UNKNOWN"
    status, _, body = get(port, "/v2/ais/aisnode/blobs/sha256:" + "0" * 64)
    assert status == 404 and json.loads(body)["errors"][0]["code"] == "BLOB_UNKNOWN"
    status, _, _ = get(port, "/v2/../../etc/passwd/blobs/sha256:x")
    assert status == 404


def test_a_reference_names_its_repository_and_tag() -> None:
    assert registry.repository_and_tag("aftershock.local/aisnode:v4.9") == ("aisnode", "v4.9")
    assert registry.repository_and_tag("aftershock.local:5000/x") == ("aftershock.local:5000/x",
                                                                        "latest")


def test_containerd_is_told_to_pull_over_plain_http() -> None:
    text = registry.hosts_toml("172.18.0.1:40000")
    assert 'server = "http://172.18.0.1:40000"' in text
    assert '[host."http://172.18.0.1:40000"]' in text
