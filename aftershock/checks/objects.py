"""Checks over one object of any kind, named as kubectl names it (``raycluster/web``): a field
compared with a value at every recorded change of it, and a partial manifest matched within a
time bound. What Chainsaw and KUTTL judge at the moment they poll, judged here over the whole
history: a state that held between two polls is not missed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from aftershock.checks.invariants import changes
from aftershock.checks.temporal import eventually, stays_for
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.kube import partial, paths
from aftershock.kube.comparison import Comparison
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.state import State, replay


@dataclass(frozen=True)
class ObjectRef:
    """One object: its resource (plural), namespace ("" when cluster-scoped) and name, and how
    a step named it (``raycluster/web``)."""

    resource: str
    namespace: str
    name: str
    shown: str

    def get(self, state: State) -> dict[str, Any] | None:
        return state.get(self.resource, self.namespace, self.name)

    def __str__(self) -> str:
        return self.shown


def never_had(entries: Iterable[Entry], ref: ObjectRef, comparison: Comparison,
              name: str = "never_had") -> Verdict:
    """At no recorded change was ``ref`` so; the witness is the change that made it so."""
    return _every_change(entries, ref, comparison, broken_when=True, name=name)


def kept(entries: Iterable[Entry], ref: ObjectRef, comparison: Comparison,
         name: str = "kept") -> Verdict:
    """After every recorded change of ``ref`` (while it exists) it was so."""
    return _every_change(entries, ref, comparison, broken_when=False, name=name)


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


def scoped(entries: list[Entry], ref: ObjectRef,
           scope: Scope) -> tuple[list[tuple[Entry, dict[str, Any]]], float | None]:
    """The recorded states of ``ref`` in scope (the entry that made each, and the object), and
    the moment the scope's ``until`` first held in it (None: it never did)."""
    reads = frozenset({ref.resource})
    ending = frozenset({scope.until[0].resource}) if scope.until else frozenset()
    states: list[tuple[Entry, dict[str, Any]]] = []
    last: tuple[Entry, dict[str, Any] | None] | None = None  # its state before the start
    begun, until_holds = scope.start is None, False
    for entry, state in replay(entries):
        if scope.end is not None and entry.mono >= scope.end:
            break
        if not begun and entry.mono > scope.start:
            begun = True
            if until_holds:
                return [], scope.start
            if last is not None and last[1] is not None:
                states.append(last)  # type: ignore[arg-type]
        if ending and changes(entry, ending):
            until_holds = _holds(scope.until, state)
            if begun and until_holds:
                return states, entry.mono
        if changes(entry, reads):
            obj = ref.get(state)
            if not begun:
                last = (entry, obj)
            elif obj is not None:
                states.append((entry, obj))
    if not begun:
        if until_holds:
            return [], scope.start
        if last is not None and last[1] is not None:
            states.append(last)  # type: ignore[arg-type]
    return states, None


def _holds(condition: tuple[ObjectRef, Comparison] | None, state: State) -> bool:
    if condition is None:
        return False
    obj = condition[0].get(state)
    return obj is not None and condition[1].decide(obj) is True


def _every_change(entries: Iterable[Entry], ref: ObjectRef, comparison: Comparison,
                  broken_when: bool, name: str, scope: Scope = Scope(),
                  now: float | None = None) -> Verdict:
    """Over every recorded state of ``ref`` in scope: a state that breaks it is the witness; a
    state the comparison cannot decide (an absent field it does not read as 0:
    ``Comparison``), or a selector that found its element in no state at all, leaves it
    UNKNOWN. A scoped check's PASS is over its window, from its start to where ``until`` held
    (or ``now``)."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({ref.resource} | ({scope.until[0].resource} if scope.until else set()))
    states, ended = scoped(entries, ref, scope)
    stop = min(m for m in (ended, scope.end, now) if m is not None) \
        if any(m is not None for m in (ended, scope.end, now)) else None
    window = None if scope.start is None else (scope.start, max(stop or 0.0, scope.start))
    seen, undecided, found = 0, [], False
    missing: tuple[str, set[str]] | None = None
    for entry, obj in states:
        seen += 1
        decided = comparison.decide(obj)
        selector = paths.unmatched(obj, comparison.path)
        if selector is None:
            found = found or paths.get(obj, comparison.path) is not None
        else:
            values = missing[1] if missing else set()
            missing = (selector[0], values | set(selector[1]))
        if decided is None:
            undecided.append(entry)
        elif decided == broken_when:
            said = comparison.text if broken_when else comparison.negated()
            return Verdict(name, VIOLATED, f"{ref} had {said}{_actual(obj, comparison)}"
                           f"{scope.describe(origin)}", [entry], origin, subjects=1,
                           reads=reads)
    if missing is not None and not found:
        there = ", ".join(sorted(missing[1])) or "none"
        key = missing[0].rsplit("[", 1)[1].split("=", 1)[0]
        return Verdict(name, UNKNOWN, f"{ref}: {missing[0]} selected no element in any of "
                       f"its {seen} recorded states ({key} there: {there})", [], origin,
                       subjects=0, reads=reads)
    if undecided:
        return Verdict(name, UNKNOWN, f"{ref} had no {comparison.path} in {len(undecided)} of "
                       f"its {seen} recorded states (e.g. at +{undecided[0].mono - origin:.3f}s), "
                       "and the schema does not type it as a number, the only field whose "
                       "absence reads as 0", [undecided[0]], origin, subjects=1, reads=reads)
    what = f"never had {comparison.text}" if broken_when else f"kept {comparison.text}"
    summary = (f"{ref} {what} over {seen} recorded states{scope.describe(origin)}" if seen
               else f"{ref} was never recorded{scope.describe(origin)}")
    return Verdict(name, PASS, summary, [], origin, subjects=int(seen > 0), window=window,
                   reads=reads)


def never_has_from(entries: Iterable[Entry], ref: ObjectRef, comparison: Comparison,
                   start: float, now: float, until: tuple[ObjectRef, Comparison] | None = None,
                   end: float | None = None, ended_by: str = "",
                   name: str = "never_has_from") -> Verdict:
    """From ``start`` (the state ``ref`` had then, and every change after) until ``until``
    first held, or the moment ``end`` (a step began), or ``now``, ``ref`` never had
    ``comparison``."""
    return _every_change(entries, ref, comparison, broken_when=True, name=name,
                         scope=Scope(start, until, end, ended_by), now=now)


def never_while(entries: Iterable[Entry], guard: tuple[ObjectRef, Comparison], ref: ObjectRef,
                comparison: Comparison, name: str = "never_while") -> Verdict:
    """No recorded change of ``ref`` made (or left) it so while ``guard`` held: a claim written
    reserved for a pod after the pod finished. A state ``ref`` already had when the guard began
    is not judged until ``ref`` changes again (whoever cleans it up needs a moment); a guard
    that never held is UNKNOWN, naming it."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({ref.resource, guard[0].resource})
    began: Entry | None = None  # the change that made the guard hold, while it holds
    guard_was = mine_was = None  # the objects last seen: State replaces one at each change
    held_at, judged, undecided = 0, 0, []
    for entry, state in replay(entries):
        if not changes(entry, reads):
            continue
        guarding, current = guard[0].get(state), ref.get(state)
        if guarding is not guard_was:
            guard_was = guarding
            holds = guard[1].decide(guarding) if guarding is not None else False
            if holds is None:
                undecided.append(entry)
            if holds is True and began is None:
                began, held_at = entry, held_at + 1
            elif holds is not True:
                began = None
        changed, mine_was = current is not mine_was, current
        if began is None or not changed or entry is began or current is None:
            continue
        judged += 1
        decided = comparison.decide(current)
        if decided is None:
            undecided.append(entry)
        elif decided:
            return Verdict(name, VIOLATED, f"{ref} had {comparison.text}"
                           f"{_actual(current, comparison)} while {guard[0]} had "
                           f"{guard[1].text}", [began, entry], origin, subjects=1, reads=reads)
    if undecided:
        return Verdict(name, UNKNOWN, f"{len(undecided)} recorded states could not be decided "
                       f"(an absent field no schema types as a number, e.g. at "
                       f"+{undecided[0].mono - origin:.3f}s)", [undecided[0]], origin,
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


def matches_within(entries: Iterable[Entry], ref: ObjectRef, expected: dict[str, Any],
                   start: float, within: float, now: float,
                   name: str = "matches_within") -> Verdict:
    """``ref`` matched the partial manifest at some recorded moment from ``start`` to
    ``start + within``; if it never did, the summary names what did not match last."""
    entries = list(entries)
    verdict = eventually(entries, lambda s: partial.matches(expected, ref.get(s)),
                         f"{ref} matches", start=start, within=within, now=now, name=name,
                         resources={ref.resource}, about=lambda s: int(ref.get(s) is not None),
                         namespace=ref.namespace)
    if verdict.status != VIOLATED:
        return verdict
    last = None
    for entry, state in replay(entries):
        if entry.mono > start + within:
            break
        last = ref.get(state)
    why = "; ".join(partial.mismatches(expected, last)) if last is not None else \
        f"{ref} was not there"
    return replace(verdict, summary=f"{ref} did not match within {within:g}s: {why}")


def matches_for(entries: Iterable[Entry], ref: ObjectRef, expected: dict[str, Any],
                start: float, duration: float, now: float, name: str = "matches_for") -> Verdict:
    """``ref`` matched the partial manifest at ``start`` and at every recorded change until
    ``start + duration``: a state that flips away and back between two polls breaks it. The
    summary of a break names what did not match."""
    entries = list(entries)
    verdict = stays_for(entries, lambda s: partial.matches(expected, ref.get(s)),
                        f"{ref} matches", start=start, duration=duration, now=now, name=name,
                        resources={ref.resource}, about=lambda s: int(ref.get(s) is not None))
    if verdict.status != VIOLATED:
        return verdict
    at = verdict.window[1] if verdict.window else start
    last = None
    for entry, state in replay(entries):
        if entry.mono > at:
            break
        last = ref.get(state)
    why = "; ".join(partial.mismatches(expected, last)) if last is not None else \
        f"{ref} was not there"
    return replace(verdict, summary=f"{verdict.summary}: {why}")


def changed_at_most(entries: Iterable[Entry], ref: ObjectRef, limit: int, start: float,
                    within: float, now: float, name: str = "changed_at_most") -> Verdict:
    """``ref`` changed (a recorded watch event of it: made, changed, deleted) at most
    ``limit`` times from ``start`` to ``start + within``: a status write loop breaks it, with
    the first ``limit + 1`` of its changes as the witness."""
    entries = list(entries)
    end, reads = start + within, frozenset({ref.resource})
    origin = entries[0].mono if entries else 0.0
    mine = [e for e in entries if e.kind == WATCH and e.resource == ref.resource
            and e.namespace == ref.namespace and e.name == ref.name and e.mono <= end]
    counted = [e for e in mine if e.mono > start]
    if len(counted) > limit:
        witness = counted[:limit + 1]
        return Verdict(name, VIOLATED, f"{ref} changed {len(counted)} times within "
                       f"{within:g}s, more than {limit} (the first {limit + 1} are the "
                       "witness)", witness, origin, subjects=1,
                       window=(witness[0].mono, witness[-1].mono), reads=reads)
    if now < end:
        return Verdict(name, UNKNOWN, f"{ref}: observed only {now - start:.1f}s of "
                       f"{within:g}s", [], origin, subjects=int(bool(mine)), reads=reads)
    return Verdict(name, PASS, f"{ref} changed {len(counted)} times within {within:g}s "
                   f"(at most {limit})", [], origin, subjects=int(bool(mine)),
                   window=(start, end), reads=reads)


__all__ = ["PASS", "ObjectRef", "Scope", "changed_at_most", "kept", "matches_for",
           "matches_within", "never_had", "never_has_from", "never_while", "scoped"]
