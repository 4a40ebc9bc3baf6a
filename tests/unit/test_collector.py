"""A recorded history is kept out of the cyclic collector's scans while it grows, and handed
back when recording ends (the guard against full-collection pauses as recorder lag)."""

from __future__ import annotations

import gc

from aftershock.timeline.collector import OutOfCollector


def test_a_growing_history_is_frozen_then_released() -> None:
    gc.unfreeze()
    fence = OutOfCollector(every=3)
    history = [{"metadata": {"name": f"p{i}"}, "spec": {"containers": [{}]}} for i in range(50)]
    fence.grew(2)
    assert gc.get_freeze_count() == 0
    fence.grew(1)
    frozen = gc.get_freeze_count()
    assert frozen >= 150  # the history's containers are out of the collector's reach
    fence.release()
    assert gc.get_freeze_count() == 0
    assert history


def test_release_without_a_freeze_leaves_others_frozen_alone() -> None:
    gc.unfreeze()
    gc.freeze()
    before = gc.get_freeze_count()
    OutOfCollector(every=10).release()
    assert gc.get_freeze_count() == before
    gc.unfreeze()
