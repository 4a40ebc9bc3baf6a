"""What a check returns: pass / violated / unknown, with the witness that proves a violation;
or not applicable, with the reason the property does not apply to what was judged (a KEP's
word, the profile's): neither a verdict nor a skip for want of a capability."""

from __future__ import annotations

from dataclasses import dataclass, field

from aftershock.history import Entry, describe
from aftershock.history.witness import lines as witness_lines

PASS, VIOLATED, UNKNOWN = "pass", "violated", "unknown"
NOT_APPLICABLE = "not applicable"


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
            span, shown = witness_lines(self.witness, self.origin)
            title = "evidence" if self.status == PASS else "witness"
            lines.append(f"{title} ({len(self.witness)} events over {span:.3f}s):")
            lines += [f"  {line}" for line in shown]
        if self.found:
            source = f", from {self.external}" if self.external else ""
            lines.append(f"found ({len(self.found)}){source}:")
            lines += [f"  {line}" for line in self.found]
        return "\n".join(lines)



__all__ = ["NOT_APPLICABLE", "PASS", "UNKNOWN", "VIOLATED", "Verdict", "describe"]
