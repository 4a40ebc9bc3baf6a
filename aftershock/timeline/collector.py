"""Keeping a growing history out of Python's cyclic collector while it is recorded.

A full collection stops every thread of the process while it scans every tracked container. A
recorded history is millions of them (parsed JSON: dicts and lists, never cyclic), and scanning a
10,000-pod history took 0.5 s each time, every second of it recorder lag. The collector
runs a full scan again whenever the heap has grown by a quarter, so a history that grows
steadily pays it again and again. ``gc.freeze()`` moves every object that exists out of the
collector's reach in O(1); refcounting still frees them. Cyclic garbage made meanwhile is
kept until ``release()`` hands everything back to the collector.
"""

from __future__ import annotations

import gc
import threading

EVERY = 1000  # entries between freezes: each full scan then covers at most this much history


class OutOfCollector:
    def __init__(self, every: int = EVERY):
        self.every = every
        self._since = 0
        self._lock = threading.Lock()
        self._frozen = False

    def grew(self, entries: int = 1) -> None:
        """``entries`` more entries were recorded."""
        with self._lock:
            self._since += entries
            if self._since < self.every:
                return
            self._since = 0
            self._frozen = True
        gc.freeze()

    def release(self) -> None:
        """Recording ended: the collector may scan (and free) all of it again."""
        with self._lock:
            if not self._frozen:
                return
            self._frozen = False
        gc.unfreeze()
