"""A pull-only image registry for a kind cluster's nodes, serving the images the harness built.

Some implementations pull their images whatever is already on the node (AIStore's operator
hard-codes ``imagePullPolicy: Always`` for its aisnode and init containers), and no outside
registry is reachable here. So the images written as `docker save` archives are also served
over the OCI distribution API (the pull side only: ``/v2/``, manifests and blobs, GET and HEAD)
from a store on the host, and each node's containerd is told where to pull
``aftershock.local/...`` from (a ``hosts.toml``). The kubelet then pulls for real.

Store layout: ``blobs/sha256/<hex>`` (configs, layers, manifests) and
``tags/<repository>/<tag>`` holding a manifest's digest."""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import sys
import tarfile
from pathlib import Path

HOST = "aftershock.local"  # the registry host every image built here is named under
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar"  # uncompressed, as archive.py writes them
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
HOSTS_DIR = "/etc/containerd/certs.d"
# kind applies this to each node's containerd at creation: hosts.toml files are read per pull
CONTAINERD_PATCH = ('[plugins."io.containerd.grpc.v1.cri".registry]\n'
                    f'  config_path = "{HOSTS_DIR}"\n')


def _put_blob(root: Path, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    path = root / "blobs" / "sha256" / digest
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(".tmp")
        scratch.write_bytes(data)
        os.replace(scratch, path)
    return f"sha256:{digest}"


def repository_and_tag(reference: str) -> tuple[str, str]:
    """aftershock.local/ais/aisnode:v4.9 → (ais/aisnode, v4.9); a reference of another
    registry keeps its host in the repository (it is served only under that name)."""
    name, _, tag = reference.rpartition(":")
    if not name or "/" in tag:
        name, tag = reference, "latest"
    return name.removeprefix(f"{HOST}/"), tag


def add_archive(root: Path, archive: Path) -> list[str]:
    """Every image of a `docker save` archive into the store; returns the tags it serves."""
    served = []
    with tarfile.open(archive) as tar:
        def read(name: str) -> bytes:
            member = tar.extractfile(name)
            if member is None:
                raise ValueError(f"{archive}: {name} is not a file")
            return member.read()

        for item in json.loads(read("manifest.json")):
            config = read(item["Config"])
            layers = []
            for name in item["Layers"]:
                data = read(name)
                layers.append({"mediaType": LAYER, "size": len(data),
                               "digest": _put_blob(root, data)})
            manifest = json.dumps({
                "schemaVersion": 2, "mediaType": MANIFEST,
                "config": {"mediaType": CONFIG, "size": len(config),
                           "digest": _put_blob(root, config)},
                "layers": layers}, sort_keys=True).encode()
            digest = _put_blob(root, manifest)
            for reference in item.get("RepoTags") or ():
                repository, tag = repository_and_tag(reference)
                path = root / "tags" / repository / tag
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(digest)
                served.append(reference)
    return served


def hosts_toml(address: str) -> str:
    """containerd's settings for pulling aftershock.local/... from ``address`` (plain HTTP)."""
    return (f'server = "http://{address}"\n\n[host."http://{address}"]\n'
            '  capabilities = ["pull", "resolve"]\n')


class Handler(http.server.BaseHTTPRequestHandler):
    root: Path
    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/v2", "/v2/"):
            return self._send(200, b"{}", "application/json", body)
        found = re.fullmatch(r"/v2/(?P<repo>.+)/(?P<what>manifests|blobs)/(?P<ref>[^/]+)", path)
        if not found:
            return self._send(404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}', "application/json",
                              body)
        digest = found["ref"]
        if found["what"] == "manifests" and not DIGEST.match(digest):
            tag = self.root / "tags" / found["repo"] / digest
            digest = tag.read_text().strip() if tag.is_file() else ""
        blob = self.root / "blobs" / "sha256" / digest.removeprefix("sha256:")
        if not DIGEST.match(digest) or not blob.is_file():
            code = "MANIFEST_UNKNOWN" if found["what"] == "manifests" else "BLOB_UNKNOWN"
            return self._send(404, json.dumps({"errors": [{"code": code}]}).encode(),
                              "application/json", body)
        kind = MANIFEST if found["what"] == "manifests" else "application/octet-stream"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(blob.stat().st_size))
        self.send_header("Docker-Content-Digest", digest)
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.end_headers()
        if body:
            with blob.open("rb") as data:
                shutil.copyfileobj(data, self.wfile)

    def _send(self, status: int, data: bytes, kind: str, body: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        print(f"{self.address_string()} {format % args}", file=sys.stderr, flush=True)


def listen(host: str) -> socket.socket:
    """The registry's socket, bound by the harness before it starts the server (so its port is
    known at once, and nothing waits for the server to say it)."""
    sock = socket.create_server((host, 0))
    sock.set_inheritable(True)
    return sock


def serve(root: Path, fd: int) -> None:
    """Serve the store on an inherited listening socket."""
    handler = type("StoreHandler", (Handler,), {"root": root})
    server = http.server.ThreadingHTTPServer(("", 0), handler, bind_and_activate=False)
    server.socket.close()
    server.socket = socket.socket(fileno=fd)
    server.server_address = server.socket.getsockname()
    server.serve_forever()


def command(root: Path, fd: int) -> list[str]:
    return [sys.executable, "-m", "aftershock.containers.images.registry", str(root),
            "--fd", str(fd)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aftershock.containers.images.registry")
    parser.add_argument("root", type=Path)
    parser.add_argument("--fd", type=int, required=True, help="an inherited listening socket")
    args = parser.parse_args(argv)
    serve(args.root, args.fd)


if __name__ == "__main__":
    main()
