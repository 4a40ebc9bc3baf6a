"""The application's own state, read on a schedule by a probe process and recorded on the
timeline: every read an observation, a failed read or a silent probe a gap that the next good
read closes with what it said."""

from __future__ import annotations

import sys
import time

from aftershock.sut import app_state
from aftershock.sut.app_state import AppStateWatch
from aftershock.timeline.entry import GAP_END, GAP_START, MARK, WATCH
from aftershock.timeline.store import Timeline

PROBE = """import json, sys, time
reads = [{"version": 1, "members": [0, 1, 2], "finished": []},
         {"error": "HTTP 503"}, {"version": 2, "members": [0, 1], "finished": [2]}]
for read in reads:
    print(json.dumps({"at": time.time(), **read}), flush=True)
    time.sleep(0.1)
print("Traceback (most recent call last): not a read", flush=True)
time.sleep(60)
"""


def test_a_probe_s_reads_are_recorded_with_the_gap_a_failed_read_opens(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    timeline = Timeline()
    watch = AppStateWatch(["{python}", "probe.py", "--cluster", "{name}"], {"name": "data"},
                          tmp_path, timeline, "ns", "data", tmp_path / "app.log")
    watch.start()
    try:
        assert timeline.wait_until(lambda s: len([e for e in timeline.entries
                                                  if e.kind == GAP_START]) == 2, 10)
    finally:
        watch.stop()
    assert not watch.record.alive()  # nothing left behind
    kinds = [(e.kind, e.resource) for e in timeline.entries]
    assert kinds[0] == (MARK, "") and "appstates" in timeline.entries[0].extra["recording"]
    assert kinds[1:] == [(WATCH, "appstates"), (GAP_START, "appstates"),
                         (GAP_END, "appstates"), (GAP_START, "appstates")]
    first, closed = timeline.entries[1], timeline.entries[3]
    assert first.object["members"] == [0, 1, 2] and first.rv == "1"
    assert first.wall < closed.wall and closed.extra["changes"][0]["object"]["finished"] == [2]
    assert "HTTP 503" in timeline.entries[2].detail
    assert "not a read" in timeline.entries[4].detail


def test_a_probe_that_falls_silent_opens_a_gap(tmp_path, monkeypatch):
    monkeypatch.setattr(app_state, "STALL_SECONDS", 0.5)
    (tmp_path / "probe.py").write_text("import json, time\n"
                                       "print(json.dumps({'at': time.time(), 'version': 1}), "
                                       "flush=True)\ntime.sleep(60)\n")
    timeline = Timeline()
    watch = AppStateWatch([sys.executable, "probe.py"], {}, tmp_path, timeline, "ns", "data",
                          tmp_path / "app.log")
    began = time.monotonic()
    watch.start()
    try:
        assert timeline.wait_until(lambda s: any(e.kind == GAP_START
                                                 for e in timeline.entries), 10)
    finally:
        watch.stop()
    gap = next(e for e in timeline.entries if e.kind == GAP_START)
    assert "no read for 0.5 s" in gap.detail and gap.mono - began >= 0.5


def test_a_read_is_stamped_when_it_was_answered_and_known_from_when_it_was_asked(tmp_path):
    """Issue 64, item 10: a read stamped when it was asked was ordered as if the application
    said it then; what it says held at some moment until it answered."""
    from aftershock.history import History

    timeline = Timeline()
    watch = AppStateWatch(["true"], {}, tmp_path, timeline, "ns", "data", tmp_path / "app.log")
    timeline.mark("recording", recording={"appstates": "probe"})
    watch.apply({"at": 100.0, "answered": 100.3, "version": 1, "members": [0], "finished": []})
    read = timeline.entries[-1]
    assert read.wall == 100.3 and read.extra["asked"] == 100.0
    model = History(timeline.entries)
    offset = model.offset
    (said,) = model.reads
    assert (round(said.lo - offset, 6), round(said.hi - offset, 6)) == (100.0, 100.3)
