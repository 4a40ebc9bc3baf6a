"""Properties about when things happen: eventually, stays_for, happened_before,
no_earlier_than, exactly. Order is the cluster's (a change's revision), and time its clock: a
state holds from the moment the change that made it was written to the moment the next one
was, each known within a span; a window that a span straddles is not decided either way."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.history import INF, Change, History, apart
from aftershock.history.state import State

Recorded = History | Iterable


@dataclass(frozen=True)
class Event:
    """Something that happens at a change: ``occurs(change, state_after_it)``."""

    description: str
    occurs: Callable[[Change, State], bool]
    resources: frozenset[str] = frozenset()  # what it reads, for the registry's rule
    # The changes of the objects it is about (to count what a judgement judged), if known.
    concerns: Callable[[Change], bool] | None = None

    def scan(self, history: Recorded) -> Iterator[Change]:
        history = History.of(history)
        for change, state in history.replay(self.resources or None):
            if self.occurs(change, state):
                yield change


@dataclass(frozen=True)
class Transition(Event):
    """The moments a state condition turns from false to true (true at the start counts)."""

    def scan(self, history: Recorded) -> Iterator[Change]:
        history = History.of(history)
        before = False
        for change, state in history.replay(self.resources or None):
            now = self.occurs(change, state)
            if now and not before:
                yield change
            before = now


def became_true(holds: Callable[[State], bool], description: str) -> Event:
    return Transition(description, lambda _change, state: holds(state))


def first(history: Recorded, event: Event) -> Change | None:
    return next(event.scan(history), None)


def occurrences(history: Recorded, event: Event) -> list[Change]:
    return list(event.scan(history))


Count = Callable[[State], int]


@dataclass
class Stretch:
    """One state of what a condition reads: from the change that made it (None: before the
    first one recorded) to the next (None: to the end of the record)."""

    began: Change | None
    ends: Change | None

    def certainly_within(self, start: float, end: float) -> bool:
        """It held at some moment of [start, end], whatever the spans' moments were."""
        return (self.began is None or self.began.hi <= end) and \
            (self.ends is None or self.ends.lo > start)

    def maybe_within(self, start: float, end: float) -> bool:
        return (self.began is None or self.began.lo <= end) and \
            (self.ends is None or self.ends.hi > start)


def stretches(history: History, holds: Callable[[State], bool],
              resources: Iterable[str] | None, until: float = INF,
              about: Count | None = None) -> Iterator[tuple[Stretch, bool, int]]:
    """Each stretch of the states of ``resources`` in which ``holds`` kept one value, that may
    begin by ``until``: whether it held there, and (with ``about``) how many objects it spoke
    of by its end. A change that leaves the value as it was ends no stretch: how long it held
    does not hang on when such a change was written."""
    changes = history.changes_of(resources)
    state = State()
    subjects = 0
    began: Change | None = None
    value = holds(state)
    kept = state.questions()  # what ``holds`` asks
    for change in changes:
        state.put(change.key, change.after, change)
        if about is None:
            subjects += 1
        elif not subjects:  # the rule asks only whether there was anything: once is enough
            subjects = about(state)
            if subjects:  # and what only it asked need not be kept up to date after
                state.forget(state.questions() - kept)
        now = holds(state)
        if now == value:
            continue
        yield Stretch(began, change), value, subjects
        if change.lo > until:
            return
        began, value = change, now
    yield Stretch(began, None), value, subjects


def _most(change: Change) -> str:
    """How a moment known within a span is said: exactly, or at the latest."""
    return "" if change.lo == change.hi else "at most "


def _namespace(change: Change, namespace: str | None) -> bool:
    return namespace is None or change.namespace in ("", namespace)


def eventually(history: Recorded, holds: Callable[[State], bool], description: str,
               start: float, within: float, now: float, name: str = "eventually",
               resources: Iterable[str] | None = None, about: Count | None = None,
               namespace: str | None = None) -> Verdict:
    """``holds`` at some moment from ``start`` to ``start + within``: in a state that
    certainly lasted into that window. A state that may or may not have (a change written in
    the second the deadline falls in) decides nothing.

    If it never did, the witness is the last change of ``resources`` before the deadline (in
    ``namespace``, or cluster-wide: another scenario's teardown is not the state judged).
    ``about`` counts the objects the condition speaks of: a pass over none is not earned.
    """
    history = History.of(history)
    deadline = start + within
    reads = frozenset(resources or ())
    maybe: Stretch | None = None
    subjects = 0
    last = next((c for c in reversed(history.changes_of(resources))
                 if c.hi <= deadline and _namespace(c, namespace)), None)
    for stretch, held, counted in stretches(history, holds, resources, deadline, about):
        subjects = max(subjects, counted)
        began = stretch.began
        if not held:
            continue
        if stretch.certainly_within(start, deadline):
            if began is None or began.hi <= start:
                return Verdict(name, PASS, f"{description} already at the start", [], start,
                               subjects=subjects, window=(start, start), reads=reads)
            return Verdict(name, PASS, f"{description} after {_most(began)}"
                           f"{began.hi - start:.3f}s", [began.entry], start,
                           subjects=subjects, window=(start, began.hi), reads=reads)
        if maybe is None and stretch.maybe_within(start, deadline):
            maybe = stretch
    if maybe is not None:
        change = maybe.began if maybe.began is not None else maybe.ends
        return Verdict(name, UNKNOWN, f"{description} held in a state the API server wrote "
                       f"or ended within a second of the {within:g}s bound (its clock, whole "
                       "seconds): whether that was in time is not known",
                       [change.entry] if change else [], start, subjects=subjects,
                       reads=reads)
    if now < deadline:
        return Verdict(name, UNKNOWN, f"{description}: only {now - start:.1f}s of the "
                       f"{within:.0f}s were observed", [], start, subjects=subjects,
                       reads=reads)
    return Verdict(name, VIOLATED, f"{description} did not happen within {within:.0f}s",
                   [last.entry] if last else [], start, subjects=subjects,
                   window=(start, deadline), by_absence=True, reads=reads)


def stays_for(history: Recorded, holds: Callable[[State], bool], description: str,
              start: float, duration: float, now: float, name: str = "stays_for",
              resources: Iterable[str] | None = None, about: Count | None = None) -> Verdict:
    """``holds`` at every moment from ``start`` to ``start + duration``: a state in which it
    did not, that certainly lasted into that window, breaks it."""
    history = History.of(history)
    end = start + duration
    reads = frozenset(resources or ())
    maybe: Stretch | None = None
    subjects = 0
    for stretch, held, counted in stretches(history, holds, resources, end, about):
        subjects = max(subjects, counted)
        if held:
            continue
        began = stretch.began
        if stretch.certainly_within(start, end):
            # the proof: the state that change left, recorded through the window's start
            window = (began.lo if began else start, max(start, began.hi if began else start))
            if began is None or began.hi <= start:
                return Verdict(name, VIOLATED, f"{description} did not hold at the start",
                               [began.entry] if began else [], start,
                               subjects=max(subjects, 1), window=window, reads=reads)
            return Verdict(name, VIOLATED, f"{description} stopped holding after "
                           f"{_most(began)}{began.hi - start:.3f}s", [began.entry], start,
                           subjects=max(subjects, 1), window=window, reads=reads)
        if maybe is None and stretch.maybe_within(start, end):
            maybe = stretch
    if maybe is not None:
        change = maybe.began if maybe.began is not None else maybe.ends
        return Verdict(name, UNKNOWN, f"{description} did not hold in a state the API server "
                       f"wrote or ended within a second of the {duration:g}s it must last "
                       "(its clock, whole seconds): whether that was within them is not known",
                       [change.entry] if change else [], start, subjects=subjects,
                       reads=reads)
    if now < end:
        return Verdict(name, UNKNOWN, f"{description}: observed only {now - start:.1f}s of "
                       f"{duration:.0f}s", [], start, subjects=subjects, reads=reads)
    return Verdict(name, PASS, f"{description} held for {duration:.0f}s", [], start,
                   subjects=subjects, window=(start, end), reads=reads)


def happened_before(history: Recorded, a: Event, b: Event,
                    name: str = "happened_before") -> Verdict:
    """The first ``a`` comes before the first ``b`` in the cluster's order; both must happen.
    A violation says ``a`` did not come first, which a gap could hide: it is judged by
    absence."""
    history = History.of(history)
    origin = history.origin
    reads = a.resources | b.resources
    first_a, first_b = first(history, a), first(history, b)
    found = sum(1 for c in (first_a, first_b) if c)
    if first_a and first_b and first_a.order < first_b.order:
        low, high = apart(first_a.at, first_b.at)
        return Verdict(name, PASS, f"{a.description} before {b.description} ({_between(low, high)} "
                       "apart)", [first_a.entry, first_b.entry], origin, subjects=found,
                       reads=reads)
    if first_b is None and first_a is None:
        summary = f"neither {a.description} nor {b.description} happened"
    elif first_b is None:
        summary = f"{b.description} never happened"
    elif first_a is None:
        summary = f"{b.description} happened, {a.description} never did"
    else:
        summary = f"{b.description} happened before {a.description}"
    witness = sorted([c for c in (first_a, first_b) if c], key=lambda c: c.order)
    return Verdict(name, VIOLATED, summary, [c.entry for c in witness], origin, subjects=found,
                   by_absence=True, reads=reads)


def _between(low: float, high: float) -> str:
    if high == INF or low == -INF:
        return "how long not known"
    return f"{max(low, 0.0):.3f}s to {high:.3f}s"


def no_earlier_than(history: Recorded, event: Event, after: Event, delay: float,
                    name: str = "no_earlier_than") -> Verdict:
    """Every ``event`` comes at least ``delay`` seconds after the latest ``after`` before it.
    Before is the cluster's order; the delay is measured on its clock, the spans each was
    written in: a difference the spans cannot settle is UNKNOWN, never the implementation's
    fault."""
    history = History.of(history)
    origin = history.origin
    reads = event.resources | after.resources
    befores = list(after.scan(history))
    seen, unsure = 0, None
    for change in event.scan(history):
        seen += 1
        earlier = [b for b in befores if b.order < change.order]
        if not earlier:
            return Verdict(name, VIOLATED, f"{event.description} happened before any "
                           f"{after.description}", [change.entry], origin, subjects=seen,
                           by_absence=True, reads=reads)
        latest = max(earlier, key=lambda c: c.order)
        if delay <= 0:
            continue
        low, high = apart(latest.at, change.at)
        if high < delay:
            return Verdict(name, VIOLATED, f"{event.description} came at most {high:.3f}s "
                           f"after {after.description}, earlier than {delay:.1f}s",
                           [latest.entry, change.entry], origin, subjects=seen, reads=reads)
        if low < delay and unsure is None:
            unsure = (latest, change, low, high)
    if unsure is not None:
        latest, change, low, high = unsure
        return Verdict(name, UNKNOWN, f"{event.description} came {_between(low, high)} after "
                       f"{after.description} on the API server's clock: whether that is "
                       f"{delay:.1f}s is not known", [latest.entry, change.entry], origin,
                       subjects=seen, reads=reads)
    summary = (f"all {seen} of {event.description} came at least {delay:.1f}s after "
               f"{after.description}" if seen else f"{event.description} never happened")
    return Verdict(name, PASS, summary, [], origin, subjects=seen, reads=reads)


def exactly(history: Recorded, event: Event, count: int, name: str = "exactly",
            concerns: Callable[[Change], bool] | None = None,
            since: float | None = None) -> Verdict:
    """``event`` happens exactly ``count`` times over the history, or in the episode from
    ``since`` (the step that changed the desired state). The witness of too many is the first
    ``count + 1`` occurrences; of too few, those that did happen (by absence: a gap could hide
    the others). One written in the second ``since`` falls in may or may not count: a count
    that depends on it is UNKNOWN. ``concerns`` picks the changes of the objects the event is
    about, to count what was judged."""
    history = History.of(history)
    origin = history.origin
    reads = event.resources
    every = occurrences(history, event)
    surely = [c for c in every if since is None or c.lo >= since]
    maybe = [c for c in every if since is None or c.hi >= since]
    window = (since, history.end) if since is not None else None
    subjects = len({c.key for c in history.changes_of(event.resources or None)
                    if concerns(c)}) if concerns else len(maybe)
    if len(surely) == len(maybe) == count:
        return Verdict(name, PASS, f"{event.description}: exactly {count} times",
                       [c.entry for c in surely], origin, subjects=subjects, window=window,
                       reads=reads)
    if len(surely) > count or len(maybe) < count:
        found = surely if len(surely) > count else maybe
        too_few = len(found) < count
        return Verdict(name, VIOLATED, f"{event.description}: {len(found)} times, expected "
                       f"exactly {count}", [c.entry for c in found[:count + 1]], origin,
                       subjects=subjects, by_absence=too_few, window=window, reads=reads)
    return Verdict(name, UNKNOWN, f"{event.description}: {len(surely)} to {len(maybe)} times "
                   f"(some written in the second the episode began), expected exactly {count}",
                   [c.entry for c in maybe[:count + 1]], origin, subjects=subjects,
                   reads=reads)
