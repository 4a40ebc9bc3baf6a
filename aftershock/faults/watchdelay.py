"""WatchDelay: an HTTP reverse proxy on 127.0.0.1 between ONE client and the apiserver.

The client gets a kubeconfig pointing at the proxy (plain HTTP on loopback); the proxy talks to
the apiserver with that client's own credentials, so the audit log still names the client.
Requests pass at once — writes are never delayed. WATCH responses are re-emitted frame by frame
after a delay, in order (a frame is never released before the one ahead of it, so bookmarks never
overtake delayed events), selectable per resource, namespace and event type. Also: pause/resume
(a frozen cache), drop, close the streams, answer 410. Every request and frame is logged.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import re
import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade", "host", "content-length", "accept-encoding"}
PATH = re.compile(r"^/(?:api/v1|apis/[^/]+/[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/?]+)")
EXPIRED = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
                                       "status": "Failure", "reason": "Expired", "code": 410,
                                       "message": "too old resource version (aftershock)"}}


@dataclass(frozen=True)
class Rule:
    """Which watch frames a rule applies to; None matches everything."""

    delay: float = 0.0
    resource: str | None = None
    namespace: str | None = None
    types: frozenset[str] | None = None  # ADDED, MODIFIED, DELETED, BOOKMARK
    jitter: float = 0.0
    drop: bool = False

    def matches(self, resource: str, namespace: str, kind: str) -> bool:
        return ((self.resource is None or self.resource == resource)
                and (self.namespace is None or self.namespace == namespace)
                and (self.types is None or kind in self.types))


@dataclass
class Upstream:
    """The apiserver as the client knows it. ``context`` presents the client's certificate;
    ``bare`` does not, for requests that carry their own bearer token (a certificate would win
    over the token, and the audit log would name the wrong actor)."""

    host: str
    port: int
    context: ssl.SSLContext
    bare: ssl.SSLContext
    token: str | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path, workdir: Path) -> Upstream:
        """The client's own server and credentials (cert/key written for ssl, or a token)."""
        import base64

        config = yaml.safe_load(path.read_text())
        context_name = config.get("current-context")
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
        server = urlsplit(cluster["server"])
        tls, bare = ssl.create_default_context(), ssl.create_default_context()
        workdir.mkdir(parents=True, exist_ok=True)
        for context in (tls, bare):
            if cluster.get("certificate-authority-data"):
                context.load_verify_locations(cadata=base64.b64decode(
                    cluster["certificate-authority-data"]).decode())
            elif cluster.get("certificate-authority"):
                context.load_verify_locations(cafile=cluster["certificate-authority"])
        if user.get("client-certificate-data"):
            cert, key = workdir / "client.crt", workdir / "client.key"
            cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
            key.write_bytes(base64.b64decode(user["client-key-data"]))
            key.chmod(0o600)
            tls.load_cert_chain(str(cert), str(key))
        elif user.get("client-certificate"):
            tls.load_cert_chain(user["client-certificate"], user["client-key"])
        return cls(server.hostname or "127.0.0.1", server.port or 443, tls, bare,
                   user.get("token"))

    def connect(self, timeout: float | None, own_token: bool) -> http.client.HTTPSConnection:
        connection = http.client.HTTPSConnection(
            self.host, self.port, timeout=timeout,
            context=self.bare if own_token else self.context)
        connection.connect()
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection


@dataclass
class Frame:
    line: bytes
    received: float
    release: float
    kind: str
    resource: str
    namespace: str
    name: str
    rv: str


@dataclass(eq=False)
class Stream:
    """One client watch: frames waiting for their release time, in arrival order."""

    path: str
    resource: str
    frames: deque[Frame] = field(default_factory=deque)
    changed: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False
    expire: bool = False
    upstream_done: bool = False


class WatchDelay:
    """The proxy. ``start()`` it, point the client at ``url`` (``write_kubeconfig``)."""

    def __init__(self, upstream: Upstream, log_path: Path, name: str = "client", port: int = 0):
        self.upstream = upstream
        self.name = name
        self.rules: list[Rule] = []
        self.paused_until: float | None = None  # a frozen cache: release nothing until resume
        self._streams: set[Stream] = set()
        self._lock = threading.Lock()
        self._log = log_path.open("a", buffering=1)
        self._log_lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _handler_for(self))
        self._server.proxy = self
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- control --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> WatchDelay:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name=f"watchdelay-{self.name}")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.close_streams()
        deadline = time.monotonic() + 2
        while self._snapshot_streams() and time.monotonic() < deadline:
            time.sleep(0.01)  # let each stream write its final chunk
        if self._thread is not None:  # shutdown() waits for serve_forever: only if it runs
            self._server.shutdown()
        self._server.server_close()
        self._log.close()

    def set_rules(self, rules: list[Rule]) -> None:
        with self._lock:
            self.rules = list(rules)
        self.log("rules", rules=[rule.__dict__ | {"types": sorted(rule.types or [])}
                                 for rule in rules])

    def pause(self) -> None:
        self.paused_until = float("inf")
        self.log("pause")

    def resume(self) -> None:
        self.paused_until = None
        self.log("resume")
        self._notify_all()

    def close_streams(self) -> None:
        """End every open watch: the client re-watches from its last resourceVersion."""
        self._end_streams("closed")
        self.log("close-streams")

    def expire_streams(self) -> None:
        """Answer every open watch with 410 Gone: the client must re-list."""
        self._end_streams("expire")
        self.log("expire-streams")

    def _end_streams(self, how: str) -> None:
        for stream in self._snapshot_streams():
            with stream.changed:
                setattr(stream, how, True)
                stream.changed.notify_all()

    def write_kubeconfig(self, path: Path) -> Path:
        """A kubeconfig for the client: plain HTTP to the proxy on loopback."""
        config = {"apiVersion": "v1", "kind": "Config",
                  "clusters": [{"name": "proxy", "cluster": {"server": self.url}}],
                  "users": [{"name": "proxy", "user": {}}],
                  "contexts": [{"name": "proxy", "context": {"cluster": "proxy",
                                                             "user": "proxy"}}],
                  "current-context": "proxy"}
        path.write_text(yaml.safe_dump(config))
        return path

    # --- internals ------------------------------------------------------------------------

    def log(self, event: str, **fields: Any) -> None:
        record = {"mono": time.monotonic(), "wall": time.time(), "event": event, **fields}
        with self._log_lock:
            if not self._log.closed:
                self._log.write(json.dumps(record, default=str) + "\n")

    def _snapshot_streams(self) -> list[Stream]:
        with self._lock:
            return list(self._streams)

    def _notify_all(self) -> None:
        for stream in self._snapshot_streams():
            with stream.changed:
                stream.changed.notify_all()

    def _rule_for(self, resource: str, namespace: str, kind: str) -> Rule | None:
        with self._lock:
            return next((r for r in self.rules if r.matches(resource, namespace, kind)), None)

    def register(self, stream: Stream) -> None:
        with self._lock:
            self._streams.add(stream)

    def unregister(self, stream: Stream) -> None:
        with self._lock:
            self._streams.discard(stream)

    def accept(self, stream: Stream, line: bytes, namespace_of_path: str) -> None:
        """A frame arrived from the apiserver: give it a release time, keep the order."""
        now = time.monotonic()
        try:
            event = json.loads(line)
        except ValueError:
            event = {}
        kind = event.get("type", "")
        meta = (event.get("object") or {}).get("metadata") or {}
        namespace = meta.get("namespace") or namespace_of_path
        rule = self._rule_for(stream.resource, namespace, kind)
        fields = {"stream": stream.path, "type": kind, "resource": stream.resource,
                  "namespace": namespace, "name": meta.get("name", ""),
                  "rv": meta.get("resourceVersion", "")}
        if rule is not None and rule.drop:
            self.log("frame-dropped", **fields)
            return
        delay = 0.0 if rule is None else rule.delay + random.uniform(0, rule.jitter)
        with stream.changed:
            previous = stream.frames[-1].release if stream.frames else 0.0
            frame = Frame(line, now, max(now + delay, previous), kind, stream.resource,
                          namespace, fields["name"], fields["rv"])
            stream.frames.append(frame)
            stream.changed.notify_all()
        self.log("frame-received", delay=delay, **fields)

    def next_frame(self, stream: Stream) -> Frame | None:
        """Block until the head frame's release time (and no pause); None when closed."""
        with stream.changed:
            while True:
                if stream.closed or stream.expire:
                    return None
                if stream.upstream_done and not stream.frames:
                    return None
                if stream.frames and self.paused_until is None:
                    wait = stream.frames[0].release - time.monotonic()
                    if wait <= 0:
                        return stream.frames.popleft()
                    stream.changed.wait(wait)
                else:
                    stream.changed.wait(1.0)


class _Server(ThreadingHTTPServer):
    proxy: WatchDelay

    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-response is logged, not printed."""
        import sys

        self.proxy.log("client-error", client=str(client_address),
                       error=repr(sys.exc_info()[1]))


def _handler_for(proxy: WatchDelay):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Small writes must not wait for delayed ACKs: the proxy adds no latency.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._kept: dict[bool, http.client.HTTPSConnection] = {}

        def finish(self) -> None:
            super().finish()
            for kept in self._kept.values():
                kept.close()

        def _upstream(self, watching: bool, own_token: bool) -> http.client.HTTPSConnection:
            """A fresh connection per watch; one kept-alive connection per client connection
            (and credential) for everything else, so requests pay no TLS handshake."""
            if watching:
                return proxy.upstream.connect(None, own_token)
            kept = self._kept.get(own_token)
            if kept is None:
                kept = self._kept[own_token] = proxy.upstream.connect(60, own_token)
            return kept

        def log_message(self, format: str, *args: Any) -> None:
            """Requests go to the proxy's JSON log instead."""

        def do_GET(self) -> None:
            self._forward()

        do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

        def _forward(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            watching = query.get("watch", ["false"])[0] in ("true", "1")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            if watching:
                headers["Accept"] = "application/json"  # frames must be readable
            own_token = any(key.lower() == "authorization" for key in headers)
            if not own_token and proxy.upstream.token:
                headers["Authorization"] = f"Bearer {proxy.upstream.token}"
            started = time.monotonic()
            bare = own_token and not proxy.upstream.token
            connection = None
            try:
                connection, response = self._exchange(watching, bare, body, headers)
                proxy.log("request", method=self.command, path=self.path, status=response.status,
                          watch=watching, seconds=round(time.monotonic() - started, 4))
                if watching and response.status == 200:
                    self._stream_watch(response, parts.path)
                else:
                    self._pass_through(response)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client went away
            except Exception as exc:  # keep serving; the log says what went wrong
                proxy.log("error", method=self.command, path=self.path, error=repr(exc))
                self.close_connection = True
                self._drop(bare)
            finally:
                if watching and connection is not None:
                    _abort(connection)

        def _exchange(self, watching: bool, bare: bool, body: bytes | None,
                      headers: dict[str, str]):
            """Send upstream; a kept-alive connection the apiserver closed is re-opened once."""
            for attempt in (1, 2):
                connection = self._upstream(watching, bare)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    return connection, connection.getresponse()
                except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                    self._drop(bare)
                    connection.close()
                    if watching or attempt == 2:
                        raise
            raise AssertionError("unreachable")

        def _drop(self, bare: bool) -> None:
            kept = self._kept.pop(bare, None)
            if kept is not None:
                kept.close()

        def _send_headers(self, response: http.client.HTTPResponse, chunked: bool,
                          length: int | None = None) -> None:
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(length or 0))
            self.end_headers()

        def _pass_through(self, response: http.client.HTTPResponse) -> None:
            data = response.read()
            self._send_headers(response, chunked=False, length=len(data))
            if self.command != "HEAD":
                self.wfile.write(data)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _stream_watch(self, response: http.client.HTTPResponse, path: str) -> None:
            found = PATH.match(path)
            resource = found.group("res") if found else path
            namespace = (found.group("ns") or "") if found else ""
            stream = Stream(self.path, resource)
            proxy.register(stream)
            reader = threading.Thread(target=self._read_upstream,
                                      args=(response, stream, namespace), daemon=True)
            reader.start()
            self._send_headers(response, chunked=True)
            try:
                while (frame := proxy.next_frame(stream)) is not None:
                    self._chunk(frame.line + b"\n")
                    proxy.log("frame-emitted", stream=stream.path, type=frame.kind,
                              resource=frame.resource, namespace=frame.namespace,
                              name=frame.name, rv=frame.rv,
                              held=round(time.monotonic() - frame.received, 4))
                if stream.expire:
                    self._chunk(json.dumps(EXPIRED).encode() + b"\n")
                    proxy.log("frame-expired", stream=stream.path)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                with stream.changed:
                    stream.closed = True
                proxy.unregister(stream)
                self.close_connection = True

        def _read_upstream(self, response: http.client.HTTPResponse, stream: Stream,
                           namespace: str) -> None:
            try:
                while not stream.closed:
                    line = response.readline()
                    if not line:
                        break
                    if line.strip():
                        proxy.accept(stream, line.rstrip(b"\n"), namespace)
            except Exception:  # closed under us: the stream ended or the proxy stopped
                pass
            # The apiserver ended the watch: end the client's once every frame is out.
            with stream.changed:
                stream.upstream_done = True
                stream.changed.notify_all()

    return Handler


def _abort(connection: http.client.HTTPSConnection) -> None:
    """Close a watch's upstream connection while its reader thread may still be blocked in a
    read: shut the socket down first, since closing the response alone waits for the reader's
    buffer lock and would deadlock."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # already gone
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()


@dataclass
class DelayedWatch:
    """Fault: one control-plane component (kube-controller-manager or kube-scheduler) is
    restarted with a kubeconfig through a WatchDelay proxy; reverting restarts it direct."""

    cluster: Any
    component: str
    rules: list[Rule]
    workdir: Path
    proxy: WatchDelay | None = None

    @property
    def description(self) -> str:
        what = ", ".join(f"{r.resource or 'all'} +{r.delay:g}s" for r in self.rules)
        return f"watches of {self.component} delayed ({what})"

    def apply(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        upstream = Upstream.from_kubeconfig(
            self.cluster.paths.component_kubeconfig(self.component), self.workdir)
        self.proxy = WatchDelay(upstream, self.workdir / f"{self.component}-proxy.jsonl",
                                self.component).start()
        self.proxy.set_rules(self.rules)
        kubeconfig = self.proxy.write_kubeconfig(self.workdir / f"{self.component}.kubeconfig")
        self.cluster.restart_component(self.component, kubeconfig)

    def revert(self) -> None:
        self.cluster.restart_component(self.component)
        if self.proxy is not None:
            self.proxy.stop()
