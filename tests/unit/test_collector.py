"""A recorded history is kept out of the cyclic collector's scans while it grows, and handed
back when recording ends (the guard against full-collection pauses as recorder lag)."""

from __future__ import annotations

import gc
import weakref

from aftershock.timeline.collector import OutOfCollector


def scanned(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_a_growing_history_is_frozen_then_released() -> None:
    fence = OutOfCollector(every=3)
    history = [{"metadata": {"name": f"p{i}"}, "spec": {"containers": [{}]}} for i in range(50)]
    fence.grew(2)
    assert scanned(history[0])
    fence.grew(1)
    assert not scanned(history[0])  # out of the collector's reach
    fence.release()
    assert scanned(history[0])


def test_a_grew_after_release_freezes_nothing() -> None:
    fence = OutOfCollector(every=1)
    fence.release()
    late = {"spec": {}}
    fence.grew(5)
    assert scanned(late)


def test_the_last_recording_to_end_unfreezes() -> None:
    first, second = OutOfCollector(every=1), OutOfCollector(every=1)
    first.grew()
    second.grew()
    kept = {"spec": {}}
    second.grew()
    first.release()
    assert not scanned(kept)  # the second recording still runs
    second.release()
    assert scanned(kept)


class Node:
    pass


def test_no_cyclic_garbage_is_kept_frozen() -> None:
    fence = OutOfCollector(every=1)
    gc.disable()  # only the fence may collect here
    try:
        cycle = Node()
        cycle.me = cycle
        alive = weakref.ref(cycle)
        del cycle
        fence.grew()
        assert alive() is None  # collected before the freeze, not kept frozen
    finally:
        fence.release()
        gc.enable()
