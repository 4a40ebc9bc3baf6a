"""The one rule every verdict passes through: a verdict must be earned.

- A pass needs something to judge: zero matching objects is UNKNOWN, with the check's reason.
- A pass, or a violation that says something did not happen, needs a complete history of what
  it read over the window it judged: a gap, a recorder error or an anomaly there is UNKNOWN.
- A violation proven by recorded states stands if the history from its first witness through
  the moment it is judged at (the last witness, or the end of its window: for stays_for, the
  start it says the condition did not hold at) is complete: a re-list closes a gap with the
  true state, so what is proven after a gap is proven. A check that remembers something from
  earlier puts that earlier entry in its witness, or judges its violation by absence.
- Who-did-what needs an audit log that had caught up when the judgement was made.
"""

from __future__ import annotations

from dataclasses import replace

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.history import INF, History
from aftershock.history.names import AUDIT_LOG, QUIET


def settle(verdict: Verdict, history: History) -> Verdict:
    if verdict.status not in (PASS, VIOLATED):
        return verdict
    if verdict.reads is None:
        return _unknown(verdict, "the check did not say what it read")
    if not verdict.reads and not verdict.external:
        return _unknown(verdict, "the check read nothing of the history and named nothing "
                        "else it judged from")
    witnessed = verdict.status == VIOLATED and not verdict.by_absence and verdict.witness
    why = (_incomplete(verdict, history, witnessed)
           or (None if witnessed else _unrecorded(verdict, history))
           or (None if witnessed else _audit(verdict, history)))
    if why:
        return _unknown(verdict, why)
    if verdict.status == PASS:
        if verdict.subjects is None:
            return _unknown(verdict, "the check did not count what it judged")
        if verdict.subjects == 0:
            return _unknown(verdict, "nothing to judge")
    return verdict


def _window(verdict: Verdict, history: History, witnessed: bool) -> tuple[float, float]:
    """What a verdict rests on, on the cluster's clock: its witnesses (each when it happened,
    not when the recorder heard of it) through the moment it is judged at, or its window."""
    if witnessed:
        spans = [history.when(entry) for entry in verdict.witness]
        times = [s.lo for s in spans] + [s.hi for s in spans] + list(verdict.window or ())
        times = [t for t in times if abs(t) != float("inf")] or [history.origin]
        return min(times), max(times)
    return verdict.window or (history.origin, history.end)


def _incomplete(verdict: Verdict, history: History, witnessed: bool) -> str | None:
    start, end = _window(verdict, history, witnessed)
    for trouble in history.troubles(verdict.reads or frozenset()):
        if trouble.overlaps(start, end):
            if trouble.start == -INF:  # from a change written before the record
                return f"{trouble.what}, from before the record began"
            return f"{trouble.what}, at +{trouble.start - history.origin:.3f}s"
    return None


def _unrecorded(verdict: Verdict, history: History) -> str | None:
    recording = history.recording
    if recording is None:
        return None  # a history saved before the recorder said what it records
    missing = sorted(r for r in verdict.reads or ()
                     if r not in (AUDIT_LOG, QUIET) and r not in recording)
    unserved = [r for r in missing if r in history.unserved]
    unlistable = [r for r in missing if r in history.unlistable]
    unwatched = [r for r in missing if r not in history.unserved | history.unlistable]
    if unwatched:
        return (f"the recorder did not record {', '.join(unwatched)}: no step, profile or "
                "reference run named them")
    if unlistable:
        return (f"this cluster serves {', '.join(unlistable)} with no list or watch, so the "
                "recorder cannot record it")
    if unserved:
        return (f"this cluster does not serve {', '.join(unserved)} (for the recorder to "
                "list and watch)")
    return None


def _audit(verdict: Verdict, history: History) -> str | None:
    if AUDIT_LOG not in (verdict.reads or ()):
        return None
    if history.audited is False:
        return "this cluster gives no audit log to attribute actions to actors"
    if not history.audit_caught_up:
        return "the audit log had not caught up when this was judged"
    return None


def _unknown(verdict: Verdict, why: str) -> Verdict:
    was = "" if verdict.status == PASS else f" (it would have been {verdict.status})"
    return replace(verdict, status=UNKNOWN, summary=f"{why}{was}; {verdict.summary}",
                   witness=verdict.witness if verdict.status == VIOLATED else [])
