"""WatchDelay: an HTTP reverse proxy on 127.0.0.1 between ONE client and the apiserver.

The client gets a kubeconfig pointing at the proxy (plain HTTP on loopback); the proxy talks to
the apiserver with that client's own credentials, so the audit log still names the client.
Requests pass at once — writes are never delayed. WATCH responses are re-emitted frame by frame
after a delay, in order (a frame is never released before the one ahead of it, so bookmarks never
overtake delayed events), selectable per resource, namespace and event type. Also: pause/resume
(a frozen cache), drop, close the streams, cut them mid-stream, answer 410. Every request and
frame is logged. The client's own Accept header is kept: frames are read in its encoding
(``frames``).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from aftershock.faults.anchors import Anchored, Triggers
from aftershock.faults.watchdelay.frames import Frame as Received
from aftershock.faults.watchdelay.handler import Handler, Server
from aftershock.faults.watchdelay.streams import Frame, Stream, namespace_of, resource_of

ANCHORED_TYPES = {"ADDED", "MODIFIED", "DELETED"}
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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
    def from_kubeconfig(cls, path: Path) -> Upstream:
        """The client's own server and credentials (a client certificate, or a token). The key
        is loaded from memory: it is never written to disk."""
        config = yaml.safe_load(path.read_text())
        context_name = config.get("current-context")
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
        server = urlsplit(cluster["server"])
        tls, bare = ssl.create_default_context(), ssl.create_default_context()
        for context in (tls, bare):
            if cluster.get("certificate-authority-data"):
                context.load_verify_locations(cadata=base64.b64decode(
                    cluster["certificate-authority-data"]).decode())
            elif cluster.get("certificate-authority"):
                context.load_verify_locations(cafile=cluster["certificate-authority"])
        if user.get("client-certificate-data"):
            load_chain_from_memory(tls, base64.b64decode(user["client-certificate-data"]),
                                   base64.b64decode(user["client-key-data"]))
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


def load_chain_from_memory(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """ssl reads a certificate chain from files only: anonymous in-memory files (memfd), gone
    when closed, never on a disk or in a directory anyone could list."""
    fds = [os.memfd_create("cert"), os.memfd_create("key")]
    try:
        for fd, data in zip(fds, (cert, key), strict=True):
            os.write(fd, data)
        context.load_cert_chain(f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}")
    finally:
        for fd in fds:
            os.close(fd)


class WatchDelay:
    """The proxy. ``start()`` it, point the client at ``url`` (``write_kubeconfig``)."""

    def __init__(self, upstream: Upstream, log_path: Path, name: str = "client", port: int = 0):
        self.upstream = upstream
        self.name = name
        self.rules: list[Rule] = []
        self.paused_until: float | None = None  # a frozen cache: release nothing until resume
        self.triggers: Triggers | None = None  # faults anchored on the n-th event or write
        self.severed = False  # cut off: nothing the client sends reaches the API server
        self.write_delays: dict[str, float] = {}  # resource -> seconds each write waits
        self._streams: set[Stream] = set()
        self._lock = threading.Lock()
        self._log = log_path.open("a", buffering=1)
        self._log_lock = threading.Lock()
        self._server = Server(("127.0.0.1", port), Handler)
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

    def anchor(self, faults: list[Anchored], kill: Callable[[], None] | None = None,
               on_fire: Callable[[str, float], None] | None = None) -> None:
        """Faults that fire at the n-th event the client is sent or write it makes."""
        self.triggers = Triggers(faults, self.log, self.expire_streams, kill, on_fire)
        self.log("anchored", faults=[repr(fault) for fault in faults])

    def sever(self) -> None:
        """The client as good as killed: every watch cut, every request from now on dropped
        unanswered (a sidecar cannot kill the container beside it; the harness then does)."""
        self.severed = True
        self.log("severed")
        self.cut_streams()

    def written(self, method: str, path: str, status: int) -> None:
        if self.triggers is not None:
            self.triggers.write(method, resource_of(path), namespace_of(path), status)

    def pause(self) -> None:
        self.paused_until = float("inf")
        self.log("pause")

    def resume(self) -> None:
        self.paused_until = None
        self.log("resume")
        self._notify_all()

    def delay_writes(self, resource: str, seconds: float) -> None:
        """Every write of ``resource`` the client makes from now on (a create, an update, a
        patch or a delete, of the object or its status) waits ``seconds`` before it is sent to
        the API server: a slow write, its answer as late. 0 ends it."""
        with self._lock:
            self.write_delays[resource] = seconds
        self.log("delay-writes", resource=resource, seconds=seconds)

    def write_delay(self, method: str, resource: str) -> float:
        if method not in WRITES:
            return 0.0
        with self._lock:
            return self.write_delays.get(resource, 0.0)

    def close_streams(self) -> None:
        """End every open watch: the client re-watches from its last resourceVersion."""
        self._end_streams("closed")
        self.log("close-streams")

    def expire_streams(self, resource: str | None = None) -> None:
        """Answer every open watch (of ``resource``) with 410 Gone: the client must re-list."""
        self._end_streams("expire", resource)
        self.log("expire-streams", resource=resource)

    def cut_streams(self) -> None:
        """Break every open watch mid-stream (no final chunk), as a lost connection does."""
        self._end_streams("cut")
        self.log("cut-streams")

    def _end_streams(self, how: str, resource: str | None = None) -> None:
        for stream in self._snapshot_streams():
            if resource is not None and stream.resource != resource:
                continue
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

    @property
    def watching(self) -> int:
        """How many watch streams pass through the proxy now."""
        with self._lock:
            return len(self._streams)

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

    def accept(self, stream: Stream, event: Received, namespace_of_path: str) -> None:
        """A frame arrived from the apiserver: give it a release time, keep the order."""
        now = time.monotonic()
        kind = event.type
        namespace = event.namespace or namespace_of_path
        rule = self._rule_for(stream.resource, namespace, kind)
        fields = {"stream": stream.path, "type": kind, "resource": stream.resource,
                  "namespace": namespace, "name": event.name, "rv": event.rv}
        held = 0.0
        if self.triggers is not None and kind in ANCHORED_TYPES:
            missed, held = self.triggers.frame(stream.resource, namespace, kind, now)
            if missed:
                self.log("frame-missed", **fields)
                return
        if rule is not None and rule.drop:
            self.log("frame-dropped", **fields)
            return
        delay = 0.0 if rule is None else rule.delay + random.uniform(0, rule.jitter)
        with stream.changed:
            previous = stream.frames[-1].release if stream.frames else 0.0
            frame = Frame(event.data, now, max(now + delay, previous, held), kind,
                          stream.resource, namespace, fields["name"], fields["rv"])
            stream.frames.append(frame)
            stream.changed.notify_all()
        self.log("frame-received", delay=delay, **fields)

    def next_frame(self, stream: Stream) -> Frame | None:
        """Block until the head frame's release time (and no pause); None when closed."""
        with stream.changed:
            while True:
                if stream.closed or stream.expire or stream.cut:
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
