"""G: gang workloads and termination delay (docs/properties.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aftershock.checks.attribution import actor, cascade_began, done_by, pod_deleted
from aftershock.checks.invariants import never_more_than
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.concepts import get_path
from aftershock.concepts.gang import Gang
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.timeline.entry import AUDIT, AUDIT_SYNC, MARK, SCHEDULERS, WATCH, Entry
from aftershock.timeline.state import replay, selects


def distinct(entries: Iterable[Entry]) -> list[Entry]:
    """Each entry once, in the order recorded."""
    return sorted({entry.seq: entry for entry in entries}.values(), key=lambda e: e.seq)


def stamp(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def group_pod_names(entries: list[Entry], gang: Gang, group: int) -> set[str]:
    selector = gang.selector(group)
    return {e.name for e in entries if e.kind == WATCH and e.resource == "pods"
            and e.namespace == gang.namespace and selects(selector, e.object or {})}


STAMP = 1.0  # a condition's lastTransitionTime is whole seconds


@dataclass
class Breach:
    """One stretch of recorded states in which a replica's breach condition was True."""

    began: Entry  # the first recorded state that showed it True
    since: float | None  # its lastTransitionTime (the API server's clock), if it has one
    ended: Entry | None = None  # the first recorded state that no longer did


def breaches(entries: list[Entry], gang: Gang, group: int) -> list[Breach]:
    """Every stretch of the history in which group ``group``'s breach condition was True, in
    order. A new transition time while it stays True (a change the watch folded) starts the
    next stretch."""
    found: list[Breach] = []
    current: Breach | None = None
    for entry, state in replay(entries):
        if entry.resource not in gang.resources or entry.namespace != gang.namespace:
            continue
        condition = gang.breach(state, group)
        breached = bool(condition) and condition.get("status") == "True"
        since = stamp(condition.get("lastTransitionTime")) if breached else None
        if current is not None and (not breached or since != current.since):
            current.ended, current = entry, None
        if breached and current is None:
            current = Breach(entry, since)
            found.append(current)
    return found


def breach_at(found: list[Breach], mono: float) -> Breach | None:
    """The stretch that was recorded as going on at ``mono`` (the recorder's clock)."""
    for breach in reversed(found):
        if breach.began.mono <= mono:
            return breach if breach.ended is None or breach.ended.mono > mono else None
    return None


@dataclass
class _Due:
    """A breach that stayed True for the termination delay, and the pods it was due for."""

    breach: Breach
    pods: set[str]  # the group's live pods when the delay ran out


def _due(entries: list[Entry], gang: Gang, group: int,
         delay: float) -> tuple[list[_Due], Breach | None, int]:
    """Each breach with a transition time that stayed True for ``delay``, with the pods the
    group had when the delay ran out (the state just before the first change recorded after
    it: the change itself, a pod made then, was not there when it ran out); and a breach still
    waiting out its delay when the history ends. A breach that ended sooner is a flicker
    (Grove's, while the default scheduler binds a new replica's pods one at a time), not one
    that is due. Also how many breaches that ran out were of a replica made anew that never had
    its minimum scheduled (not due: G5's)."""
    due: list[_Due] = []
    skipped = 0
    current: Breach | None = None
    ran_out, before = False, set()
    healthy: set[str] = set()  # the status objects (incarnations) ever healthy
    starting = False  # the current breach is of an incarnation never healthy
    for entry, state in replay(entries):
        if current is not None and not ran_out and entry.wall >= current.since + delay:
            if not starting:
                due.append(_Due(current, before))
            skipped += starting
            ran_out = True
        if entry.namespace != gang.namespace:
            continue
        if entry.resource in gang.resources or entry.resource == "pods":
            found = gang.incarnation(state, group)
            if found is not None and found[1] >= found[2]:
                healthy.add(found[0])
        if entry.resource in gang.resources:
            condition = gang.breach(state, group)
            breached = bool(condition) and condition.get("status") == "True"
            since = stamp(condition.get("lastTransitionTime")) if breached else None
            if current is not None and (not breached or since != current.since):
                current = None
            if breached and since is not None and current is None:
                current, ran_out = Breach(entry, since), False
                # a replica made anew by a recycle that never had its minimum scheduled is
                # starting, and G5 forbids terminating it: not a breach G2 demands an end of
                starting = found is not None and found[0] not in healthy
        if current is not None and not ran_out:
            before = _live(gang, state, group)
    return due, (current if current is not None and not ran_out and not starting else None), \
        skipped


def _live(gang: Gang, state, group: int) -> set[str]:
    return {p["metadata"]["name"] for p in gang.live_pods(state, group)}


def termination_timed(entries: Iterable[Entry], gang: Gang, group: int, delay: float,
                      latency: float, is_actor: Callable[[str], bool],
                      name: str = "termination_timed") -> Verdict:
    """G2: every time group ``group``'s breach has stayed True for ``delay`` since it turned
    True (its lastTransitionTime), every pod the group had when the delay ran out is gone by
    ``delay + latency``: deleted by the implementation, or by the garbage collector after it
    deleted their owner (by the audit log). Every such breach is judged, not only the first.
    Whether a termination came too early is G3's to judge (``recycled_after_delay``)."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({*gang.resources, "pods", "audit"})
    due, waiting, skipped = _due(entries, gang, group, delay)
    if not due:
        if waiting is not None:
            return Verdict(name, UNKNOWN, f"the history ends before the {delay:g}s "
                           "termination delay ran out", [waiting.began], origin, reads=reads)
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
    deleting = pod_deleted(gang.namespace, group_pod_names(entries, gang, group))
    theirs = done_by(entries, is_actor)
    deletions = [e for e in entries if e.kind == AUDIT and deleting(e) and theirs(e)]
    judged: list[tuple[Breach, Entry]] = []
    unsure: list[str] = []
    for episode in due:
        since = episode.breach.since
        mine = [e for e in deletions if e.wall >= since]
        # lastTransitionTime is whole seconds: the breach turned True within the second after
        # it. Late is certain only past the deadline counted from that second's end.
        deadline = since + delay + latency
        left = sorted(episode.pods - {e.name for e in mine if e.wall <= deadline + STAMP})
        if left and entries[-1].wall < deadline + STAMP:
            unsure.append(f"the history ends before the {delay + latency:g}s bound of the "
                          f"breach recorded at +{episode.breach.began.mono - origin:.3f}s ran "
                          f"out, {len(left)} of its {len(episode.pods)} pods not yet gone")
            continue
        if left:
            return Verdict(name, VIOLATED, f"{len(left)} of the {len(episode.pods)} pods of "
                           f"group {group} were not terminated within {delay + latency:g}s of "
                           f"the breach recorded at +{episode.breach.began.mono - origin:.3f}s "
                           f"(e.g. pod/{gang.namespace}/{left[0]})", [episode.breach.began],
                           origin, subjects=len(episode.pods), by_absence=True,
                           window=(episode.breach.began.mono, entries[-1].mono), reads=reads)
        late = sorted(episode.pods - {e.name for e in mine if e.wall <= deadline})
        if late:
            unsure.append(f"{len(late)} of the {len(episode.pods)} pods of group {group} went "
                          f"{delay + latency:g}s to {delay + latency + STAMP:g}s after the "
                          f"second its breach is stamped with (e.g. "
                          f"pod/{gang.namespace}/{late[0]}): whether that was within "
                          f"{delay + latency:g}s of the breach itself, a whole-second stamp "
                          "cannot say")
        elif episode.pods:
            first = min((e for e in mine if e.name in episode.pods), key=lambda e: e.wall)
            judged.append((episode.breach, first))
    if unsure:
        return Verdict(name, UNKNOWN, unsure[0], [due[0].breach.began], origin,
                       subjects=len(due), reads=reads)
    if not judged:
        return Verdict(name, UNKNOWN, f"the precondition never held: group {group} had no pod "
                       "left to terminate when its termination delay ran out",
                       [due[0].breach.began], origin, subjects=0, reads=reads)
    took = ", ".join(f"{first.wall - breach.since:.2f}s" for breach, first in judged)
    still = (f"; a later breach was still within its delay at +{waiting.began.mono - origin:.3f}s"
             if waiting is not None else "")
    return Verdict(name, PASS, f"group {group} terminated {took} after its "
                   f"{'breach' if len(judged) == 1 else f'{len(judged)} breaches'} (delay "
                   f"{delay:g}s, bound {delay + latency:g}s){still}",
                   distinct(e for breach, first in judged for e in (breach.began, first)),
                   origin, subjects=len(judged), reads=reads)


def recycled_after_delay(entries: Iterable[Entry], gang: Gang, delay: float,
                         is_actor: Callable[[str], bool],
                         name: str = "recycled_after_delay") -> Verdict:
    """G3: every recycle of a gang replica by the implementation (``recycles``: each of its
    pods deleted, by the audit log) began while the replica's breach condition was recorded
    True, and no earlier than ``delay`` after the transition time that breach carries. A
    replica that was never recycled broke nothing this forbids."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({*gang.resources, "pods", "audit"})
    runs = _recycles(entries, gang, is_actor)
    found: dict[str | None, list[Breach]] = {}
    unsure: list[str] = []
    for run in runs:
        if not (run.group or "").isdigit():
            unsure.append(f"a recycle of gang {gang.name} at +{run.since - origin:.3f}s was of "
                          "pods that carry no replica index to read its breach condition by")
            continue
        if run.group not in found:
            found[run.group] = breaches(entries, gang, int(run.group))
        breach = breach_at(found[run.group], run.since)
        began = run.began.wall - (run.began.mono - run.since)  # on the API server's clock
        what = f"replica {run.group} of gang {gang.name}"
        # what makes it a recycle: the replica's pods from their making to the deletions
        window = (min(run.born, run.began.mono), run.began.mono)
        if breach is None:
            last = _holder_before(entries, gang, run.group, run.since)
            # with no recorded state of its condition, that it was not True is by absence
            return Verdict(name, VIOLATED, f"{what} was recycled at +{run.since - origin:.3f}s "
                           "while its breach condition was not True", distinct(
                               [*last, run.began]), origin, subjects=len(runs),
                           by_absence=not last,
                           window=(origin, run.began.mono) if not last else window,
                           reads=reads)
        if breach.since is not None and began < breach.since + delay:
            return Verdict(name, VIOLATED, f"{what} was recycled {began - breach.since:.2f}s "
                           f"after its breach, earlier than the {delay:g}s termination delay",
                           [breach.began, run.began], origin, subjects=len(runs),
                           window=window, reads=reads)
        if breach.since is None and began < breach.began.wall + delay:
            unsure.append(f"{what} was recycled {began - breach.began.wall:.2f}s after its "
                          "breach was recorded, and the breach carries no transition time to "
                          "tell when it began")
    if unsure:
        return Verdict(name, UNKNOWN, unsure[0], [], origin, subjects=len(runs), reads=reads)
    pods = {e.name for e in entries if e.kind == WATCH and e.resource == "pods"
            and e.namespace == gang.namespace and selects(gang.selector(), e.object or {})}
    summary = (f"each of the {len(runs)} recycles of gang {gang.name} came at least "
               f"{delay:g}s after a breach still True" if runs else
               f"gang {gang.name} was never recycled" if pods else
               f"no pod of gang {gang.name} was recorded")
    return Verdict(name, PASS, summary, [run.began for run in runs], origin,
                   subjects=len(runs) or len(pods), reads=reads)


def _holder_before(entries: list[Entry], gang: Gang, group: str | None,
                   mono: float) -> list[Entry]:
    """The last recorded state before ``mono`` of the object that holds the replica's breach
    condition (its own object, or the gang's)."""
    holder = ((gang.child["resource"]["plural"], gang.namespace, gang.child_name(int(group)))
              if gang.child and (group or "").isdigit()
              else (gang.resource, gang.namespace, gang.name))
    return [e for e in entries if e.kind == WATCH and e.key == holder and e.mono <= mono][-1:]


def terminations(entries: Iterable[Entry], gang: Gang) -> list[Entry]:
    return gang.events(entries, "termination_reason")


# Within one termination the implementation's deletions follow each other closely (100 pods
# at 50 writes a second: 20 ms apart); a pause longer than this ends the run.
BURST = 2.0


@dataclass
class _Recycle:
    began: Entry  # its first deletion
    had: set[str]  # the replica's pods when it began
    deleted: set[str] = field(default_factory=set)
    last: float = 0.0  # when it last deleted
    since: float = 0.0  # when it began: its first deletion, or the deletion of their owner
    group: str | None = None
    born: float = 0.0  # when the first of the pods it had was made (or first recorded)

    @property
    def whole(self) -> bool:
        return bool(self.had) and self.had <= self.deleted


def recycles(entries: list[Entry], gang: Gang, is_actor: Callable[[str], bool]) -> list[Entry]:
    return [run.began for run in _recycles(entries, gang, is_actor)]


def _recycles(entries: list[Entry], gang: Gang,
              is_actor: Callable[[str], bool]) -> list[_Recycle]:
    """The gang's terminations as the audit log shows them, one entry (the first deletion)
    each: a run of the implementation's deletions of one gang replica's pods that removed every
    pod the replica had when the run began. A run is a burst: a deletion more than BURST
    seconds after the previous one, or of a pod created after the run began (a replacement),
    starts the next. Times are the audit log's: the API server's clock. Deleting one finished
    or surplus pod is no termination.

    The pods a replica had when a run began are those the audit log shows made and not yet
    deleted, and those the watch shows live then (an audit log that missed the creates would
    otherwise make one surplus pod the whole replica)."""
    group_of: dict[str, str] = {}
    seen: dict[str, list[float]] = {}  # a pod → [first recorded live, first recorded going]
    label = gang.mapping["group_label"]
    for entry in entries:
        obj = entry.object or {}
        if entry.kind == WATCH and entry.resource == "pods" and \
                entry.namespace == gang.namespace and selects(gang.selector(), obj):
            group_of[entry.name] = ((obj.get("metadata") or {}).get("labels") or {}).get(label)
            span = seen.setdefault(entry.name, [entry.mono, float("inf")])
            if entry.type == "DELETED" or (obj.get("metadata") or {}).get("deletionTimestamp"):
                span[1] = min(span[1], entry.mono)
    deleting = pod_deleted(gang.namespace, set(group_of))
    audits = sorted((e for e in entries if e.kind == AUDIT and e.resource == "pods"
                     and e.namespace == gang.namespace), key=lambda e: e.mono)
    created: dict[str, float] = {}
    gone: set[str] = set()
    live: dict[str | None, set[str]] = {}
    runs: dict[str | None, _Recycle] = {}
    done: list[_Recycle] = []
    theirs, cascade = done_by(entries, is_actor), cascade_began(entries, is_actor)
    for entry in audits:
        group = group_of.get(entry.name)
        if entry.verb == "create" and not entry.subresource and entry.code in (200, 201):
            created[entry.name] = entry.mono
            live.setdefault(group, set()).add(entry.name)
        elif deleting(entry):
            run = runs.get(group)
            if theirs(entry):
                if run is None or created.get(entry.name, -1.0) > run.since or \
                        entry.mono - run.last > BURST:
                    done += [run] if run else []
                    # A cascade began when the owner was deleted: pods made since then (Grove
                    # makes the new replica's before the collector removes the old) are not
                    # the replica terminated
                    since = min(entry.mono, cascade(entry) or entry.mono)
                    watched = {name for name, (first, going) in seen.items()
                               if group_of[name] == group and first <= since < going}
                    had = ({name for name in live.get(group, ())
                            if created.get(name, -1.0) <= since} | watched) - gone
                    had.add(entry.name)
                    born = min(min(created.get(n, since), seen[n][0]) for n in had)
                    run = runs[group] = _Recycle(entry, had, since=since, group=group,
                                                 born=born)
                run.deleted.add(entry.name)
                run.last = entry.mono
            live.setdefault(group, set()).discard(entry.name)
            gone.add(entry.name)
    return sorted((run for run in [*done, *runs.values()] if run.whole),
                  key=lambda run: run.began.mono)


def at_most_terminations(entries: Iterable[Entry], gang: Gang, limit: int,
                         is_actor: Callable[[str], bool] | None = None,
                         delay: float | None = None,
                         name: str = "at_most_terminations") -> Verdict:
    """G5/G6: the gang was terminated at most ``limit`` times: by the audit log (deletions by
    the implementation, ``recycles``) when its identity is given, else by its own Events (a
    judgement saved before it was)."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    if is_actor is not None:
        return _recycled_at_most(entries, gang, limit, is_actor, delay, name)
    found = terminations(entries, gang)
    seen = int(any(e.kind == WATCH and e.key == (gang.resource, gang.namespace, gang.name)
                   for e in entries))
    reads = frozenset({"events", *gang.resources})
    if len(found) > limit:
        return Verdict(name, VIOLATED, f"gang {gang.name} was terminated {len(found)} times, "
                       f"at most {limit} allowed", distinct(found[:limit + 1]), origin,
                       subjects=seen, reads=reads)
    summary = (f"gang {gang.name} was terminated {len(found)} times" if seen else
               f"gang {gang.name} was never recorded")
    return Verdict(name, PASS, summary, distinct(found), origin, subjects=seen, reads=reads)


@dataclass
class _Partial:
    """A replica the scheduler bound in part before it was recycled."""

    peak: int  # the most of its pods bound at once
    made: set[str]  # its pods, made since its previous recycle began (or at all)
    minimum: int
    binders: set[str]  # who bound them (by the audit log)

    def text(self, group: str | None) -> str:
        return (f"replica {group}: at most {self.peak} of its {len(self.made)} pods bound at "
                f"once, minAvailable {self.minimum}")


def bound_in_part(entries: list[Entry], gang: Gang, runs: list[_Recycle]) -> dict[int, _Partial]:
    """The recycles in ``runs`` (by position) of a replica whose pods, made since its previous
    recycle began (or at all), the scheduler bound some of but never minAvailable at once: a
    state only a scheduler that binds pod by pod leaves, never a gang scheduler (it binds
    minAvailable of a replica's pods at once, or none). By the audit log: creates, the
    scheduler's bindings, deletions, on the API server's clock."""
    minimum = _min_available(entries, gang)
    audits = sorted((e for e in entries if e.kind == AUDIT and e.resource == "pods"
                     and e.namespace == gang.namespace and e.code in (200, 201)),
                    key=lambda e: e.mono)
    out: dict[int, _Partial] = {}
    before: dict[str | None, float] = {}
    for index, run in enumerate(runs):
        since, before[run.group] = before.get(run.group, float("-inf")), run.since
        mine = _group_pods(entries, gang, run.group)
        made = {e.name for e in audits if e.verb == "create" and not e.subresource
                and since < e.mono <= run.since and e.name in mine}
        bound: set[str] = set()
        binders: set[str] = set()
        peak = 0
        for entry in audits:
            if entry.mono > run.began.mono:
                break
            if entry.name in made and entry.verb == "create" and entry.subresource == "binding":
                bound.add(entry.name)
                binders.add(entry.actor)
                peak = max(peak, len(bound))
            elif entry.verb == "delete" and not entry.subresource:
                bound.discard(entry.name)
        if minimum and 0 < peak < minimum:
            out[index] = _Partial(peak, made, minimum, binders)
    return out


def cluster_schedulers(entries: Iterable[Entry]) -> list[dict[str, Any]] | None:
    """The schedulers the harness established this cluster runs (the provider that started
    them said so, on the timeline), or None where it did not."""
    found = None
    for entry in entries:
        if entry.kind == MARK and SCHEDULERS in (entry.extra or {}):
            found = list(entry.extra[SCHEDULERS])
    return found


def excuses(entries: list[Entry], gang: Gang, runs: list[_Recycle],
            delay: float | None) -> tuple[dict[int, str], dict[int, str]]:
    """Which recycles (by position in ``runs``) are the setup's, for a gang that leaves binding
    a replica whole to a gang scheduler, each with the recorded facts that make it so; and the
    recycles after a binding in part that are not excused, each with the fact that was not
    recorded. The facts: the scheduler bound the replica in part; its breach condition was
    True for the termination delay before the recycle; a pod of it was Unschedulable; and
    the cluster's schedulers, as the harness established them, include no gang scheduler and
    are who bound its pods, under the name the pods asked for."""
    excused: dict[int, str] = {}
    refused: dict[int, str] = {}
    if gang.mapping.get("binding") != "all_or_nothing":
        return excused, refused
    origin = entries[0].mono if entries else 0.0
    delay = delay if delay is not None else _termination_delay(entries, gang)
    schedulers = cluster_schedulers(entries)
    for index, part in bound_in_part(entries, gang, runs).items():
        run = runs[index]
        facts = [_breach_fact(entries, gang, run, delay, origin),
                 _unschedulable_fact(entries, gang, run, part, origin),
                 _scheduler_fact(entries, gang, part, schedulers)]
        missing = [text for held, text in facts if not held]
        if missing:
            refused[index] = f"{part.text(run.group)}, but {'; '.join(missing)}"
        else:
            excused[index] = "; ".join([part.text(run.group), *(text for _, text in facts)])
    return excused, refused


def _breach_fact(entries: list[Entry], gang: Gang, run: _Recycle, delay: float | None,
                 origin: float) -> tuple[bool, str]:
    if not (run.group or "").isdigit():
        return False, "its pods carry no replica index to read its breach condition by"
    breach = breach_at(breaches(entries, gang, int(run.group)), run.since)
    if breach is None:
        return False, "no breach of it was recorded going on when it was recycled"
    if delay is None:
        return False, "its termination delay is not known"
    # when it turned True: its transition time, unless that says later than it was recorded
    turned = breach.began.wall if breach.since is None else min(breach.since,
                                                                breach.began.wall)
    began = run.began.wall - (run.began.mono - run.since)
    if began - turned < delay:
        return False, (f"its breach was True for {began - turned:.2f}s before the recycle, "
                       f"less than its {delay:g}s termination delay")
    return True, (f"its breach True from +{breach.began.mono - origin:.3f}s, "
                  f"{began - turned:.2f}s before the recycle (delay {delay:g}s)")


def _unschedulable_fact(entries: list[Entry], gang: Gang, run: _Recycle, part: _Partial,
                        origin: float) -> tuple[bool, str]:
    for entry in entries:
        if entry.mono > run.began.mono:
            break
        if entry.kind == WATCH and entry.resource == "pods" and \
                entry.namespace == gang.namespace and entry.name in part.made and \
                _unschedulable(entry.object or {}):
            return True, f"{entry.ref} Unschedulable at +{entry.mono - origin:.3f}s"
    return False, "no pod of it was recorded Unschedulable"


def _unschedulable(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               and c.get("reason") == "Unschedulable"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _scheduler_fact(entries: list[Entry], gang: Gang, part: _Partial,
                    schedulers: list[dict[str, Any]] | None) -> tuple[bool, str]:
    if schedulers is None:
        return False, ("the harness did not establish which schedulers this cluster runs "
                       "(no provider said)")
    gangs = [s["name"] for s in schedulers if s.get("gang")]
    if gangs:
        return False, f"this cluster runs a gang scheduler ({', '.join(gangs)})"
    by_user = {s["user"]: s for s in schedulers}
    strangers = sorted(part.binders - set(by_user))
    if strangers:
        return False, (f"its pods were bound by {', '.join(strangers)}, no scheduler the harness "
                       "knows this cluster runs")
    asked = {_scheduler_name(obj) for obj in _last_objects(entries, gang, part.made)}
    named = {by_user[user]["name"] for user in part.binders}
    if not asked <= named:
        return False, (f"its pods asked for {', '.join(sorted(asked - named))}, which did not "
                       "bind them")
    shown = "; ".join(f"bound by {user}: {by_user[user]['name']}, {by_user[user]['by']}"
                      for user in sorted(part.binders))
    return True, shown


def _last_objects(entries: list[Entry], gang: Gang, names: set[str]) -> list[dict[str, Any]]:
    last: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.kind == WATCH and entry.resource == "pods" and \
                entry.namespace == gang.namespace and entry.name in names and entry.object:
            last[entry.name] = entry.object
    return list(last.values())


def _scheduler_name(pod: dict[str, Any]) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _termination_delay(entries: list[Entry], gang: Gang) -> float | None:
    """The gang's termination delay as last recorded on its object (seconds, or a Go duration
    where the profile says so), or None."""
    path = gang.mapping.get("termination_delay_path")
    if not path:
        return None
    value = None
    for entry in entries:
        if entry.kind == WATCH and entry.key == (gang.resource, gang.namespace, gang.name) \
                and entry.object:
            value = get_path(entry.object, path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        parts = DURATION.findall(value)
        if parts and "".join(a + u for a, u in parts) == value:
            return sum(float(a) * UNITS[u] for a, u in parts)
    return None


def _group_pods(entries: list[Entry], gang: Gang, group: str | None) -> set[str]:
    label = gang.mapping["group_label"]
    return {e.name for e in entries if e.kind == WATCH and e.resource == "pods"
            and e.namespace == gang.namespace and selects(gang.selector(), e.object or {})
            and ((e.object or {}).get("metadata") or {}).get("labels", {}).get(label) == group}


def _min_available(entries: list[Entry], gang: Gang) -> int | None:
    """The gang's minAvailable as last recorded."""
    for entry in reversed(entries):
        if entry.kind == WATCH and entry.key == (gang.resource, gang.namespace, gang.name) \
                and entry.object:
            value = get_path(entry.object, gang.mapping["min_available_path"])
            return int(value) if value is not None else None
    return None


def _recycled_at_most(entries: list[Entry], gang: Gang, limit: int,
                      is_actor: Callable[[str], bool], delay: float | None,
                      name: str) -> Verdict:
    origin = entries[0].mono if entries else 0.0
    runs = _recycles(entries, gang, is_actor)
    found = [run.began for run in runs]
    pods = {e.name for e in entries if e.kind == WATCH and e.resource == "pods"
            and e.namespace == gang.namespace and selects(gang.selector(), e.object or {})}
    reads = frozenset({"pods", "audit"})
    excused, refused = excuses(entries, gang, runs, delay)
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
                       f"{limit} allowed{note}", witness, origin, subjects=len(pods),
                       window=(min(runs[i].born for i in counted[:limit + 1]),
                               witness[-1].mono), reads=reads)
    summary = (f"gang {gang.name} was terminated {len(counted)} times" if pods else
               f"no pod of gang {gang.name} was recorded")
    return Verdict(name, PASS, summary, [runs[i].began for i in counted], origin,
                   subjects=len(pods), reads=reads)


def group_never_more_than(entries: Iterable[Entry], gang: Gang, group: int, limit: int,
                          is_actor: Callable[[str], bool] | None = None,
                          delay: float | None = None,
                          name: str = "group_never_more_than") -> Verdict:
    """G8: a gang replica never has more live pods than ``limit``. For a gang that leaves
    binding a replica whole to a gang scheduler (``binding: all_or_nothing``), an excess made of
    the pods of a recycle the setup excuses (``excuses``: a binding in part by a scheduler that
    is not the one the design counts on, with the facts recorded that show it) is UNKNOWN; any
    other excess stands."""
    entries = list(entries)
    what = f"live pods of group {group} of gang {gang.name}"
    verdict = never_more_than(entries, limit, namespace=gang.namespace,
                              selector=gang.selector(group), what=what, name=name)
    if verdict.status != VIOLATED or is_actor is None or \
            gang.mapping.get("binding") != "all_or_nothing":
        return verdict
    syncs = [entry for entry in entries if entry.kind == AUDIT_SYNC]
    if syncs and not (syncs[-1].extra or {}).get("caught_up", False):
        # The recycles and bindings that would excuse it are the audit log's to show
        return Verdict(name, UNKNOWN, f"the audit log had not caught up when this was judged, "
                       f"so whether a replica was bound in part is not known; "
                       f"{verdict.summary}", verdict.witness, verdict.origin,
                       subjects=verdict.subjects, reads=frozenset({"pods", "audit"}))
    runs = _recycles(entries, gang, is_actor)
    excused, _ = excuses(entries, gang, runs, delay)
    leaving = [(runs[i].since, {("pods", gang.namespace, pod) for pod in runs[i].had})
               for i in excused]
    if not leaving:
        return verdict

    def uncounted(entry: Entry) -> set[tuple[str, str, str]]:
        return set().union(*(pods for since, pods in leaving if entry.mono >= since))

    again = never_more_than(entries, limit, namespace=gang.namespace,
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


def one_warning_per_drop_to_zero(entries: Iterable[Entry], gang: Gang, group: int,
                                 name: str = "one_warning_per_drop") -> Verdict:
    """G9: as many scheduled-zero warnings as times the group's scheduled pods dropped to 0.

    client-go's events API (``tools/events``) sends an event that happens again once more, as
    a series of 2, then only counts it until its next refresh (every 30 minutes): once a
    series of the warning was recorded, fewer warnings than drops is what that recorder shows,
    not a warning withheld, and is UNKNOWN. More warnings than drops always stands."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    drops, was_zero, last = [], True, None
    for entry, state in replay(entries):
        scheduled = [p for p in gang.live_pods(state, group) if p["spec"].get("nodeName")]
        zero = not scheduled
        if zero and not was_zero:
            drops.append(entry)
        was_zero, last = zero, entry
    warnings = gang.events(entries, "scheduled_zero_reason")
    reads = frozenset({"pods", "events"})
    seen = len(group_pod_names(entries, gang, group))
    if last is None:
        return Verdict(name, UNKNOWN, "nothing was recorded", [], origin, reads=reads)
    series = _series_began(entries, gang)
    if len(warnings) < len(drops) and series is not None and \
            series.mono <= drops[len(warnings)].mono:
        return Verdict(name, UNKNOWN, f"group {group} dropped to zero scheduled pods "
                       f"{len(drops)} times and {len(warnings)} warnings were recorded, the "
                       f"last of them a series ({series.ref}): client-go's events API counts "
                       "a series' later occurrences until its refresh, every 30 minutes, and "
                       "sends them then", distinct(drops + warnings)[:6], origin,
                       subjects=seen, reads=reads)
    if len(warnings) != len(drops):
        return Verdict(name, VIOLATED, f"group {group} dropped to zero scheduled pods "
                       f"{len(drops)} times and {len(warnings)} warnings were emitted",
                       distinct(drops + warnings)[:6], origin,
                       subjects=seen, by_absence=True, reads=reads)
    return Verdict(name, PASS, f"{len(drops)} drops to zero, {len(warnings)} warnings",
                   distinct(drops + warnings), origin, subjects=seen, reads=reads)


def _series_began(entries: list[Entry], gang: Gang) -> Entry | None:
    """The first recorded scheduled-zero warning that is a series (the events API's), if any."""
    for entry in entries:
        if entry.kind == WATCH and entry.resource == "events" and entry.object and \
                (entry.object.get("series") or {}).get("count") and \
                gang.is_event(entry.object, "scheduled_zero_reason"):
            return entry
    return None


# A replica healthy for less than this may never have been seen healthy by a level-triggered
# implementation (one reconcile round, or one informer batch, can span the whole of it), and G5
# has it treat a replica never seen healthy as still starting: G1 does not judge what follows,
# unless the implementation's own status said it saw the replica healthy.
OBSERVABLE = 1.0


@dataclass
class _Replica:
    """What the G1 judgement remembers of one gang replica while it replays the history."""

    healthy: set[str] | None = None  # its scheduled pods when it was last seen healthy
    since: float | None = None  # when its current healthy stretch began
    stretch: set[str] = field(default_factory=set)  # its scheduled pods in that stretch
    said_before: bool = False  # its status already said healthy when that stretch began
    began: Entry | None = None  # where its current regression began
    breached: bool = False  # the breach was True at some moment of that regression
    judged: bool = False  # that regression was counted (its breach showed in time)

    def follow(self, scheduled: set[str], minimum: int, breached: bool, seen: bool,
               entry: Entry) -> None:
        """``seen``: the implementation's status says the replica is healthy. A status that
        already said so when the stretch began is an earlier stretch's, and proves nothing."""
        said = seen and not self.said_before
        if self.since is not None and (said or entry.mono - self.since >= OBSERVABLE):
            self.healthy = self.stretch  # healthy long enough, or said to be, to have been seen
        if self.healthy is not None and not self.healthy & scheduled:
            self.healthy = None  # every pod it was healthy with is gone: it starts over
        if len(scheduled) >= minimum:
            if self.since is None:
                self.since, self.said_before = entry.mono, seen
            self.stretch = scheduled
        else:
            self.since = None
        if not seen:
            self.said_before = False  # whatever it says from now on, it says anew
        if self.healthy is None or not 0 < len(scheduled) < minimum:
            self.began, self.judged = None, False
        elif self.began is None:
            self.began, self.breached = entry, breached
        else:
            self.breached = self.breached or breached

    def due(self, at: float, latency: float) -> bool:
        """Its regression has lasted ``latency`` by ``at`` with no breach: undetected."""
        return self.began is not None and not self.breached and at >= self.began.mono + latency


def regressions_breached(entries: Iterable[Entry], gang: Gang, latency: float, now: float,
                         name: str = "regression_detected") -> Verdict:
    """G1 over the whole history: whenever a gang replica that had been healthy (scheduled ≥
    minAvailable for ``OBSERVABLE`` seconds or more, or for less while the implementation's status
    said so, since its pods were last all replaced) has
    0 < scheduled < minAvailable for ``latency`` seconds on end, its breach condition is True at
    some moment of those seconds.

    A replica whose healthy pods are all gone starts over (a termination recycles it; one that
    never becomes healthy again is not judged). A regression is judged when its breach shows
    (in time), or when it has lasted ``latency`` without one (by the next entry, or ``now``);
    one that ends sooner with no breach is not judged."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    reads = frozenset({*gang.resources, "pods"})
    replicas: dict[int, _Replica] = {}
    judged = 0
    for entry, state in replay(entries):
        for group, replica in replicas.items():  # a regression that lasted until this entry
            if replica.due(entry.mono, latency):
                return _undetected(name, gang, group, replica.began, latency, origin, reads,
                                   entries)
        if entry.resource not in reads or entry.namespace != gang.namespace:
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
                           gang.reported_healthy(state, group), entry)
            if replica.began is not None and replica.breached and not replica.judged:
                judged, replica.judged = judged + 1, True
    for group, replica in replicas.items():
        if replica.due(now, latency):
            return _undetected(name, gang, group, replica.began, latency, origin, reads, entries)
    summary = (f"{judged} regressions of gang {gang.name} below minAvailable, each breached "
               f"within {latency:g}s" if judged else
               f"no replica of gang {gang.name} regressed below minAvailable for {latency:g}s "
               "after being healthy")
    return Verdict(name, PASS, summary, [], origin, subjects=judged, reads=reads)


def _undetected(name: str, gang: Gang, group: int, began: Entry, latency: float,
                origin: float, reads: frozenset[str], entries: list[Entry]) -> Verdict:
    """The witness: the change that began the regression, and the last record of the object
    that holds the replica's breach condition by the window's end (its condition not True)."""
    holder = ((gang.child["resource"]["plural"], gang.namespace, gang.child_name(group))
              if gang.child else (gang.resource, gang.namespace, gang.name))
    last = [e for e in entries if e.kind == WATCH and e.key == holder
            and e.mono <= began.mono + latency][-1:]
    return Verdict(name, VIOLATED, f"group {group} of gang {gang.name} had been healthy, then "
                   f"had fewer scheduled pods than minAvailable (but some) for {latency:g}s "
                   f"from +{began.mono - origin:.3f}s, and its breach condition never turned "
                   "True", distinct([began, *last]), origin, subjects=1, by_absence=True,
                   window=(began.mono, began.mono + latency), reads=reads)



def _gang(p: Params) -> Gang:
    return Gang(**p["gang"])


def _actor(p: Params) -> Callable[[str], bool] | None:
    return actor(p["actor"], exact=True) if p.get("actor") else None


@check("termination_timed", "Every time a gang replica's breach has stayed True for the "
       "termination delay, all the pods it had then are gone within delay + bound (deleted by "
       "the implementation, or by the garbage collector after it deleted their owner).",
       audit=True)
def _termination_timed(history: History, p: Params) -> Verdict:
    return termination_timed(history.entries, _gang(p), p["group"], p["delay"],
                             p["latency"], actor(p["actor"], exact=True))


@check("recycled_after_delay", "Every recycle of a gang replica (each of its pods deleted by "
       "the implementation, or by the garbage collector after it deleted their owner; by the "
       "audit log) began while its breach condition was True, at least the termination delay "
       "after it turned True.", audit=True)
def _recycled_after_delay(history: History, p: Params) -> Verdict:
    return recycled_after_delay(history.entries, _gang(p), p["delay"],
                                actor(p["actor"], exact=True))


@check("at_most_terminations", "A gang is terminated at most a given number of times (a "
       "replica's every pod deleted by the implementation, or by the garbage collector after "
       "it deleted their owner; by the audit log); for a gang left to a gang scheduler to bind "
       "whole, a recycle that followed a binding in part is the setup's only with the facts "
       "recorded that show it.", audit=True)
def _at_most_terminations(history: History, p: Params) -> Verdict:
    return at_most_terminations(history.entries, _gang(p), p["limit"], _actor(p),
                                p.get("delay"))


@check("one_warning_per_drop", "One scheduled-zero warning per drop of a gang replica's "
       "scheduled pods to zero (a shortfall once the events API's series began is not known).")
def one_warning_per_drop(history: History, p: Params) -> Verdict:
    return one_warning_per_drop_to_zero(history.entries, _gang(p), p["group"])


@check("group_never_more_than", "A gang replica never has more live pods than a limit; for a "
       "gang left to a gang scheduler to bind whole, an excess of a recycle the setup is shown "
       "to have caused (a binding in part, by the audit log) is not judged.", audit=True)
def _group_never_more_than(history: History, p: Params) -> Verdict:
    return group_never_more_than(history.entries, _gang(p), p["group"], p["limit"],
                                 _actor(p), p.get("delay"))


@check("regression_detected", "Whenever a gang replica that had been healthy for 1 s has fewer "
       "scheduled pods than minAvailable, but some, for L seconds on end, its breach condition "
       "was True at some moment of them.")
def regression_detected(history: History, p: Params) -> Verdict:
    return regressions_breached(history.entries, _gang(p), p["latency"], p["now"])


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
