"""Keeping a growing history out of Python's cyclic collector while it is recorded, and a
history's model out of it while it is judged.

A full collection stops every thread of the process while it scans every tracked container. A
recorded history is millions of them (parsed JSON: dicts and lists, never cyclic): a full scan
over 50,000 recorded pod objects took 0.53 s here, every second of it recorder lag. The
collector scans everything again whenever the heap has grown by a quarter, so a history that
grows steadily pays it again and again. ``gc.freeze()`` moves every object that exists out of
the collector's reach in O(1); refcounting still frees them. Each freeze is preceded by a
collection, which scans only what is not frozen yet (about one batch of entries), so no cyclic
garbage is kept frozen. When the last recording ends, everything is handed back.
"""

from __future__ import annotations

import gc
import threading
import weakref

EVERY = 1000  # entries between freezes: each collection then covers at most this much history

_lock = threading.RLock()  # a finalizer run by the collection may record too
_active = 0  # fences between their first freeze and their release: the last one unfreezes


class OutOfCollector:
    def __init__(self, every: int = EVERY):
        self.every = every
        self._since = 0
        self._frozen = False
        self._released = False

    def grew(self, entries: int = 1) -> None:
        """``entries`` more entries were recorded."""
        global _active
        with _lock:
            self._since += entries
            if self._released or self._since < self.every:
                return
            self._since = 0
            if not self._frozen:
                self._frozen = True
                _active += 1
            gc.collect()
            gc.freeze()

    def release(self) -> None:
        """Recording ended: the collector may scan (and free) all of it again once no other
        recording keeps it frozen. A late grew() (a thread that outlived stop) does nothing."""
        global _active
        with _lock:
            self._released = True
            if not self._frozen:
                return
            self._frozen = False
            _active -= 1
            if _active == 0:
                gc.unfreeze()


def keep_out(owner: object) -> None:
    """``owner`` (a long history's model) was just built, its million objects allocated while
    the collector was paused: freeze everything as it is, until ``owner`` goes. Left to the
    collector, its first young collection would scan every one of them (about a second for a
    million changes), and each older one again; frozen, refcounting still frees them. No
    collection comes first, as it would cost the same scan: the model's objects are acyclic,
    and whatever cyclic garbage the process held before is freed once the last owner (or
    recording) lets go."""
    global _active
    with _lock:
        _active += 1
        gc.freeze()
    weakref.finalize(owner, _let_go)


def _let_go() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            gc.unfreeze()
