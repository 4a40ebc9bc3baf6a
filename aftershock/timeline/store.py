"""The timeline: an append-only, thread-safe history that waiters can block on."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from aftershock.timeline.entry import FIELDS, MARK, Entry
from aftershock.timeline.state import State

FILE_NAME = "timeline.jsonl"
FORMAT = 2  # 1: an object per line


class Timeline:
    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._state = State()
        self._changed = threading.Condition()
        self.started = time.monotonic()

    def append(self, kind: str, **fields: Any) -> Entry:
        with self._changed:
            entry = Entry(seq=len(self._entries), mono=fields.pop("mono", time.monotonic()),
                          wall=fields.pop("wall", time.time()), kind=kind, **fields)
            self._entries.append(entry)
            self._state.apply(entry)
            self._changed.notify_all()
            return entry

    def mark(self, detail: str, **extra: Any) -> Entry:
        return self.append(MARK, detail=detail, extra=extra)

    @property
    def entries(self) -> list[Entry]:
        with self._changed:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def since(self, seq: int) -> list[Entry]:
        with self._changed:
            return self._entries[seq:]

    def snapshot(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        with self._changed:
            return self._state.objects

    def state(self) -> State:
        """A copy of the recorded state as of now."""
        with self._changed:
            return self._state.copy()

    def wait_until(self, holds: Callable[[State], bool],
                   timeout: float) -> tuple[bool, Entry | None]:
        """Block until ``holds(state)`` is true after some recorded entry, or ``timeout`` ends.

        Woken by every append (no polling); returns (held, the entry that made it hold).
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                if holds(self._state):
                    return True, self._state.last
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False, self._state.last
                self._changed.wait(remaining)

    def save(self, directory: Path) -> Path:
        """timeline.jsonl: a header naming the fields, then one JSON array per entry (an
        array costs far less to read back than an object: a history may be millions long)."""
        return save(self.entries, directory)


def save(entries: list[Entry], directory: Path) -> Path:
    """``entries`` as ``directory``/timeline.jsonl, the form ``load`` reads."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FILE_NAME
    with path.open("wb") as out:
        out.write(orjson.dumps({"timeline": FORMAT, "fields": list(FIELDS)}) + b"\n")
        for entry in entries:
            out.write(orjson.dumps(entry.row()) + b"\n")
    return path


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """A long history is millions of small containers: the cyclic collector, run again and
    again over all of them while a history is read or judged, costs more than the work."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def load(path: str | Path) -> list[Entry]:
    """A saved timeline (a scenario report dir or its timeline.jsonl) as a list of entries;
    the lines of a timeline saved before the array format (one object each) load too."""
    path = Path(path)
    if path.is_dir():
        path = path / FILE_NAME
    parse = orjson.loads
    with collector_paused(), path.open("rb") as lines:
        first = next(lines, b"")
        header = parse(first) if first.strip() else {}
        if header.get("timeline") != FORMAT:
            rest = [first, *lines]
            return [Entry.from_json(parse(line)) for line in rest if not line.isspace()]
        if header["fields"] != list(FIELDS):
            raise ValueError(f"{path}: fields {header['fields']} are not {list(FIELDS)}")
        return [Entry(*parse(line)) for line in lines if not line.isspace()]
