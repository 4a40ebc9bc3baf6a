"""The cluster's clock: when something happened, as far as the record can say.

A moment of the cluster is known to lie within a span, on the recorder's monotonic scale (the
scale every step, mark and judgement parameter uses): ``lo <= moment < hi``. An audited request
is exact to the microsecond ([received, completed]); a watched change carries the second its
object's managedFields say it was written in, and the cluster's order (resourceVersion) bounds
it by its neighbours; an application's read by when it was asked and answered. What the record
cannot bound is ``-inf`` or ``inf``: a judge comparing two moments gets "before", "after" or
"not known", never a guess. The recorder's own arrival time of a watch event is never a moment
of the cluster (a watch that lags delivers late what happened early)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from aftershock.kube import stamps

INF = math.inf
SECOND = 1.0 - 1e-6  # a whole-second stamp covers [s, s + 1)


@dataclass(frozen=True, slots=True)
class Span:
    """A moment known to lie in [lo, hi] (recorder scale, seconds)."""

    lo: float
    hi: float

    @classmethod
    def at(cls, moment: float) -> Span:
        return cls(moment, moment)

    @property
    def exact(self) -> bool:
        return self.lo == self.hi

    def before(self, other: Span) -> bool | None:
        """Whether this moment came before ``other``: True or False when the spans say so,
        None when they overlap."""
        if self.hi < other.lo:
            return True
        if self.lo > other.hi:
            return False
        return None

    def by(self, moment: float) -> bool | None:
        """Whether it had happened by ``moment``."""
        if self.hi <= moment:
            return True
        if self.lo > moment:
            return False
        return None

    def __str__(self) -> str:
        return f"[{self.lo:.3f}, {self.hi:.3f}]"


def seconds(stamp: str) -> float:
    """An RFC 3339 stamp as seconds since the epoch (NaN when it is none; `stamps.seconds`
    keeps what it parsed)."""
    if not stamp:
        return math.nan
    try:
        return stamps.seconds(stamp)
    except ValueError:
        return math.nan


def stamp(wall: float) -> str:
    """Seconds since the epoch as the API server stamps them (whole seconds, UTC)."""
    if wall != wall:
        return "unknown"
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def apart(first: Span, then: Span) -> tuple[float, float]:
    """How long after ``first`` ``then`` came: at least, at most."""
    return then.lo - first.hi, then.hi - first.lo
