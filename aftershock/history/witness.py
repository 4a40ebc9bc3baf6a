"""A witness line: one recorded entry as a verdict shows it, objects named as kubectl names
them."""

from __future__ import annotations

from aftershock.timeline.entry import AUDIT, GAP_END, GAP_START, MARK, UNSETTLED, Entry


def describe(entry: Entry, origin: float = 0.0) -> str:
    """One witness line, objects named as kubectl names them."""
    at = f"+{entry.mono - origin:8.3f}s"
    if entry.kind == AUDIT:
        sub = f"/{entry.subresource}" if entry.subresource else ""
        why = f": {entry.detail}" if entry.detail else ""
        return (f"{at}  {entry.verb}{sub} {entry.ref} by {entry.actor} "
                f"(HTTP {entry.code}){why}")
    if entry.kind in (GAP_START, GAP_END, UNSETTLED):
        return f"{at}  {entry.kind} {entry.resource}: {entry.detail}"
    if entry.kind == MARK:
        return f"{at}  -- {entry.detail}"
    obj = entry.object or {}
    notes = []
    status = obj.get("status") or {}
    if entry.resource == "pods":
        node = (obj.get("spec") or {}).get("nodeName")
        notes.append(status.get("phase", "?"))
        notes.append(f"on node/{node}" if node else "unscheduled")
    if entry.resource == "events":
        involved = obj.get("involvedObject") or obj.get("regarding") or {}
        kind = str(involved.get("kind", "")).lower()
        notes.append(f"{obj.get('reason', '?')} on {kind}/{involved.get('name', '?')}: "
                     f"{obj.get('message') or obj.get('note') or ''}".rstrip(": "))
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        notes.append("terminating")
    detail = f" ({', '.join(notes)})" if notes else ""
    return f"{at}  {entry.type:<8} {entry.ref} rv={entry.rv}{detail}"


def mark(offset: float, wall: float, detail: str) -> Entry:
    """A witness from outside the recorded history (a driver's log line, a copy of a node's
    checkpoint), placed on the recorder's scale by its wall time."""
    return Entry(seq=-1, mono=wall + offset, wall=wall, kind=MARK, detail=detail)


def lines(witness: list[Entry], origin: float) -> tuple[float, list[str]]:
    """A witness as a verdict shows it: how long it spans on the recorder's clock (when each
    line was recorded, first to last whatever order the judge gave them in), and its lines."""
    times = [entry.mono for entry in witness]
    span = max(times) - min(times) if times else 0.0
    return span, [describe(entry, origin) for entry in witness]


class Mark:
    """Something the harness did, at a moment of its own clock (a step, a fault fired)."""

    __slots__ = ("at", "detail", "extra")

    def __init__(self, entry: Entry) -> None:
        self.at, self.detail, self.extra = entry.mono, entry.detail, entry.extra or {}
