"""What the recorder could not vouch for, on the cluster's clock: each stretch of one resource's
history it did not see (a gap, from the last change it had recorded of that resource to the
re-list that closed it; for a deletion a watch never delivered, from that object's last
recorded change), each moment it failed or saw a stream break its order, and, for judges of an
end state, the moment a wait for quiet ran out."""

from __future__ import annotations

from dataclasses import dataclass

from aftershock.history.clock import INF


@dataclass(frozen=True)
class Trouble:
    """A stretch of one resource's history the recorder cannot vouch for: a gap (from its start
    to the re-list that closed it, or for ever) or an error or anomaly (a moment)."""

    resource: str
    start: float
    end: float
    what: str

    def overlaps(self, start: float, end: float) -> bool:
        """Whether the trouble touches [start, end]; the state a re-list closes a gap with is
        the true one, so a gap's last moment is not part of it."""
        if self.start == self.end:
            return start <= self.start <= end
        return self.start <= end and self.end > start

    @property
    def open(self) -> bool:
        return self.end == INF
