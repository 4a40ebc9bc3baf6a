"""Joining the apiserver audit log onto the timeline: who created, deleted, bound, evicted."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO

from aftershock.kube import stamps
from aftershock.timeline.entry import AUDIT, AUDIT_LOG, ERROR, GAP_END, GAP_START, WATCH, Entry
from aftershock.timeline.store import Timeline

READ_EVERY = 0.25  # the log is a file: it has no event to wait on
# What the audit policy leaves out (`providers/data/audit-policy.yaml`): their deletions have
# no line to wait for.
UNLOGGED = frozenset({"events"})
# Kinds some of whose writes the policy leaves out (events; simulated nodes' lease renewals):
# the log cannot say none of them was written.
UNAUDITED = frozenset({"events", "leases"})


def audit_fields(event: dict[str, Any], wall_to_mono: float) -> dict[str, Any]:
    """An audit event as timeline entry fields; for creates, the response names the object."""
    ref = event.get("objectRef") or {}
    response = event.get("responseObject") or {}
    meta = response.get("metadata") or {} if response.get("kind") != "Status" else {}
    wall = stamps.seconds(event.get("stageTimestamp") or event["requestReceivedTimestamp"])
    received = event.get("requestReceivedTimestamp")
    return {
        "mono": wall + wall_to_mono,
        "wall": wall,
        "resource": ref.get("resource", ""),
        "namespace": ref.get("namespace", ""),
        "name": ref.get("name") or meta.get("name", ""),
        "uid": meta.get("uid", "") if not ref.get("subresource") else "",
        "subresource": ref.get("subresource", ""),
        "actor": (event.get("user") or {}).get("username", ""),
        "verb": event.get("verb", ""),
        "code": (event.get("responseStatus") or {}).get("code", 0),
        # why a request was refused (an admission webhook's denial names itself)
        "detail": _refusal(event),
        # when the request was received: what it did happened between then and its stage
        "extra": {**({"labels": meta["labels"]} if meta.get("labels") else {}),
                  **({"group": ref["apiGroup"]} if ref.get("apiGroup") else {}),
                  **({"received": received} if received else {})},
    }


def _refusal(event: dict[str, Any]) -> str:
    status = event.get("responseStatus") or {}
    return str(status.get("message") or "")[:500] if status.get("code", 0) >= 400 else ""


class Deletions:
    """The deletions the watches saw whose request's audit line is not read yet. The API
    server writes a request's line when its handler ends, so on a loaded machine a deletion
    already delivered by a watch can be logged after a request made later: an event read past
    a moment does not mean every earlier deletion's line was. A line is matched by the object's
    name (one of a namespace's collection by both), each line to one deletion."""

    def __init__(self) -> None:
        self.scanned = 0  # the next timeline seq to read
        self.unheard: dict[str, tuple[str, str, str]] = {}  # uid → the object's key
        self._lines: Counter[tuple[str, str, str]] = Counter()  # lines no deletion took yet
        self._collections: set[tuple[str, str]] = set()
        self._going: set[str] = set()  # uids seen being deleted

    def read(self, entries: list[Entry]) -> None:
        for entry in entries:
            self.scanned = entry.seq + 1
            if entry.kind == AUDIT:
                self._line(entry)
            elif entry.kind == WATCH and entry.object is not None:
                self._change(entry)

    def _line(self, entry: Entry) -> None:
        if entry.verb == "deletecollection":
            self._collections.add((entry.resource, entry.namespace))
            self.unheard = {uid: key for uid, key in self.unheard.items()
                            if key[:2] != (entry.resource, entry.namespace)}
        elif entry.verb == "delete" or (entry.verb == "create" and
                                        entry.subresource == "eviction"):
            for uid, key in self.unheard.items():
                if key == entry.key:
                    del self.unheard[uid]
                    return
            self._lines[entry.key] += 1

    def _change(self, entry: Entry) -> None:
        meta = entry.object.get("metadata") or {}
        uid = entry.uid or meta.get("uid", "")
        going = entry.type == "DELETED" or bool(meta.get("deletionTimestamp"))
        if not going or not uid or entry.resource in UNLOGGED:
            return
        first = uid not in self._going
        self._going.add(uid)
        if entry.type == "SYNC":  # being deleted before the recording began
            return
        if self._lines[entry.key] > 0:
            self._lines[entry.key] -= 1  # the final delete of a graceful one takes its own
        elif first and (entry.resource, entry.namespace) not in self._collections:
            self.unheard[uid] = entry.key


class AuditTail:
    """Follows one audit log from the moment it is started, across the apiserver's rotations
    (its log writer renames the file aside at 100 MB and starts a new one)."""

    def __init__(self, path: Path, timeline: Timeline):
        self.path = path
        self.timeline = timeline
        self._partial = b""
        # Started while the apiserver was half-way through writing a line: the rest of that
        # line is from before the start, and read alone it is not JSON.
        self._skip_to_newline = False
        self._log: BinaryIO | None = self._open(at_end=True)
        self.latest = 0.0  # stageTimestamp of the newest event read
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._gap = False
        self.deletions = Deletions()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._follow, name="audit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.read_available()
        with self._lock:
            self._closed = True  # a later read must not take the log up again from its start
            if self._log:
                self._log.close()
                self._log = None

    def _follow(self) -> None:
        while not self._stop.wait(READ_EVERY):
            self.read_available()

    def read_until(self, wall: float, timeout: float = 3.0) -> bool:
        """Read until an audit event stamped at or after ``wall`` has been read (the recorder
        makes one: node lease renewals are not audited), and within the same ``timeout`` until
        every deletion the watches delivered has its request's line too (see ``Deletions``),
        so every earlier action is on the timeline. Whether the first was reached: a deletion
        whose line never comes (the API server deletes a CRD's objects itself) is waited for
        once, and its request is then unknown to the judges that ask (none joins it)."""
        deadline = time.monotonic() + timeout
        reached = False
        while True:
            self.read_available()
            reached = reached or self.latest >= wall
            if reached:
                self.deletions.read(self.timeline.since(self.deletions.scanned))
                if not self.deletions.unheard:
                    return True
            if self._closed or time.monotonic() > deadline:
                self.deletions.unheard.clear()
                return reached
            time.sleep(0.05)  # a file has no event to wait on

    def read_available(self) -> int:
        """Append every complete audit line written since the last read; returns how many.
        A failure is put on the timeline as a recorder error on the audit log (judges that ask
        it who did what are then UNKNOWN over that moment) and following goes on."""
        with self._lock:
            try:
                count = self._read()
            except Exception as exc:  # never let the follower die silently
                self._cannot_read(f"reading {self.path} failed: {exc!r}")
                return 0
            if self._gap:
                self._gap = False
                self.timeline.append(GAP_END, resource=AUDIT_LOG, detail="the audit log is "
                                     "read again", extra={"changes": []})
            return count

    def _open(self, at_end: bool) -> BinaryIO | None:
        try:
            log = self.path.open("rb")
        except FileNotFoundError:
            return None  # not written yet: read it from its start when it appears
        if at_end and log.seek(0, os.SEEK_END) > 0:
            log.seek(-1, os.SEEK_END)
            self._skip_to_newline = log.read(1) != b"\n"
        return log

    def _rotated(self) -> bool:
        assert self._log is not None
        try:
            now = self.path.stat().st_ino
        except FileNotFoundError:
            return False  # renamed aside, the new one not created yet
        return now != os.fstat(self._log.fileno()).st_ino

    def _read(self) -> int:
        if self._closed:
            return 0
        if self._log is None:
            self._log = self._open(at_end=False)
            if self._log is None:
                return 0
        # Ask before reading: once the name points elsewhere, nothing more is written to the
        # file still open here, so reading it to its end misses nothing.
        rotated = self._rotated()
        if os.fstat(self._log.fileno()).st_size < self._log.tell():
            self._failed("the audit log was cut short in place: lines may be lost")
            self._log.seek(0)
            self._partial, self._skip_to_newline = b"", False
        count = self._take(self._log.read())
        if rotated:
            old, self._log = self._log, None  # if opening the new one fails, retry it next time
            old.close()
            if self._partial or self._skip_to_newline:
                self._failed("the rotated audit log ended inside a line (the apiserver stopped "
                             "mid-write?)")
                self._partial, self._skip_to_newline = b"", False
            self._log = self._open(at_end=False)
            if self._log is not None:
                count += self._take(self._log.read())
        return count

    def _take(self, data: bytes) -> int:
        if self._skip_to_newline:
            end = data.find(b"\n")
            if end < 0:
                return 0
            data, self._skip_to_newline = data[end + 1:], False
        *complete, self._partial = (self._partial + data).split(b"\n")
        offset = time.monotonic() - time.time()
        for line in complete:
            if not line.strip():
                continue
            try:
                fields = audit_fields(json.loads(line), offset)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                self._failed(f"an unreadable audit line ({exc}): {line[:80]!r}")
                continue
            self.latest = max(self.latest, fields["wall"])
            self.timeline.append(AUDIT, **fields)
        return len(complete)

    def _failed(self, text: str) -> None:
        """One thing that could not be read: a recorder error at this moment."""
        self.errors.append(text)
        self.timeline.append(ERROR, resource=AUDIT_LOG, detail=text)

    def _cannot_read(self, text: str) -> None:
        """The log cannot be read at all: who did what is unknown from here until a read
        succeeds again (one gap, however many retries)."""
        if self._gap:
            return
        self._gap = True
        self.errors.append(text)
        self.timeline.append(GAP_START, resource=AUDIT_LOG, detail=text)
