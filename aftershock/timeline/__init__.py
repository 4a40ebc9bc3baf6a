"""The timeline: every watch event, gap and audit record of a scenario, on one clock."""

from aftershock.timeline.entry import AUDIT, GAP_END, GAP_START, MARK, WATCH, Entry
from aftershock.timeline.recorder import Recorder
from aftershock.timeline.state import State, replay
from aftershock.timeline.store import Timeline, load

__all__ = ["AUDIT", "GAP_END", "GAP_START", "MARK", "WATCH", "Entry", "Recorder", "State",
           "Timeline", "load", "replay"]
