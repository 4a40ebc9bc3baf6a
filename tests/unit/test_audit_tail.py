"""Following the apiserver audit log: its writer rotates the file at 100 MB (rename aside, new
file); a line that cannot be read is a recorder error on the audit log, never a dead follower."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from aftershock.history import History
from aftershock.kube.stamps import seconds as parse_time
from aftershock.timeline.audit import AuditTail
from aftershock.timeline.entry import AUDIT, AUDIT_LOG, ERROR
from aftershock.timeline.store import Timeline


def event(name: str, second: int) -> bytes:
    stamp = f"2026-11-24T10:00:{second:02d}.000000Z"
    return (json.dumps({
        "verb": "create", "user": {"username": "tester"},
        "objectRef": {"resource": "pods", "namespace": "ns", "name": name},
        "responseStatus": {"code": 201}, "stageTimestamp": stamp,
        "requestReceivedTimestamp": stamp}) + "\n").encode()


def follow(tmp_path: Path, written: bytes = b"") -> tuple[Path, Timeline, AuditTail]:
    """An audit log holding ``written``, and a tail following it from now."""
    log = tmp_path / "audit.log"
    log.write_bytes(written)
    timeline = Timeline()
    return log, timeline, AuditTail(log, timeline)


def names(timeline: Timeline) -> list[str]:
    return [e.name for e in timeline.entries if e.kind == AUDIT]


def test_a_rotation_loses_no_line(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_bytes(event("before-start", 0))
    timeline = Timeline()
    tail = AuditTail(log, timeline)
    with log.open("ab") as out:
        out.write(event("a", 1))
        out.write(event("b", 2))
    tail.read_available()
    with log.open("ab") as out:
        out.write(event("c", 3))  # written after the last read, then the file is renamed aside
    log.rename(tmp_path / "audit-2026-11-24T10-00-03.000.log")
    log.write_bytes(event("d", 4)[:40])  # the new file, with half a line so far
    tail.read_available()
    with log.open("ab") as out:
        out.write(event("d", 4)[40:] + event("e", 5))
    tail.read_available()
    assert names(timeline) == ["a", "b", "c", "d", "e"]
    assert not tail.errors


def test_the_old_offset_is_never_read_in_the_new_file(tmp_path: Path) -> None:
    """The bug this guards: an offset kept across a rotation skipped the new file's start and
    then read from inside a line, which killed the follower."""
    log, timeline, tail = follow(tmp_path)
    with log.open("ab") as out:
        for second in range(5):
            out.write(event(f"old-{second}", second))
    tail.read_available()
    log.rename(tmp_path / "audit-old.log")
    log.write_bytes(b"".join(event(f"new-{s}", 10 + s) for s in range(8)))
    tail.read_available()
    assert names(timeline)[5:] == [f"new-{s}" for s in range(8)]
    assert not tail.errors


def test_an_unreadable_line_is_a_recorder_error_and_following_goes_on(tmp_path: Path) -> None:
    log, timeline, tail = follow(tmp_path)
    with log.open("ab") as out:
        out.write(event("a", 1) + b'4:00Z","stage": 1}\n' + event("b", 2))
    tail.read_available()
    assert names(timeline) == ["a", "b"]
    errors = [e for e in timeline.entries if e.kind == ERROR]
    assert [e.resource for e in errors] == [AUDIT_LOG]
    troubles = History(timeline.entries).troubles(frozenset({AUDIT_LOG}))
    assert len(troubles) == 1 and "unreadable audit line" in troubles[0].what


def test_a_log_that_appears_later_is_read_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    timeline = Timeline()
    tail = AuditTail(log, timeline)
    assert tail.read_available() == 0
    log.write_bytes(event("first", 1))
    tail.read_available()
    assert names(timeline) == ["first"]


def test_started_while_a_line_was_half_written(tmp_path: Path) -> None:
    """The bug this guards: following began at the file's end, inside a line the apiserver was
    still writing; its rest was read as a line of its own, was not JSON, and the follower died
    (every write after it went unrecorded)."""
    log = tmp_path / "audit.log"
    line = event("half", 1)
    log.write_bytes(event("before", 0) + line[:57])
    timeline = Timeline()
    tail = AuditTail(log, timeline)
    tail.read_available()
    with log.open("ab") as out:
        out.write(line[57:60])
    tail.read_available()
    with log.open("ab") as out:
        out.write(line[60:] + event("after", 2))
    tail.read_available()
    assert names(timeline) == ["after"]
    assert not tail.errors


def test_nothing_is_read_after_stop(tmp_path: Path) -> None:
    log, timeline, tail = follow(tmp_path)
    with log.open("ab") as out:
        out.write(event("during", 1))
    tail.stop()
    with log.open("ab") as out:
        out.write(event("after", 2))
    assert tail.read_available() == 0 and tail.read_until(0.0, timeout=0.1)
    assert names(timeline) == ["during"]


def test_a_rotated_file_that_ends_inside_a_line_is_an_error(tmp_path: Path) -> None:
    log, timeline, tail = follow(tmp_path)
    with log.open("ab") as out:
        out.write(event("a", 1) + event("cut", 2)[:30])
    tail.read_available()
    log.rename(tmp_path / "audit-old.log")
    log.write_bytes(event("b", 3))
    tail.read_available()
    assert names(timeline) == ["a", "b"]
    assert len(tail.errors) == 1 and "inside a line" in tail.errors[0]


def test_a_new_file_that_cannot_be_opened_is_one_gap_then_read(tmp_path: Path) -> None:
    """The bug this guards: the old file was closed before the new one opened; when opening
    failed, every later read hit the closed file and the log was never read again."""
    log, timeline, tail = follow(tmp_path)
    log.rename(tmp_path / "audit-old.log")
    log.mkdir()  # opening it fails (root reads any file, so not a mode)
    for _ in range(3):
        tail.read_available()
    log.rmdir()
    log.write_bytes(event("back", 4))
    tail.read_available()
    assert names(timeline) == ["back"]
    kinds = [e.kind for e in timeline.entries if e.resource == AUDIT_LOG]
    assert kinds == ["gap-start", "gap-end"]
    troubles = History(timeline.entries).troubles(frozenset({AUDIT_LOG}))
    assert len(troubles) == 1 and troubles[0].end < float("inf")


def test_a_log_cut_short_in_place_is_an_error_and_read_again(tmp_path: Path) -> None:
    log, timeline, tail = follow(tmp_path)
    with log.open("ab") as out:
        out.write(event("a", 1) + event("b", 2))
    tail.read_available()
    log.write_bytes(event("c", 3))  # truncated and rewritten, same file
    tail.read_available()
    assert names(timeline) == ["a", "b", "c"]
    assert len(tail.errors) == 1 and "cut short" in tail.errors[0]


def deleted(name: str, second: int, verb: str = "delete", subresource: str = "") -> bytes:
    stamp = f"2026-11-24T10:00:{second:02d}.000000Z"
    ref = {"resource": "pods", "namespace": "ns", "name": name,
           **({"subresource": subresource} if subresource else {})}
    return (json.dumps({
        "verb": verb, "user": {"username": "system:serviceaccount:kube-system:tainter"},
        "objectRef": ref, "responseStatus": {"code": 200}, "stageTimestamp": stamp,
        "requestReceivedTimestamp": stamp}) + "\n").encode()


def going(timeline: Timeline, name: str, uid: str, kind: str = "MODIFIED") -> None:
    timeline.append("watch", resource="pods", namespace="ns", name=name, uid=uid, type=kind,
                    object={"metadata": {"name": name, "namespace": "ns", "uid": uid,
                                         "deletionTimestamp": "2026-11-24T10:00:01Z"}})


WALL = parse_time("2026-11-24T10:00:05Z")


def test_a_deletion_logged_after_a_later_request_is_waited_for(tmp_path: Path) -> None:
    """The bug this guards: a watch delivered a pod's deletion, the log was then read past a
    request made later, and the judgement ran without the deletion's own line (its handler
    wrote it last): who deleted the pod was missing (a CI run of test_node_failure)."""
    log, timeline, tail = follow(tmp_path)
    going(timeline, "victim", "u1")
    with log.open("ab") as out:
        out.write(event("later", 6))  # stamped after the moment read to

    def the_deletion_logged_late() -> None:
        with log.open("ab") as out:
            out.write(deleted("victim", 7))
    writer = threading.Timer(0.3, the_deletion_logged_late)
    writer.start()
    try:
        assert tail.read_until(WALL, timeout=5)
    finally:
        writer.join()
    assert names(timeline) == ["later", "victim"]


def test_deletions_already_logged_or_never_logged_cost_one_wait_at_most(tmp_path: Path) -> None:
    log, timeline, tail = follow(tmp_path)
    going(timeline, "graceful", "u1")  # the client's delete, then the kubelet's final one
    going(timeline, "graceful", "u1", "DELETED")
    going(timeline, "evicted", "u2")
    going(timeline, "collected", "u3")
    going(timeline, "old", "u4", "SYNC")  # was going when the recording began
    with log.open("ab") as out:
        out.write(deleted("graceful", 2) + deleted("graceful", 3) +
                  deleted("evicted", 3, "create", "eviction") +
                  deleted("", 4, "deletecollection") + event("later", 6))
    assert tail.read_until(WALL, timeout=5)
    assert not tail.deletions.unheard
    timeline.append("watch", resource="events", namespace="ns", name="e", uid="u6",
                    type="DELETED", object={"metadata": {"name": "e", "uid": "u6"}})
    tail.deletions.read(timeline.since(tail.deletions.scanned))
    assert not tail.deletions.unheard  # events are not audited: nothing to wait for
    going(timeline, "crd-object", "u5", "DELETED")  # the API server deleted it itself
    assert tail.read_until(WALL, timeout=0.2)  # read past the moment: the wait was spent
    assert not tail.deletions.unheard
    assert tail.read_until(WALL, timeout=0)
