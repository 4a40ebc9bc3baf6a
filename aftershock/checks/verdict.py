"""What a check returns: pass / violated / unknown, with the witness that proves a violation."""

from __future__ import annotations

from dataclasses import dataclass, field

from aftershock.timeline.entry import AUDIT, GAP_END, GAP_START, MARK, UNSETTLED, Entry

PASS, VIOLATED, UNKNOWN = "pass", "violated", "unknown"


@dataclass
class Verdict:
    property: str
    status: str
    summary: str
    witness: list[Entry] = field(default_factory=list)
    origin: float = 0.0  # recorder time shown as +0.000s in the witness
    # What the judgement rests on, for the one rule of the property registry:
    subjects: int | None = None  # objects (or occurrences) judged; 0 means nothing to judge
    window: tuple[float, float] | None = None  # recorder times judged (None: the whole history)
    by_absence: bool = False  # a violation that says something did NOT happen
    reads: frozenset[str] | None = None  # resources read ("audit": the audit log)
    external: str = ""  # what it judged instead of the history, when it read none of it
    # What that outside source showed, one line each: the witness of a verdict judged from it
    found: tuple[str, ...] = ()

    @property
    def held(self) -> bool:
        return self.status == PASS

    def explain(self) -> str:
        lines = [f"{self.property}: {self.status.upper()}: {self.summary}"]
        if self.witness:
            span = self.witness[-1].mono - self.witness[0].mono
            title = "evidence" if self.status == PASS else "witness"
            lines.append(f"{title} ({len(self.witness)} events over {span:.3f}s):")
            lines += [f"  {describe(entry, self.origin)}" for entry in self.witness]
        if self.found:
            source = f", from {self.external}" if self.external else ""
            lines.append(f"found ({len(self.found)}){source}:")
            lines += [f"  {line}" for line in self.found]
        return "\n".join(lines)


def describe(entry: Entry, origin: float = 0.0) -> str:
    """One witness line, objects named as kubectl names them."""
    at = f"+{entry.mono - origin:8.3f}s"
    if entry.kind == AUDIT:
        sub = f"/{entry.subresource}" if entry.subresource else ""
        return f"{at}  {entry.verb}{sub} {entry.ref} by {entry.actor} (HTTP {entry.code})"
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
