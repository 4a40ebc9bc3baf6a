"""The one model of a recorded history that every judge reads (``History``): objects' lives by
uid, their changes in the cluster's order with each moment on the cluster's clock, the audit
log's requests joined to the lives they acted on, and what the recorder could not vouch for.
The properties and checks read a history only through it (`make lint`)."""

from aftershock.history.actions import Action
from aftershock.history.changes import ADDED, DELETED, MODIFIED, SYNC, Change
from aftershock.history.clock import INF, Span, apart, seconds, stamp
from aftershock.history.coverage import Trouble
from aftershock.history.lives import Life
from aftershock.history.model import History
from aftershock.history.witness import describe, mark
from aftershock.timeline.entry import Entry  # a witness: the recorded entry it points at
from aftershock.timeline.store import collector_paused

__all__ = [
           "ADDED",
           "DELETED",
           "INF",
           "MODIFIED",
           "SYNC",
           "Action",
           "Change",
           "Entry",
           "History",
           "Life",
           "Span",
           "Trouble",
           "apart",
           "collector_paused",
           "describe",
           "mark",
           "seconds",
           "stamp",
]
