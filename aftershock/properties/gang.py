"""G: gang workloads and termination delay (docs/properties.md). The judges rule over what
happened to each gang (``gang_episodes``: breaches, recycles, the setup's excuses), computed
from the history model on the cluster's clock."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from aftershock.checks.attribution import actor, done_by
from aftershock.checks.invariants import never_more_than
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts import get_path
from aftershock.concepts.gang import Gang
from aftershock.history import Action, Change, Entry, History
from aftershock.properties.base import Params, check, prop
from aftershock.properties.gang_episodes import (
    STAMP,
    Breach,
    Recycle,
    breach_at,
    breaches,
    due,
    excuses,
    gang_lives,
    recycles,
)

Recorded = History | Iterable


def distinct(entries: Iterable[Entry]) -> list[Entry]:
    """Each entry once, in the order given."""
    return list({id(entry): entry for entry in entries}.values())


def termination_timed(history: Recorded, gang: Gang, group: int, delay: float,
                      latency: float, is_actor: Callable[[str], bool],
                      name: str = "termination_timed") -> Verdict:
    """G2: every time group ``group``'s breach has stayed True for ``delay`` since it turned
    True (its lastTransitionTime), every pod the group had when the delay ran out is gone by
    ``delay + latency``: deleted by the implementation, or by the garbage collector after it
    deleted their owner (by the audit log, each deletion by the life it removed). Every such
    breach is judged, not only the first. Whether a termination came too early is G3's to
    judge (``recycled_after_delay``)."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads = frozenset({*gang.resources, "pods", "audit"})
    found, waiting, skipped, doubtful = due(history, gang, group, delay)
    if not found:
        if waiting is not None:
            return Verdict(name, UNKNOWN, f"the history ends before the {delay:g}s "
                           "termination delay ran out", [waiting.began.entry], origin,
                           reads=reads)
        if doubtful is not None:
            return Verdict(name, UNKNOWN, f"the breach recorded at "
                           f"+{doubtful.began.hi - origin:.3f}s ended within a second of its "
                           f"{delay:g}s termination delay: whether it lasted it is not known",
                           [doubtful.began.entry], origin, subjects=0, reads=reads)
        if skipped:
            return Verdict(name, UNKNOWN, f"the precondition never held: each of the {skipped} "
                           f"breaches of group {group} of gang {gang.name} that lasted the delay "
                           "was of a replica made anew that never had its minimum scheduled "
                           "(not to be terminated: G5)", [], origin, subjects=0, reads=reads)
        # The precondition never held: the scenario, not the implementation, is at fault (a
        # regression that G1 would judge is not this judgement's to blame).
        return Verdict(name, UNKNOWN, f"the precondition never held: group {group} of gang "
                       f"{gang.name} never had its breach condition True with a transition "
                       "time", [], origin, subjects=0, reads=reads)
    lives = {life.id: life for life in gang_lives(history, gang, group)}
    theirs = done_by(history, is_actor)
    deletions = [a for a in history.actions if a.deletes and a.life is not None
                 and a.life.id in lives and theirs(a)]
    judged: list[tuple[Breach, Action]] = []
    unsure: list[str] = []
    end = history.end - offset
    for episode in found:
        since = episode.breach.since
        at = f"+{episode.breach.began.hi - origin:.3f}s"
        mine = [a for a in deletions if a.hi - offset >= since]
        # lastTransitionTime is whole seconds: the breach turned True within the second after
        # it. Late is certain only past the deadline counted from that second's end.
        deadline = since + delay + latency
        taken = {a.life.id for a in mine if a.hi - offset <= deadline + STAMP}
        left = sorted(episode.pods - taken)
        if (left or episode.unsure - taken) and end < deadline + STAMP:
            unsure.append(f"the history ends before the {delay + latency:g}s bound of the "
                          f"breach recorded at {at} ran out, {len(left)} of its "
                          f"{len(episode.pods)} pods not yet gone")
            continue
        if left:
            example = lives[left[0]].ref
            return Verdict(name, VIOLATED, f"{len(left)} of the {len(episode.pods)} pods of "
                           f"group {group} were not terminated within {delay + latency:g}s of "
                           f"the breach recorded at {at} (e.g. {example})",
                           [episode.breach.began.entry], origin, subjects=len(episode.pods),
                           by_absence=True, window=(episode.breach.began.lo, history.end),
                           reads=reads)
        if episode.unsure - taken:
            unsure.append(f"{len(episode.unsure - taken)} pods of group {group} may or may not "
                          f"have been live when the breach recorded at {at} ran out its delay, "
                          "and were not terminated")
            continue
        late = sorted(episode.pods - {a.life.id for a in mine if a.hi - offset <= deadline})
        if late:
            unsure.append(f"{len(late)} of the {len(episode.pods)} pods of group {group} went "
                          f"{delay + latency:g}s to {delay + latency + STAMP:g}s after the "
                          f"second its breach is stamped with (e.g. {lives[late[0]].ref}): "
                          f"whether that was within {delay + latency:g}s of the breach itself, "
                          "a whole-second stamp cannot say")
        elif episode.pods:
            first = min((a for a in mine if a.life.id in episode.pods), key=lambda a: a.hi)
            judged.append((episode.breach, first))
    if unsure:
        return Verdict(name, UNKNOWN, unsure[0], [found[0].breach.began.entry], origin,
                       subjects=len(found), reads=reads)
    if not judged:
        return Verdict(name, UNKNOWN, f"the precondition never held: group {group} had no pod "
                       "left to terminate when its termination delay ran out",
                       [found[0].breach.began.entry], origin, subjects=0, reads=reads)
    took = ", ".join(f"{first.hi - offset - breach.since:.2f}s" for breach, first in judged)
    still = (f"; a later breach was still within its delay at "
             f"+{waiting.began.hi - origin:.3f}s" if waiting is not None else "")
    return Verdict(name, PASS, f"group {group} terminated {took} after its "
                   f"{'breach' if len(judged) == 1 else f'{len(judged)} breaches'} (delay "
                   f"{delay:g}s, bound {delay + latency:g}s){still}",
                   distinct(e for breach, first in judged
                            for e in (breach.began.entry, first.entry)),
                   origin, subjects=len(judged), reads=reads)


def recycled_after_delay(history: Recorded, gang: Gang, delay: float,
                         is_actor: Callable[[str], bool],
                         name: str = "recycled_after_delay") -> Verdict:
    """G3: every recycle of a gang replica by the implementation (each of its pods deleted, by
    the audit log) began while the replica's breach condition was True, and no earlier than
    ``delay`` after the transition time that breach carries; both on the cluster's clock: the
    breach from when its status was written, the recycle from its first deletion. A replica
    that was never recycled broke nothing this forbids."""
    history = History.of(history)
    origin, offset = history.origin, history.offset
    reads = frozenset({*gang.resources, "pods", "audit"})
    runs = recycles(history, gang, is_actor)
    found: dict[str | None, list[Breach]] = {}
    unsure: list[str] = []
    for run in runs:
        if not (run.group or "").isdigit():
            unsure.append(f"a recycle of gang {gang.name} at +{run.since - origin:.3f}s was of "
                          "pods that carry no replica index to read its breach condition by")
            continue
        if run.group not in found:
            found[run.group] = breaches(history, gang, int(run.group))
        breach, certain = breach_at(found[run.group], run.since)
        began = run.since - offset  # on the API server's clock
        what = f"replica {run.group} of gang {gang.name}"
        # what makes it a recycle: the replica's pods from their making to the deletions
        window = (min(run.born, run.began.lo), run.began.hi)
        if breach is None:
            last = _holder_before(history, gang, run.group, run.since)
            # with no recorded state of its condition, that it was not True is by absence
            return Verdict(name, VIOLATED, f"{what} was recycled at +{run.since - origin:.3f}s "
                           "while its breach condition was not True",
                           distinct([*(c.entry for c in last), run.began.entry]), origin,
                           subjects=len(runs), by_absence=not last,
                           window=(origin, run.began.hi) if not last else
                           (min(window[0], last[0].lo), window[1]), reads=reads)
        if not certain:
            unsure.append(f"{what} was recycled at +{run.since - origin:.3f}s, within a second "
                          "of a change of its breach condition: whether it was True then is "
                          "not known")
            continue
        if breach.since is not None and began < breach.since + delay:
            return Verdict(name, VIOLATED, f"{what} was recycled {began - breach.since:.2f}s "
                           f"after its breach, earlier than the {delay:g}s termination delay",
                           [breach.began.entry, run.began.entry], origin, subjects=len(runs),
                           window=window, reads=reads)
        if breach.since is None and began < breach.began.hi - offset + delay:
            unsure.append(f"{what} was recycled {began - (breach.began.hi - offset):.2f}s "
                          "after its breach was recorded, and the breach carries no transition "
                          "time to tell when it began")
    if unsure:
        return Verdict(name, UNKNOWN, unsure[0], [], origin, subjects=len(runs), reads=reads)
    pods = gang_lives(history, gang)
    summary = (f"each of the {len(runs)} recycles of gang {gang.name} came at least "
               f"{delay:g}s after a breach still True" if runs else
               f"gang {gang.name} was never recycled" if pods else
               f"no pod of gang {gang.name} was recorded")
    return Verdict(name, PASS, summary, [run.began.entry for run in runs], origin,
                   subjects=len(runs) or len(pods), reads=reads)


def _holder_before(history: History, gang: Gang, group: str | None,
                   moment: float) -> list[Change]:
    """The last change certainly before ``moment`` of the object that holds the replica's
    breach condition (its own object, or the gang's)."""
    key = ((gang.child["resource"]["plural"], gang.namespace, gang.child_name(int(group)))
           if gang.child and (group or "").isdigit()
           else (gang.resource, gang.namespace, gang.name))
    return [c for c in history.changes_of(key[0]) if c.key == key and c.hi <= moment][-1:]


def terminations(history: History, gang: Gang) -> list[Change]:
    return gang.events(history, "termination_reason")


def at_most_terminations(history: Recorded, gang: Gang, limit: int,
                         is_actor: Callable[[str], bool] | None = None,
                         delay: float | None = None,
                         name: str = "at_most_terminations") -> Verdict:
    """G5/G6: the gang was terminated at most ``limit`` times: by the audit log (deletions by
    the implementation, ``recycles``) when its identity is given, else by its own Events (a
    judgement saved before it was)."""
    history = History.of(history)
    origin = history.origin
    if is_actor is not None:
        return _recycled_at_most(history, gang, limit, is_actor, delay, name)
    found = terminations(history, gang)
    seen = int(bool(history.lives_of(gang.resource, gang.namespace, gang.name)))
    reads = frozenset({"events", *gang.resources})
    if len(found) > limit:
        return Verdict(name, VIOLATED, f"gang {gang.name} was terminated {len(found)} times, "
                       f"at most {limit} allowed", distinct(c.entry for c in found[:limit + 1]),
                       origin, subjects=seen, reads=reads)
    summary = (f"gang {gang.name} was terminated {len(found)} times" if seen else
               f"gang {gang.name} was never recorded")
    return Verdict(name, PASS, summary, distinct(c.entry for c in found), origin,
                   subjects=seen, reads=reads)


def _recycled_at_most(history: History, gang: Gang, limit: int,
                      is_actor: Callable[[str], bool], delay: float | None,
                      name: str) -> Verdict:
    origin = history.origin
    runs = recycles(history, gang, is_actor)
    found = [run.began.entry for run in runs]
    pods = gang_lives(history, gang)
    reads = frozenset({"pods", "audit"})
    excused, refused = excuses(history, gang, runs, delay)
    counted = [index for index in range(len(runs)) if index not in excused]
    if len(found) > limit and len(counted) <= limit:
        # The precondition of the implementation's design never held here: it leaves binding
        # a replica whole to a gang scheduler, and this cluster's, which is none, bound part
        # of one. Each such recycle names the facts recorded that make it so.
        how = " | ".join(excused[i] for i in sorted(excused))
        return Verdict(name, UNKNOWN, f"gang {gang.name} was terminated {len(found)} times, "
                       f"{len(excused)} of them after the scheduler bound a replica in part "
                       f"({how}): the profile leaves binding a replica whole to a gang "
                       "scheduler (binding: all_or_nothing), which this cluster does not run",
                       [found[i] for i in sorted(excused)], origin, subjects=len(pods),
                       reads=reads)
    if len(counted) > limit:
        note = "".join(f"; counted though {refused[i]}" for i in counted[:limit + 1]
                       if i in refused)
        witness = [runs[i].began for i in counted[:limit + 1]]
        return Verdict(name, VIOLATED, f"gang {gang.name} was terminated {len(counted)} times "
                       f"(each a replica's every pod deleted by the implementation), at most "
                       f"{limit} allowed{note}", [a.entry for a in witness], origin,
                       subjects=len(pods),
                       window=(min(runs[i].born for i in counted[:limit + 1]),
                               witness[-1].hi), reads=reads)
    summary = (f"gang {gang.name} was terminated {len(counted)} times" if pods else
               f"no pod of gang {gang.name} was recorded")
    return Verdict(name, PASS, summary, [runs[i].began.entry for i in counted], origin,
                   subjects=len(pods), reads=reads)


def group_never_more_than(history: Recorded, gang: Gang, group: int, limit: int,
                          is_actor: Callable[[str], bool] | None = None,
                          delay: float | None = None,
                          name: str = "group_never_more_than") -> Verdict:
    """G8: a gang replica never has more live pods than ``limit``. For a gang that leaves
    binding a replica whole to a gang scheduler (``binding: all_or_nothing``), an excess made of
    the pods of a recycle the setup excuses (``excuses``: a binding in part by a scheduler that
    is not the one the design counts on, with the facts recorded that show it) is UNKNOWN; any
    other excess stands."""
    history = History.of(history)
    what = f"live pods of group {group} of gang {gang.name}"
    verdict = never_more_than(history, limit, namespace=gang.namespace,
                              selector=gang.selector(group), what=what, name=name)
    if verdict.status != VIOLATED or is_actor is None or \
            gang.mapping.get("binding") != "all_or_nothing":
        return verdict
    if not history.audit_caught_up:
        # The recycles and bindings that would excuse it are the audit log's to show
        return Verdict(name, UNKNOWN, f"the audit log had not caught up when this was judged, "
                       f"so whether a replica was bound in part is not known; "
                       f"{verdict.summary}", verdict.witness, verdict.origin,
                       subjects=verdict.subjects, reads=frozenset({"pods", "audit"}))
    runs = recycles(history, gang, is_actor)
    excused, _ = excuses(history, gang, runs, delay)
    leaving = [(runs[i].since, {history.lives[lid].key for lid in runs[i].had})
               for i in excused]
    if not leaving:
        return verdict

    def uncounted(change: Change) -> set[tuple[str, str, str]]:
        return set().union(*(pods for since, pods in leaving if change.hi >= since))

    again = never_more_than(history, limit, namespace=gang.namespace,
                            selector=gang.selector(group), what=what, name=name,
                            uncounted=uncounted)
    if again.status == VIOLATED:
        return again
    how = " | ".join(excused[i] for i in sorted(excused))
    return Verdict(name, UNKNOWN, f"{verdict.summary}, each time counting the pods of a "
                   f"replica recycled after the scheduler bound it in part ({how}); without "
                   f"them {again.summary}: the profile leaves binding a replica whole to a gang "
                   "scheduler (binding: all_or_nothing), which this cluster does not run",
                   verdict.witness, verdict.origin, subjects=verdict.subjects,
                   reads=frozenset({"pods", "audit"}))


def one_warning_per_drop_to_zero(history: Recorded, gang: Gang, group: int,
                                 name: str = "one_warning_per_drop") -> Verdict:
    """G9: as many scheduled-zero warnings as times the group's scheduled pods dropped to 0.

    client-go's events API (``tools/events``) sends an event that happens again once more, as
    a series of 2, then only counts it until its next refresh (every 30 minutes): once a
    series of the warning was recorded, fewer warnings than drops is what that recorder shows,
    not a warning withheld, and is UNKNOWN. More warnings than drops always stands."""
    history = History.of(history)
    origin = history.origin
    drops: list[Change] = []
    was_zero, last = True, None
    for change, state in history.replay("pods"):
        scheduled = [p for p in gang.live_pods(state, group) if p["spec"].get("nodeName")]
        zero = not scheduled
        if zero and not was_zero:
            drops.append(change)
        was_zero, last = zero, change
    warnings = gang.events(history, "scheduled_zero_reason")
    reads = frozenset({"pods", "events"})
    seen = len(gang_lives(history, gang, group))
    if last is None:
        return Verdict(name, UNKNOWN, "nothing was recorded", [], origin, reads=reads)
    series = next((c for c in warnings if ((c.object or {}).get("series") or {}).get("count")),
                  None)
    both = sorted({id(c): c for c in drops + warnings}.values(), key=lambda c: c.order)
    if len(warnings) < len(drops) and series is not None and \
            series.order <= drops[len(warnings)].order:
        return Verdict(name, UNKNOWN, f"group {group} dropped to zero scheduled pods "
                       f"{len(drops)} times and {len(warnings)} warnings were recorded, the "
                       f"last of them a series ({series.ref}): client-go's events API counts "
                       "a series' later occurrences until its refresh, every 30 minutes, and "
                       "sends them then", [c.entry for c in both][:6], origin,
                       subjects=seen, reads=reads)
    if len(warnings) != len(drops):
        return Verdict(name, VIOLATED, f"group {group} dropped to zero scheduled pods "
                       f"{len(drops)} times and {len(warnings)} warnings were emitted",
                       distinct(c.entry for c in both)[:6], origin,
                       subjects=seen, by_absence=True, reads=reads)
    return Verdict(name, PASS, f"{len(drops)} drops to zero, {len(warnings)} warnings",
                   distinct(c.entry for c in both), origin, subjects=seen, reads=reads)


# A replica healthy for less than this may never have been seen healthy by a level-triggered
# implementation (one reconcile round, or one informer batch, can span the whole of it), and G5
# has it treat a replica never seen healthy as still starting: G1 does not judge what follows,
# unless the implementation's own status said it saw the replica healthy.
OBSERVABLE = 1.0


@dataclass
class _Replica:
    """What the G1 judgement remembers of one gang replica while it replays the history."""

    healthy: set[str] | None = None  # its scheduled pods when it was last seen healthy
    since: float | None = None  # when its current healthy stretch began (at the latest)
    stretch: set[str] = field(default_factory=set)  # its scheduled pods in that stretch
    said_before: bool = False  # its status already said healthy when that stretch began
    began: Change | None = None  # where its current regression began
    breached: bool = False  # the breach was True at some moment of that regression
    judged: bool = False  # that regression was counted (its breach showed in time)

    def follow(self, scheduled: set[str], minimum: int, breached: bool, seen: bool,
               change: Change) -> None:
        """``seen``: the implementation's status says the replica is healthy. A status that
        already said so when the stretch began is an earlier stretch's, and proves nothing."""
        said = seen and not self.said_before
        if self.since is not None and (said or change.lo - self.since >= OBSERVABLE):
            self.healthy = self.stretch  # healthy long enough, or said to be, to have been seen
        if self.healthy is not None and not self.healthy & scheduled:
            self.healthy = None  # every pod it was healthy with is gone: it starts over
        if len(scheduled) >= minimum:
            if self.since is None:
                self.since, self.said_before = change.hi, seen
            self.stretch = scheduled
        else:
            self.since = None
        if not seen:
            self.said_before = False  # whatever it says from now on, it says anew
        if self.healthy is None or not 0 < len(scheduled) < minimum:
            self.began, self.judged = None, False
        elif self.began is None:
            self.began, self.breached = change, breached
        else:
            self.breached = self.breached or breached

    def due(self, at: float, latency: float) -> bool:
        """Its regression has certainly lasted ``latency`` by ``at`` with no breach."""
        return self.began is not None and not self.breached and at >= self.began.hi + latency


def regressions_breached(history: Recorded, gang: Gang, latency: float, now: float,
                         name: str = "regression_detected") -> Verdict:
    """G1 over the whole history: whenever a gang replica that had been healthy (scheduled ≥
    minAvailable for ``OBSERVABLE`` seconds or more, or for less while the implementation's
    status said so, since its pods were last all replaced) has 0 < scheduled < minAvailable
    for ``latency`` seconds on end, its breach condition is True at some moment of those
    seconds (the cluster's order and clock).

    A replica whose healthy pods are all gone starts over (a termination recycles it; one that
    never becomes healthy again is not judged). A regression is judged when its breach shows
    (in time), or when it has certainly lasted ``latency`` without one (by the next change, or
    ``now``); one that ends sooner with no breach is not judged."""
    history = History.of(history)
    origin = history.origin
    reads = frozenset({*gang.resources, "pods"})
    replicas: dict[int, _Replica] = {}
    judged = 0
    for change, state in history.replay(reads):
        for group, replica in replicas.items():  # a regression that lasted until this change
            if replica.due(change.lo, latency):
                return _undetected(name, gang, group, replica.began, latency, origin, reads,
                                   history)
        if change.namespace != gang.namespace:
            continue
        obj = state.get(gang.resource, gang.namespace, gang.name)
        minimum = get_path(obj, gang.mapping["min_available_path"]) if obj else None
        if not isinstance(minimum, int):
            continue
        groups = get_path(obj, gang.mapping["groups_path"])
        for group in range(groups if isinstance(groups, int) else 1):
            scheduled = {p["metadata"]["name"] for p in gang.live_pods(state, group)
                         if p["spec"].get("nodeName")}
            replica = replicas.setdefault(group, _Replica())
            replica.follow(scheduled, minimum, gang.breached(state, group),
                           gang.reported_healthy(state, group), change)
            if replica.began is not None and replica.breached and not replica.judged:
                judged, replica.judged = judged + 1, True
    for group, replica in replicas.items():
        if replica.due(now, latency):
            return _undetected(name, gang, group, replica.began, latency, origin, reads,
                               history)
    summary = (f"{judged} regressions of gang {gang.name} below minAvailable, each breached "
               f"within {latency:g}s" if judged else
               f"no replica of gang {gang.name} regressed below minAvailable for {latency:g}s "
               "after being healthy")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _undetected(name: str, gang: Gang, group: int, began: Change, latency: float,
                origin: float, reads: frozenset[str], history: History) -> Verdict:
    """The witness: the change that began the regression, and the last record of the object
    that holds the replica's breach condition by the window's end (its condition not True)."""
    holder = ((gang.child["resource"]["plural"], gang.namespace, gang.child_name(group))
              if gang.child else (gang.resource, gang.namespace, gang.name))
    last = [c for c in history.changes_of(holder[0]) if c.key == holder
            and c.lo <= began.hi + latency][-1:]
    return Verdict(name, VIOLATED, f"group {group} of gang {gang.name} had been healthy, then "
                   f"had fewer scheduled pods than minAvailable (but some) for {latency:g}s "
                   f"from +{began.hi - origin:.3f}s, and its breach condition never turned "
                   "True", [c.entry for c in sorted({began, *last}, key=lambda c: c.order)],
                   origin,
                   subjects=1, by_absence=True, window=(began.lo, began.hi + latency),
                   reads=reads)


def _gang(p: Params) -> Gang:
    return Gang(**p["gang"])


def _actor(p: Params) -> Callable[[str], bool] | None:
    return actor(p["actor"], exact=True) if p.get("actor") else None


@check("termination_timed", "Every time a gang replica's breach has stayed True for the "
       "termination delay, all the pods it had then are gone within delay + bound (deleted by "
       "the implementation, or by the garbage collector after it deleted their owner).",
       audit=True)
def _termination_timed(history: History, p: Params) -> Verdict:
    return termination_timed(history, _gang(p), p["group"], p["delay"], p["latency"],
                             actor(p["actor"], exact=True))


@check("recycled_after_delay", "Every recycle of a gang replica (each of its pods deleted by "
       "the implementation, or by the garbage collector after it deleted their owner; by the "
       "audit log) began while its breach condition was True, at least the termination delay "
       "after it turned True.", audit=True)
def _recycled_after_delay(history: History, p: Params) -> Verdict:
    return recycled_after_delay(history, _gang(p), p["delay"], actor(p["actor"], exact=True))


@check("at_most_terminations", "A gang is terminated at most a given number of times (a "
       "replica's every pod deleted by the implementation, or by the garbage collector after "
       "it deleted their owner; by the audit log); for a gang left to a gang scheduler to bind "
       "whole, a recycle that followed a binding in part is the setup's only with the facts "
       "recorded that show it.", audit=True)
def _at_most_terminations(history: History, p: Params) -> Verdict:
    return at_most_terminations(history, _gang(p), p["limit"], _actor(p), p.get("delay"))


@check("one_warning_per_drop", "One scheduled-zero warning per drop of a gang replica's "
       "scheduled pods to zero (a shortfall once the events API's series began is not known).")
def one_warning_per_drop(history: History, p: Params) -> Verdict:
    return one_warning_per_drop_to_zero(history, _gang(p), p["group"])


@check("group_never_more_than", "A gang replica never has more live pods than a limit; for a "
       "gang left to a gang scheduler to bind whole, an excess of a recycle the setup is shown "
       "to have caused (a binding in part, by the audit log) is not judged.", audit=True)
def _group_never_more_than(history: History, p: Params) -> Verdict:
    return group_never_more_than(history, _gang(p), p["group"], p["limit"], _actor(p),
                                 p.get("delay"))


@check("regression_detected", "Whenever a gang replica that had been healthy for 1 s has fewer "
       "scheduled pods than minAvailable, but some, for L seconds on end, its breach condition "
       "was True at some moment of them.")
def regression_detected(history: History, p: Params) -> Verdict:
    return regressions_breached(history, _gang(p), p["latency"], p["now"])


CONCEPTS = ("gang",)
prop("G1", "The implementation reports a regression: a gang replica that was healthy (for at "
     "least 1 s, long enough to be seen, or for less while its status said so) and then has 0 "
     "< scheduled < minAvailable gets the breach condition from it within L (its own "
     "condition, as the profile maps it).",
     ["eventually", "regression_detected"], CONCEPTS, ("destructive_faults",))
prop("G2", "The implementation terminates after TD: once its breach has stayed True for TD, "
     "every pod the gang replica had then is gone within TD + L.", ["termination_timed"],
     CONCEPTS)
prop("G3", "The implementation does not terminate early or without cause: no recycle earlier "
     "than TD after the breach, none while the breach is not True.", ["recycled_after_delay"],
     CONCEPTS)
prop("G4", "The implementation recycles only the breached gang replica (minimal blast "
     "radius).", ["deleted_by"], CONCEPTS)
prop("G5", "The implementation does not terminate a gang that never became healthy (start-up "
     "is not churned).", ["at_most_terminations"], CONCEPTS)
prop("G6", "The implementation recycles at most once per breach episode while capacity stays "
     "withheld (no churn loop).", ["at_most_terminations"], CONCEPTS)
prop("G7", "The implementation recovers: after uncordon it has all pods Ready and reports the "
     "breach False within T (its own condition, as the profile maps it).", ["eventually"],
     CONCEPTS)
prop("G8", "The implementation never runs more live pods of a gang replica than its replicas, "
     "the replacements it makes during TD counted.", ["never_more_than",
                                                      "group_never_more_than"], CONCEPTS)
prop("G9", "The implementation reports one warning event per drop of a replica's scheduled pods "
     "to zero.", ["one_warning_per_drop"], CONCEPTS)

__all__ = ["Recycle", "at_most_terminations", "group_never_more_than", "recycled_after_delay",
           "regressions_breached", "termination_timed"]
