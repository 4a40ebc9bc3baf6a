"""What the application an operator manages says of itself, read on a schedule: a profile's
probe of the application (AIStore's cluster map), never of the operator, run for the scenario
as a process that prints one JSON line per read, stamped with the clock of the machine the
nodes run on (``at``). Each read is recorded on the timeline as the object
``appstates/<namespace>/<name>`` (every read, the same as the last or not: what it said at each
moment is what a judge orders against the cluster's writes); a read that failed (``error``), or
a probe silent for STALL_SECONDS, opens a gap on ``appstates`` that the next good read closes,
with that read as the re-list, so a stretch nobody saw is never judged as quiet.

A good read is ``{"at": <seconds since the epoch>, "version": <the application's own>, ...}``
with what the concept reads from it (a storage cluster: ``members``, ``finished``)."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.machine import processes
from aftershock.profile.placeholders import fill_all
from aftershock.timeline.entry import APP_STATES, GAP_END, GAP_START, WATCH
from aftershock.timeline.store import Timeline

RESOURCE = APP_STATES
FOLLOW_SECONDS = 0.2  # how often the probe's output is looked at
STALL_SECONDS = 5.0  # a probe that reads on a schedule and said nothing for this long stalled


@dataclass
class AppStateWatch:
    command: list[str]
    values: dict[str, str]
    cwd: Path
    timeline: Timeline
    namespace: str
    name: str
    log: Path
    state: processes.ClusterState | None = None
    record: processes.ProcessRecord | None = None
    _last: dict[str, Any] | None = None
    _gapped: bool = False
    _answered: float | None = None  # when the last read was answered (the nodes' clock)
    _read: int = 0  # bytes of the log taken so far
    _heard: float = field(default_factory=time.monotonic)
    _done: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def key(self) -> str:
        return f"app-state-{self.namespace}-{self.name}"

    def start(self) -> None:
        self.timeline.mark(f"recording the application's own state as "
                           f"{RESOURCE}/{self.namespace}/{self.name}",
                           recording={RESOURCE: "probe"})
        argv = [*fill_all(self.command, {"python": sys.executable, **self.values}), "watch"]
        _, self.record = processes.spawn(self.key, argv, self.log, cwd=self.cwd)
        if self.state is not None:
            processes.adopt(self.state, self.key, self.record)
        self._thread = threading.Thread(target=self._follow, name=self.key, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self.record is not None:
            processes.terminate([self.record], grace=2)
            if self.state is not None:
                processes.release(self.state, self.key)
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _follow(self) -> None:
        while not self._done.wait(FOLLOW_SECONDS):
            self._take()
            if time.monotonic() - self._heard > STALL_SECONDS:
                self.apply({"error": f"no read for {STALL_SECONDS:g} s (the probe stalled or "
                                     "ended)"})
        self._take()

    def _take(self) -> None:
        """The lines the probe wrote since the last look, each one read."""
        if not self.log.exists():
            return
        with self.log.open("rb") as log:
            log.seek(self._read)
            chunk = log.read()
        whole = chunk[:chunk.rfind(b"\n") + 1]
        self._read += len(whole)
        for line in whole.decode(errors="replace").splitlines():
            self._heard = time.monotonic()
            self.apply(_parse(line))

    def apply(self, read: dict[str, Any]) -> None:
        """One line of the probe: a read is stamped when it was answered (``wall``), with when
        it was asked (``extra.asked``): what it says held at some moment between the two. A
        failure, or a probe silent too long, opens a gap from the last answer."""
        asked = float(read.get("at") or time.time())
        wall = float(read.get("answered") or asked)
        if "error" in read:
            if not self._gapped:
                self._gapped = True
                self.timeline.append(GAP_START, resource=RESOURCE, wall=wall,
                                     detail=f"the application's state could not be read: "
                                            f"{str(read['error'])[:300]}",
                                     extra={"since_answer": self._answered})
            return
        self._answered = wall
        obj = {"metadata": {"name": self.name, "namespace": self.namespace,
                            "resourceVersion": str(read.get("version", ""))},
               **{k: v for k, v in read.items() if k not in ("at", "answered", "version")}}
        extra = {"asked": asked} if "answered" in read else {}
        if self._gapped:
            self._gapped, self._last = False, obj
            self.timeline.append(GAP_END, resource=RESOURCE, wall=wall,
                                 extra={"changes": [{"type": "MODIFIED", "object": obj}],
                                        **extra})
            return
        kind = "ADDED" if self._last is None else "MODIFIED"
        self._last = obj
        self.timeline.append(WATCH, resource=RESOURCE, namespace=self.namespace,
                             name=self.name, type=kind, object=obj, wall=wall,
                             rv=str(read.get("version", "")), extra=extra)


def _parse(line: str) -> dict[str, Any]:
    """One read; a line that is no read (a traceback, a warning) is a failed one."""
    try:
        read = json.loads(line)
    except ValueError:
        return {"error": f"not a read: {line[:200]}"}
    return read if isinstance(read, dict) else {"error": f"not a read: {line[:200]}"}
