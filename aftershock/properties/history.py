"""A recorded history as the judges read it: the entries up to the judgement, and what the
recorder said of its own completeness (gaps, errors, anomalies, what it recorded, the audit log).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from aftershock.timeline.entry import (
    ANOMALY,
    AUDIT,
    AUDIT_SYNC,
    ERROR,
    GAP_END,
    GAP_START,
    MARK,
    QUIET,
    UNSETTLED,
    Entry,
)


@dataclass(frozen=True)
class Trouble:
    """A stretch of one resource's history the recorder cannot vouch for: a gap (from its
    start to the re-list that closed it, or for ever) or an error or anomaly (a moment)."""

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


def _since(began: Entry) -> float:
    """Where a gap begins: at its entry, or for a watch found behind, at its last change (what
    it had not delivered happened after that)."""
    return min(began.mono, (began.extra or {}).get("since", began.mono))


class History:
    def __init__(self, entries: Sequence[Entry]):
        self.entries = entries

    @property
    def origin(self) -> float:
        return self.entries[0].mono if self.entries else 0.0

    @property
    def end(self) -> float:
        return self.entries[-1].mono if self.entries else 0.0

    @cached_property
    def _survey(self) -> tuple[list[Trouble], dict[str, str] | None, bool | None,
                               Entry | None]:
        troubles: list[Trouble] = []
        open_gaps: dict[str, Entry] = {}
        recording: dict[str, str] | None = None
        audit: bool | None = None
        sync: Entry | None = None
        for entry in self.entries:
            kind = entry.kind
            if kind == GAP_START:
                open_gaps.setdefault(entry.resource, entry)
            elif kind == GAP_END and entry.resource in open_gaps:
                began = open_gaps.pop(entry.resource)
                troubles.append(Trouble(entry.resource, _since(began), entry.mono,
                                        f"a gap in the history of {entry.resource} "
                                        f"({began.detail})"))
            elif kind == UNSETTLED:
                troubles.append(Trouble(QUIET, entry.mono, math.inf, entry.detail))
            elif kind in (ERROR, ANOMALY):
                troubles.append(Trouble(entry.resource, entry.mono, entry.mono,
                                        f"recorder {kind} on {entry.resource}: {entry.detail}"))
            elif kind == MARK and "recording" in (entry.extra or {}):
                recording = {**(recording or {}), **entry.extra["recording"]}
                if "audit" in entry.extra:
                    audit = bool(entry.extra["audit"])
            elif kind == AUDIT_SYNC:
                sync = entry
            elif kind == AUDIT and audit is None:
                audit = True
        for resource, began in open_gaps.items():
            troubles.append(Trouble(resource, _since(began), math.inf,
                                    f"a gap in the history of {resource} that never closed "
                                    f"({began.detail})"))
        return troubles, recording, audit, sync

    def troubles(self, reads: frozenset[str]) -> list[Trouble]:
        return [t for t in self._survey[0] if t.resource in reads]

    @property
    def recording(self) -> dict[str, str] | None:
        """What the recorder said it records (None: a history from before it said so)."""
        return self._survey[1]

    @cached_property
    def unserved(self) -> set[str]:
        """The kinds the recorder was asked to record and this cluster does not serve (by
        plural; a kind asked for by group and plural is also named 'plural.group')."""
        return self._unrecordable("unserved")

    @cached_property
    def unlistable(self) -> set[str]:
        """The kinds the recorder was asked to record that this cluster serves with no list
        or watch (a create-only kind), named as ``unserved`` names them."""
        return self._unrecordable("unlistable")

    def _unrecordable(self, why: str) -> set[str]:
        found: set[str] = set()
        for entry in self.entries:
            if entry.kind == MARK:
                for kind in (entry.extra or {}).get(why) or ():
                    found |= {kind, kind.split(".", 1)[0]}
        return found

    @property
    def audited(self) -> bool | None:
        return self._survey[2]

    @property
    def audit_sync(self) -> Entry | None:
        """The last reading of the audit log before a judgement, if any."""
        return self._survey[3]
