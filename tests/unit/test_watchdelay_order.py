"""The proxy's release order, without a cluster: a frame never leaves before the one ahead of
it, so an undelayed BOOKMARK cannot overtake a delayed ADDED; drops and pauses hold."""

import json
import ssl
import time

import pytest

from aftershock.faults.watchdelay import Rule, Stream, Upstream, WatchDelay
from aftershock.faults.watchdelay.frames import Frame, json_frame


@pytest.fixture
def proxy(tmp_path):
    context = ssl.create_default_context()
    delay = WatchDelay(Upstream("127.0.0.1", 1, context, context), tmp_path / "log.jsonl")
    yield delay
    delay.stop()


def _frame(kind: str, name: str, rv: int) -> Frame:
    return json_frame(json.dumps({"type": kind, "object": {"metadata": {
        "name": name, "namespace": "ns", "resourceVersion": str(rv)}}}).encode())


def _drain(proxy: WatchDelay, stream: Stream, count: int) -> list[tuple[str, float]]:
    out = []
    for _ in range(count):
        frame = proxy.next_frame(stream)
        out.append((frame.kind, time.monotonic()))
    return out


def test_a_bookmark_never_overtakes_a_delayed_event(proxy):
    proxy.set_rules([Rule(delay=0.3, resource="pods", types=frozenset({"ADDED"}))])
    stream = Stream("/api/v1/pods?watch=true", "pods")
    began = time.monotonic()
    proxy.accept(stream, _frame("ADDED", "a", 1), "")
    proxy.accept(stream, _frame("BOOKMARK", "", 2), "")
    proxy.accept(stream, _frame("MODIFIED", "b", 3), "")
    emitted = _drain(proxy, stream, 3)
    assert [kind for kind, _ in emitted] == ["ADDED", "BOOKMARK", "MODIFIED"]
    assert all(at - began >= 0.3 for _, at in emitted)


def test_dropped_frames_never_reach_the_client(proxy):
    proxy.set_rules([Rule(resource="pods", types=frozenset({"DELETED"}), drop=True)])
    stream = Stream("/api/v1/pods?watch=true", "pods")
    proxy.accept(stream, _frame("DELETED", "a", 1), "")
    proxy.accept(stream, _frame("ADDED", "b", 2), "")
    assert [kind for kind, _ in _drain(proxy, stream, 1)] == ["ADDED"]
    assert not stream.frames


def test_a_pause_holds_everything_until_resume(proxy):
    stream = Stream("/api/v1/pods?watch=true", "pods")
    proxy.pause()
    proxy.accept(stream, _frame("ADDED", "a", 1), "")
    resumed = time.monotonic() + 0.2
    import threading

    threading.Timer(0.2, proxy.resume).start()
    (_, at), = _drain(proxy, stream, 1)
    assert at >= resumed - 0.01


def _protobuf_event(kind: str, name: str, namespace: str, rv: str) -> bytes:
    """A WatchEvent as the apiserver frames it for a protobuf client."""
    import struct

    from aftershock.faults.watchdelay.frames import MAGIC, _field

    meta = _field(1, name) + _field(3, namespace) + _field(6, rv)
    unknown = MAGIC + _field(1, _field(1, "meta.k8s.io/v1") + _field(2, "PartialObjectMetadata")) \
        + _field(2, _field(1, meta))
    event = _field(1, kind) + _field(2, _field(1, unknown))
    return struct.pack(">I", len(event)) + event


def test_protobuf_frames_are_read_in_the_clients_encoding():
    import io

    from aftershock.faults.watchdelay import frames as watchframes

    data = _protobuf_event("ADDED", "cm-1", "ns", "41") + _protobuf_event("DELETED", "x", "", "42")
    read = list(watchframes.frames(io.BufferedReader(io.BytesIO(data)), watchframes.PROTOBUF))
    assert [(f.type, f.name, f.namespace, f.rv) for f in read] == [
        ("ADDED", "cm-1", "ns", "41"), ("DELETED", "x", "", "42")]
    assert b"".join(f.data for f in read) == data, "frames pass on byte for byte"
    gone = watchframes.protobuf_frame(watchframes.expired(watchframes.PROTOBUF))
    assert gone.type == "ERROR"
    assert json.loads(watchframes.expired(watchframes.JSON))["object"]["code"] == 410


def test_a_write_delay_holds_the_writes_of_its_resource_and_nothing_else(proxy):
    proxy.delay_writes("resourceclaims", 0.5)
    assert proxy.write_delay("PUT", "resourceclaims") == 0.5
    assert proxy.write_delay("POST", "resourceclaims") == 0.5
    assert proxy.write_delay("GET", "resourceclaims") == 0.0  # a read is never held
    assert proxy.write_delay("PUT", "pods") == 0.0
    proxy.delay_writes("resourceclaims", 0)
    assert proxy.write_delay("PUT", "resourceclaims") == 0.0
