"""Checks over one object of any kind, named as kubectl names it (``raycluster/web``): a field
compared with a value at every recorded change of it, and a partial manifest matched within a
time bound. What Chainsaw and KUTTL judge at the moment they poll, judged here over the whole
history: a state that held between two polls is not missed. The object is its name: every life
the name had is read, each state where the cluster's order puts it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from aftershock.checks.temporal import eventually, stays_for
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.history import DELETED, INF, SYNC, Change, History
from aftershock.history.state import State
from aftershock.kube import partial, paths
from aftershock.kube.comparison import Comparison

Recorded = History | Iterable


@dataclass(frozen=True)
class ObjectRef:
    """One object: its resource (plural), namespace ("" when cluster-scoped) and name, and how
    a step named it (``raycluster/web``)."""

    resource: str
    namespace: str
    name: str
    shown: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource, self.namespace, self.name)

    def get(self, state: State) -> dict[str, Any] | None:
        return state.get(self.resource, self.namespace, self.name)

    def __str__(self) -> str:
        return self.shown


def never_had(history: Recorded, ref: ObjectRef, comparison: Comparison,
              name: str = "never_had") -> Verdict:
    """At no recorded change was ``ref`` so; the witness is the change that made it so."""
    return _every_change(History.of(history), ref, comparison, broken_when=True, name=name)


def kept(history: Recorded, ref: ObjectRef, comparison: Comparison,
         name: str = "kept") -> Verdict:
    """After every recorded change of ``ref`` (while it exists) it was so."""
    return _every_change(History.of(history), ref, comparison, broken_when=False, name=name)


@dataclass(frozen=True)
class Scope:
    """Which recorded states of an object a check reads: all of them (the default), or those
    from ``start`` on (the state it had then, and every change after) until the first recorded
    moment ``until`` holds (that state and later ones not read)."""

    start: float | None = None
    until: tuple[ObjectRef, Comparison] | None = None
    end: float | None = None  # a moment it ends at (a step's start), the state then not read
    ended_by: str = ""  # what that moment is, for the summary

    def describe(self, origin: float) -> str:
        since = "" if self.start is None else f" from +{self.start - origin:.3f}s"
        until = "" if self.until is None else f" until {self.until[0]} had {self.until[1].text}"
        end = "" if self.end is None else f" until {self.ended_by or 'the end'} " \
            f"(+{self.end - origin:.3f}s)"
        return since + until + end


@dataclass
class InScope:
    """One recorded state of the object a scoped check reads: the change that made it, the
    object, and whether it was certainly in scope (a state written in the second a scope
    begins or ends may not have been)."""

    change: Change
    obj: dict[str, Any]
    certain: bool
    since: float  # from when the proof needs the record complete (its change, or the start)


@dataclass
class Scoped:
    states: list[InScope]
    ended: float | None  # the moment ``until`` first held (None: it never did)
    until_seen: bool  # the until condition could be decided in some recorded state
    until_selector: tuple[str, set[str]] | None  # its list selector, when it selected nothing


def scoped(history: History, ref: ObjectRef, scope: Scope) -> Scoped:
    """The recorded states of ``ref`` in scope, in the cluster's order, and the moment the
    scope's ``until`` first held (None: it never did). The state at the start is the one the
    last change certainly before it left; a change written in the second of the start may be
    the one in force, and both are read, neither for certain."""
    start = scope.start
    held, ends, seen, selector = _until(history, scope)
    if held is True:
        return Scoped([], start, True, None)
    states: list[InScope] = []
    before: list[Change] = []  # the states the object may have had at the start
    for change in history.changes_of(ref.resource):
        if change.key != ref.key:
            continue
        if ends is not None and change.order >= ends.order:
            break
        if scope.end is not None and change.lo >= scope.end:
            break
        if start is not None and change.lo <= start:
            if change.hi <= start:
                before = [change]  # certainly before: the last such is the state at the start
            else:
                before.append(change)  # may be before or after the start
            continue
        if before:
            states += _at_start(before, start)
            before = []
        if change.after is not None:
            certain = scope.end is None or change.hi < scope.end
            states.append(InScope(change, change.after, certain, change.lo))
    states += _at_start(before, start)
    if held is None:  # the scope may have ended at its start: nothing in it for certain
        states = [replace(state, certain=False) for state in states]
    return Scoped(states, ends.hi if ends is not None else None, seen, selector)


def _until(history: History, scope: Scope
           ) -> tuple[bool | None, Change | None, bool, tuple[str, set[str]] | None]:
    """Of the scope's ``until``: whether it held at the start (None: a change written in the
    start's second may have made it hold or not), the first change after the start that made
    it hold, whether any recorded state could decide it, and its list selector where that
    selected no element in any state."""
    if scope.until is None:
        return False, None, False, None
    other, comparison = scope.until
    held: bool | None = False
    seen = found = False
    missed: tuple[str, set[str]] | None = None
    for change, state in history.replay(other.resource):
        if change.key != other.key:
            continue
        obj = other.get(state)
        decided = comparison.decide(obj) if obj is not None else False
        if obj is not None:
            gap = paths.unmatched(obj, comparison.path)
            if gap is None:
                found = True
            else:
                missed = (gap[0], (missed[1] if missed else set()) | set(gap[1]))
        seen = seen or (obj is not None and decided is not None)
        holds = decided is True
        if scope.start is None or change.lo > scope.start:
            if holds:
                return held, change, True, None
        elif change.hi <= scope.start:
            held = holds
        elif holds != held:
            held = None
    return held, None, seen, missed if not found and missed else None


def _at_start(before: list[Change], start: float | None) -> list[InScope]:
    """The state(s) the object may have had at the start: the last change certainly before
    it, and any whose span holds the start (then none of them is the state for certain: not
    even that it was there, when no change was certainly before)."""
    if not before:
        return []
    sure = len(before) == 1 and (start is None or before[0].hi <= start)
    since = before[0].lo
    return [InScope(c, c.after, sure, since) for c in before if c.after is not None]


def _every_change(history: History, ref: ObjectRef, comparison: Comparison,
                  broken_when: bool, name: str, scope: Scope = Scope(),
                  now: float | None = None) -> Verdict:
    """Over every recorded state of ``ref`` in scope: a state that breaks it is the witness;
    a state the comparison cannot decide (an absent field it does not read as 0:
    ``Comparison``), or a list selector that found its element in no state at all, leaves it
    UNKNOWN. A scoped check's PASS is over its window, from its start to where ``until`` held
    (or ``now``)."""
    origin = history.origin
    reads = frozenset({ref.resource} | ({scope.until[0].resource} if scope.until else set()))
    found_scope = scoped(history, ref, scope)
    ended = found_scope.ended
    stop = min((m for m in (ended, scope.end, now) if m is not None), default=None)
    window = None if scope.start is None else (scope.start, max(stop or 0.0, scope.start))
    where = scope.describe(origin) + _until_note(scope, found_scope, origin)
    if found_scope.until_selector is not None:
        selector, values = found_scope.until_selector
        return Verdict(name, UNKNOWN, f"{scope.until[0]}: {selector} selected no element in "
                       f"any of its recorded states ({_key(selector)} there: "
                       f"{', '.join(sorted(values)) or 'none'}), so whether the scope ended is "
                       "not known", [], origin, subjects=0, reads=reads)
    seen, undecided, broken, maybe, found = 0, [], None, None, False
    missing: tuple[str, set[str]] | None = None
    for state in found_scope.states:
        seen += 1
        obj = state.obj
        decided = comparison.decide(obj)
        selector = paths.unmatched(obj, comparison.path)
        if selector is None:
            found = found or paths.get(obj, comparison.path) is not None
        else:
            values = missing[1] if missing else set()
            missing = (selector[0], values | set(selector[1]))
        if decided is None:
            undecided.append(state.change)
        elif decided == broken_when:
            if state.certain and broken is None:
                broken = state
            elif not state.certain and maybe is None:
                maybe = state
    if missing is not None and not found:
        there = ", ".join(sorted(missing[1])) or "none"
        return Verdict(name, UNKNOWN, f"{ref}: {missing[0]} selected no element in any of "
                       f"its {seen} recorded states ({_key(missing[0])} there: {there})", [],
                       origin, subjects=0, reads=reads)
    said = comparison.text if broken_when else comparison.negated()
    if broken is not None:
        change = broken.change
        # the proof: the state its change left, recorded through the moment it is judged at
        upto = max(change.hi, scope.start if scope.start is not None else change.hi)
        return Verdict(name, VIOLATED, f"{ref} had {said}{_actual(broken.obj, comparison)}"
                       f"{where}", [change.entry], origin, subjects=1,
                       window=(broken.since, upto), reads=reads)
    if maybe is not None:
        why = history.unsure_why(reads, maybe.change)
        return Verdict(name, UNKNOWN, f"{ref} had {said}{_actual(maybe.obj, comparison)} in a "
                       f"state that may or may not have been in force in the scope{where} "
                       f"({why}): whether it was is not known", [maybe.change.entry], origin,
                       subjects=1, reads=reads)
    if undecided:
        return Verdict(name, UNKNOWN, f"{ref} had no {comparison.path} in {len(undecided)} of "
                       f"its {seen} recorded states (e.g. +{undecided[0].hi - origin:.3f}s), "
                       "and the schema does not type it as a number, the only field whose "
                       "absence reads as 0", [undecided[0].entry], origin, subjects=1,
                       reads=reads)
    what = f"never had {comparison.text}" if broken_when else f"kept {comparison.text}"
    summary = (f"{ref} {what} over {seen} recorded states{where}" if seen
               else f"{ref} was never recorded{where}")
    return Verdict(name, PASS, summary, [], origin, subjects=int(seen > 0), window=window,
                   reads=reads)


def _until_note(scope: Scope, found: Scoped, origin: float) -> str:
    if scope.until is None:
        return ""
    if found.ended is None:
        return (f" (it never had {scope.until[1].text}: judged to the end)" if found.until_seen
                else f" ({scope.until[0]} was never recorded with {scope.until[1].path}: "
                     "judged to the end)")
    return f" (it had at +{found.ended - origin:.3f}s)"


def _key(selector: str) -> str:
    return selector.rsplit("[", 1)[1].split("=", 1)[0]


def never_has_from(history: Recorded, ref: ObjectRef, comparison: Comparison,
                   start: float, now: float, until: tuple[ObjectRef, Comparison] | None = None,
                   end: float | None = None, ended_by: str = "",
                   name: str = "never_has_from") -> Verdict:
    """From ``start`` (the state ``ref`` had then, and every change after) until ``until``
    first held, or the moment ``end`` (a step began), or ``now``, ``ref`` never had
    ``comparison``."""
    return _every_change(History.of(history), ref, comparison, broken_when=True, name=name,
                         scope=Scope(start, until, end, ended_by), now=now)


def never_while(history: Recorded, guard: tuple[ObjectRef, Comparison], ref: ObjectRef,
                comparison: Comparison, name: str = "never_while") -> Verdict:
    """No recorded change of ``ref`` made (or left) it so while ``guard`` held, in the
    cluster's order: a claim written reserved for a pod after the pod finished. A state
    ``ref`` already had when the guard began is not judged until ``ref`` changes again
    (whoever cleans it up needs a moment); a guard that never held is UNKNOWN, naming it."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({ref.resource, guard[0].resource})
    began: Change | None = None  # the change that made the guard hold, while it holds
    held_at, judged, undecided = 0, 0, []
    for change, state in history.replay(reads):
        if change.key == guard[0].key:
            guarding = guard[0].get(state)
            holds = guard[1].decide(guarding) if guarding is not None else False
            if holds is None:
                undecided.append(change)
            if holds is True and began is None:
                began, held_at = change, held_at + 1
            elif holds is not True:
                began = None
        if change.key != ref.key or began is None or change is began:
            continue
        current = ref.get(state)
        if current is None:
            continue
        judged += 1
        decided = comparison.decide(current)
        if decided is None:
            undecided.append(change)
        elif decided:
            return Verdict(name, VIOLATED, f"{ref} had {comparison.text}"
                           f"{_actual(current, comparison)} while {guard[0]} had "
                           f"{guard[1].text}", [began.entry, change.entry], origin, subjects=1,
                           reads=reads)
    if undecided:
        return Verdict(name, UNKNOWN, f"{len(undecided)} recorded states could not be decided "
                       f"(an absent field no schema types as a number, e.g. at "
                       f"+{undecided[0].hi - origin:.3f}s)", [undecided[0].entry], origin,
                       subjects=1, reads=reads)
    if not held_at:
        return Verdict(name, UNKNOWN, f"{guard[0]} never had {guard[1].text}: the condition "
                       "to judge under never held", [], origin, subjects=0, reads=reads)
    return Verdict(name, PASS, f"{ref} never had {comparison.text} while {guard[0]} had "
                   f"{guard[1].text} ({held_at} times, {judged} changes of {ref} then)", [],
                   origin, subjects=held_at, reads=reads)


def _actual(obj: dict[str, Any], comparison: Comparison) -> str:
    value = paths.get(obj, comparison.path)
    if comparison.op in ("exists", "absent"):
        return ""
    return " (it was absent: 0 for a number)" if value is None else f" (it was {value!r})"


def _why(history: History, ref: ObjectRef, expected: dict[str, Any], moment: float) -> str:
    """What did not match in ``ref``'s state at ``moment``. A change of it whose moment may
    be either side of ``moment`` (made in the second a step began) is named too: the
    object may have been there already, not matching for its own reasons."""
    state, unsure = history.state_by(moment, ref.resource)
    last = ref.get(state)
    if last is not None:
        return "; ".join(partial.mismatches(expected, last))
    made = [c.after for c in unsure if c.key == ref.key and c.after is not None]
    if not made:
        return f"{ref} was not there"
    return (f"{ref} was not there, or was just made with "
            + "; ".join(partial.mismatches(expected, made[-1])))


def matches_within(history: Recorded, ref: ObjectRef, expected: dict[str, Any],
                   start: float, within: float, now: float,
                   name: str = "matches_within") -> Verdict:
    """``ref`` matched the partial manifest at some recorded moment from ``start`` to
    ``start + within``; if it never did, the summary names what did not match last."""
    history = History.of(history)
    verdict = eventually(history, lambda s: partial.matches(expected, ref.get(s)),
                         f"{ref} matches", start=start, within=within, now=now, name=name,
                         resources={ref.resource}, about=lambda s: int(ref.get(s) is not None),
                         namespace=ref.namespace)
    if verdict.status != VIOLATED:
        return verdict
    why = _why(history, ref, expected, start + within)
    return replace(verdict, summary=f"{ref} did not match within {within:g}s: {why}")


def matches_for(history: Recorded, ref: ObjectRef, expected: dict[str, Any],
                start: float, duration: float, now: float, name: str = "matches_for") -> Verdict:
    """``ref`` matched the partial manifest at ``start`` and at every recorded change until
    ``start + duration``: a state that flips away and back between two polls breaks it. The
    summary of a break names what did not match."""
    history = History.of(history)
    verdict = stays_for(history, lambda s: partial.matches(expected, ref.get(s)),
                        f"{ref} matches", start=start, duration=duration, now=now, name=name,
                        resources={ref.resource}, about=lambda s: int(ref.get(s) is not None))
    if verdict.status != VIOLATED:
        return verdict
    at = verdict.window[1] if verdict.window else start
    return replace(verdict, summary=f"{verdict.summary}: {_why(history, ref, expected, at)}")


def changed_at_most(history: Recorded, ref: ObjectRef, limit: int, start: float,
                    within: float, now: float, name: str = "changed_at_most") -> Verdict:
    """``ref`` changed (made, changed, deleted: a recorded change of it) at most ``limit``
    times from ``start`` to ``start + within``: a status write loop breaks it, with the first
    ``limit + 1`` of its changes as the witness. A change written in the second the window
    begins or ends in may or may not count."""
    history = History.of(history)
    end, reads = start + within, frozenset({ref.resource})
    origin = history.origin
    mine = [c for c in history.changes_of(ref.resource)
            if c.key == ref.key and c.type != SYNC]
    surely = [c for c in mine if c.lo > start and c.hi <= end]
    maybe = [c for c in mine if c.hi > start and c.lo <= end]
    subjects = int(any(c.key == ref.key for c in history.changes_of(ref.resource)))
    if len(surely) > limit:
        witness = surely[:limit + 1]
        return Verdict(name, VIOLATED, f"{ref} changed {len(surely)} times within "
                       f"{within:g}s, more than {limit} (the first {limit + 1} are the "
                       "witness)", [c.entry for c in witness], origin, subjects=1,
                       window=(witness[0].lo, witness[-1].hi), reads=reads)
    if len(maybe) > limit:
        return Verdict(name, UNKNOWN, f"{ref} changed {len(surely)} to {len(maybe)} times "
                       f"within {within:g}s (some written in the second the window begins or "
                       f"ends in), at most {limit} allowed", [], origin, subjects=subjects,
                       reads=reads)
    if now < end:
        return Verdict(name, UNKNOWN, f"{ref}: observed only {now - start:.1f}s of "
                       f"{within:g}s", [], origin, subjects=subjects, reads=reads)
    return Verdict(name, PASS, f"{ref} changed {len(maybe)} times within {within:g}s "
                   f"(at most {limit})", [], origin, subjects=subjects,
                   window=(start, end), reads=reads)


__all__ = ["DELETED", "INF", "PASS", "ObjectRef", "Scope", "changed_at_most", "kept",
           "matches_for", "matches_within", "never_had", "never_has_from", "never_while",
           "scoped"]
