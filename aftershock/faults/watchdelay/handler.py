"""The WatchDelay proxy's HTTP side: requests pass at once on kept-alive upstream
connections; a watch's frames are read upstream in the client's encoding and written to the
client as the proxy releases them."""

from __future__ import annotations

import contextlib
import http.client
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from aftershock.faults.watchdelay.frames import Frame as Received
from aftershock.faults.watchdelay.frames import encoding_of, expired, frames
from aftershock.faults.watchdelay.streams import PATH, Frame, Stream, resource_of


class UpstreamSide(Protocol):
    """The API server as a handler reaches it (the proxy's ``Upstream``)."""

    token: str | None

    def connect(self, timeout: float | None, own_token: bool) -> http.client.HTTPSConnection:
        ...


class Served(Protocol):
    """What a handler asks of the proxy it serves (a ``WatchDelay``), so that this module needs
    nothing of the proxy's: the proxy imports the handler, never the other way."""

    upstream: UpstreamSide
    severed: bool

    def log(self, event: str, **fields: Any) -> None: ...
    def written(self, method: str, path: str, status: int) -> None: ...
    def write_delay(self, method: str, resource: str) -> float: ...
    def register(self, stream: Stream) -> None: ...
    def unregister(self, stream: Stream) -> None: ...
    def accept(self, stream: Stream, event: Received, namespace_of_path: str) -> None: ...
    def next_frame(self, stream: Stream) -> Frame | None: ...

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade", "host", "content-length", "accept-encoding"}


class Server(ThreadingHTTPServer):
    proxy: Served
    # a client opens a connection per request it has in flight: a burst of them (a scheduler's
    # writes, each held by a write delay) overflowed socketserver's backlog of 5, and each
    # connection refused was retried by TCP a second or more later
    request_queue_size = 1024

    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-response is logged, not printed."""
        self.proxy.log("client-error", client=str(client_address),
                       error=repr(sys.exc_info()[1]))


class Handler(BaseHTTPRequestHandler):
    """One client connection; the proxy it serves is its server's."""

    protocol_version = "HTTP/1.1"
    server: Server

    @property
    def proxy(self) -> Served:
        return self.server.proxy

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
            return self.proxy.upstream.connect(None, own_token)
        kept = self._kept.get(own_token)
        if kept is None:
            kept = self._kept[own_token] = self.proxy.upstream.connect(60, own_token)
        return kept

    def log_message(self, format: str, *args: Any) -> None:
        """Requests go to the proxy's JSON log instead."""

    def do_GET(self) -> None:
        self._forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    def _forward(self) -> None:
        if self.proxy.severed:  # as a killed client's requests: never sent, never answered
            self.close_connection = True
            return
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        watching = query.get("watch", ["false"])[0] in ("true", "1")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        own_token = any(key.lower() == "authorization" for key in headers)
        if not own_token and self.proxy.upstream.token:
            headers["Authorization"] = f"Bearer {self.proxy.upstream.token}"
        delay = 0.0 if watching else self.proxy.write_delay(self.command, resource_of(parts.path))
        if delay:
            time.sleep(delay)  # the fault itself: this write reaches the API server late
        started = time.monotonic()
        bare = own_token and not self.proxy.upstream.token
        connection = None
        try:
            connection, response = self._exchange(watching, bare, body, headers)
            self.proxy.log("request", method=self.command, path=self.path, status=response.status,
                      watch=watching, seconds=round(time.monotonic() - started, 4),
                      held=delay,
                      accept=headers.get("Accept", ""),
                      content_type=response.getheader("Content-Type", ""))
            if watching and response.status == 200:
                self._stream_watch(response, parts.path)
            else:
                self._pass_through(response)
                self.proxy.written(self.command, parts.path, response.status)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away
        except Exception as exc:  # keep serving; the log says what went wrong
            self.proxy.log("error", method=self.command, path=self.path, error=repr(exc))
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
        stream = Stream(self.path, resource,
                        encoding_of(response.getheader("Content-Type")))
        self.proxy.register(stream)
        reader = threading.Thread(target=self._read_upstream,
                                  args=(response, stream, namespace), daemon=True)
        reader.start()
        self._send_headers(response, chunked=True)
        try:
            while (frame := self.proxy.next_frame(stream)) is not None:
                self._chunk(frame.data)
                self.proxy.log("frame-emitted", stream=stream.path, type=frame.kind,
                          resource=frame.resource, namespace=frame.namespace,
                          name=frame.name, rv=frame.rv,
                          held=round(time.monotonic() - frame.received, 4))
            if stream.cut:
                self.proxy.log("stream-cut", stream=stream.path)
                with contextlib.suppress(OSError):  # the client went first
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if stream.expire:
                self._chunk(expired(stream.encoding))
                self.proxy.log("frame-expired", stream=stream.path)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with stream.changed:
                stream.closed = True
            self.proxy.unregister(stream)
            self.close_connection = True

    def _read_upstream(self, response: http.client.HTTPResponse, stream: Stream,
                       namespace: str) -> None:
        try:
            for event in frames(response, stream.encoding):
                if stream.closed:
                    break
                self.proxy.accept(stream, event, namespace)
        except Exception:  # closed under us: the stream ended or the proxy stopped
            pass
        # The apiserver ended the watch: end the client's once every frame is out.
        with stream.changed:
            stream.upstream_done = True
            stream.changed.notify_all()


def _abort(connection: http.client.HTTPSConnection) -> None:
    """Close a watch's upstream connection while its reader thread may still be blocked in a
    read: shut the socket down first, since closing the response alone waits for the reader's
    buffer lock and would deadlock."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # already gone
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()
