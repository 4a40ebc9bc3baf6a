"""Joining the apiserver audit log onto the timeline: who created, deleted, bound, evicted."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from aftershock.timeline.entry import AUDIT
from aftershock.timeline.store import Timeline

READ_EVERY = 0.25  # the log is a file: it has no event to wait on


def parse_time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def audit_fields(event: dict[str, Any], wall_to_mono: float) -> dict[str, Any]:
    """An audit event as timeline entry fields; for creates, the response names the object."""
    ref = event.get("objectRef") or {}
    response = event.get("responseObject") or {}
    meta = response.get("metadata") or {} if response.get("kind") != "Status" else {}
    wall = parse_time(event.get("stageTimestamp") or event["requestReceivedTimestamp"])
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
        "extra": {"labels": meta.get("labels") or {}} if meta.get("labels") else {},
    }


class AuditTail:
    """Follows one audit log from the moment it is started."""

    def __init__(self, path: Path, timeline: Timeline):
        self.path = path
        self.timeline = timeline
        self._offset = path.stat().st_size if path.exists() else 0
        self._partial = b""
        self.latest = 0.0  # stageTimestamp of the newest event read
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._follow, name="audit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        self.read_available()

    def _follow(self) -> None:
        while not self._stop.wait(READ_EVERY):
            self.read_available()

    def read_until(self, wall: float, timeout: float = 3.0) -> bool:
        """Read until an audit event stamped at or after ``wall`` has been read (the recorder
        makes one: node lease renewals are not audited), so every earlier action is on the
        timeline."""
        deadline = time.monotonic() + timeout
        while True:
            self.read_available()
            if self.latest >= wall:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)  # a file has no event to wait on

    def read_available(self) -> int:
        """Append every complete audit line written since the last read; returns how many."""
        with self._lock:
            if not self.path.exists():
                return 0
            with self.path.open("rb") as log:
                log.seek(self._offset)
                data = log.read()
            self._offset += len(data)
            data = self._partial + data
            *complete, self._partial = data.split(b"\n")
            offset = time.monotonic() - time.time()
            for line in complete:
                if line.strip():
                    fields = audit_fields(json.loads(line), offset)
                    self.latest = max(self.latest, fields["wall"])
                    self.timeline.append(AUDIT, **fields)
            return len(complete)
