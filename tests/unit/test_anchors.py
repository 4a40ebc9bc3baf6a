"""Faults anchored on the n-th event or write, in the proxy without a cluster: a stall holds
from exactly that event, a miss hides it and what follows and then forces a re-list, a kill
fires after exactly that accepted write, and each fires once."""

import json
import ssl
import time

import pytest

from aftershock.faults.anchors import EventAnchor, KillAfterWrite, Miss, Stall, ordinal
from aftershock.faults.watchdelay import Stream, Upstream, WatchDelay
from aftershock.faults.watchdelay.frames import json_frame


@pytest.fixture
def proxy(tmp_path):
    context = ssl.create_default_context()
    delay = WatchDelay(Upstream("127.0.0.1", 1, context, context), tmp_path / "log.jsonl")
    yield delay
    delay.stop()


def _frame(kind: str, name: str, namespace: str = "ns"):
    return json_frame(json.dumps({"type": kind, "object": {"metadata": {
        "name": name, "namespace": namespace, "resourceVersion": "1"}}}).encode())


def test_a_stall_holds_from_the_nth_event_and_not_before(proxy):
    proxy.anchor([Stall(EventAnchor("pods", "ADDED", 2, "ns"), 0.4)])
    stream = Stream("/api/v1/namespaces/ns/pods?watch=true", "pods")
    began = time.monotonic()
    proxy.accept(stream, _frame("ADDED", "a"), "ns")
    proxy.accept(stream, _frame("MODIFIED", "a"), "ns")  # not an ADDED: not counted
    proxy.accept(stream, _frame("ADDED", "b"), "ns")  # the 2nd ADDED: held from here
    proxy.accept(stream, _frame("MODIFIED", "b"), "ns")
    releases = [frame.release - began for frame in stream.frames]
    assert releases[0] < 0.1 and releases[1] < 0.1
    assert releases[2] >= 0.39 and releases[3] >= 0.39
    assert proxy.triggers.fired == ["stall at the 2nd ADDED pods event for 0.4s"]


def test_events_of_another_namespace_are_not_counted(proxy):
    proxy.anchor([Stall(EventAnchor("pods", "ADDED", 1, "ns"), 5)])
    stream = Stream("/api/v1/pods?watch=true", "pods")
    proxy.accept(stream, _frame("ADDED", "a", namespace="other"), "")
    assert not proxy.triggers.fired
    proxy.accept(stream, _frame("ADDED", "b"), "")
    assert proxy.triggers.fired


def test_a_miss_hides_the_events_then_the_watch_is_told_to_relist(proxy):
    proxy.anchor([Miss(EventAnchor("pods", "MODIFIED", 1, "ns"), 0.2)])
    stream = Stream("/api/v1/namespaces/ns/pods?watch=true", "pods")
    proxy.register(stream)
    proxy.accept(stream, _frame("ADDED", "a"), "ns")
    proxy.accept(stream, _frame("MODIFIED", "a"), "ns")
    proxy.accept(stream, _frame("DELETED", "a"), "ns")
    assert [frame.kind for frame in stream.frames] == ["ADDED"]
    deadline = time.monotonic() + 3
    while not stream.expire and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.expire  # the client gets 410 Gone and re-lists


def test_a_kill_fires_once_after_the_nth_accepted_write_of_its_kind(proxy):
    kills = []
    proxy.anchor([KillAfterWrite(2, "create", "pods")], kill=lambda: kills.append(1))
    proxy.written("POST", "/api/v1/namespaces/ns/pods", 201)
    proxy.written("POST", "/api/v1/namespaces/ns/pods", 409)  # refused: not counted
    proxy.written("DELETE", "/api/v1/namespaces/ns/pods/a", 200)  # another verb
    assert not kills
    proxy.written("POST", "/api/v1/namespaces/ns/pods", 201)
    proxy.written("POST", "/api/v1/namespaces/ns/pods", 201)
    assert kills == [1]


def test_ordinals_read_as_english():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
