"""What happened to a gang, computed once from the history model for G1-G9 to rule on: each
replica's breaches (the stretches its breach condition was True, on the cluster's clock), each
recycle (a run of the implementation's deletions that took every pod a replica had, by the
audit log, each deletion by the life it removed), and, for a gang left to a gang scheduler to
bind whole, the facts that make a recycle the setup's (a replica bound in part by a scheduler
that is not one)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aftershock.checks.attribution import cascade_began, done_by
from aftershock.concepts import get_path
from aftershock.concepts.gang import Gang
from aftershock.history import INF, Action, Change, History, Life, Span, seconds
from aftershock.history.state import selects

STAMP = 1.0  # a condition's lastTransitionTime is whole seconds


def gang_lives(history: History, gang: Gang, group: int | str | None = None) -> list[Life]:
    """The gang's pod lives (of one replica, with ``group``), first made first."""
    label = gang.mapping["group_label"]
    selector = gang.selector()
    found = []
    for life in history.lives_of("pods", gang.namespace):
        latest = life.latest or {}
        if not life.ever(lambda obj: selects(selector, obj)):
            continue
        if group is not None and _labels(latest).get(label) != str(group):
            continue
        found.append(life)
    return found


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def group_of(gang: Gang, life: Life) -> str | None:
    return _labels(life.latest or {}).get(gang.mapping["group_label"])


@dataclass
class Breach:
    """One stretch of recorded states in which a replica's breach condition was True."""

    began: Change  # the first recorded state that showed it True
    since: float | None  # its lastTransitionTime (the API server's clock, wall), if it has one
    ended: Change | None = None  # the first recorded state that no longer did

    def going_on(self, moment: float) -> bool | None:
        """Whether it was going on at ``moment`` (the recorder's scale): True or False for
        certain, None when a span of its beginning or end holds the moment."""
        began = self.began.at.by(moment)
        ended = None if self.ended is None else self.ended.at.by(moment)
        if began is False or ended is True:
            return False
        if began is True and (self.ended is None or ended is False):
            return True
        return None


def breaches(history: History, gang: Gang, group: int) -> list[Breach]:
    """Every stretch of the history in which group ``group``'s breach condition was True, in
    the cluster's order. A new transition time while it stays True (a change the watch folded)
    starts the next stretch."""
    found: list[Breach] = []
    current: Breach | None = None
    for change, state in history.replay(gang.resources):
        if change.namespace != gang.namespace:
            continue
        condition = gang.breach(state, group)
        breached = bool(condition) and condition.get("status") == "True"
        since = _stamp(condition.get("lastTransitionTime")) if breached else None
        if current is not None and (not breached or since != current.since):
            current.ended, current = change, None
        if breached and current is None:
            current = Breach(change, since)
            found.append(current)
    return found


def _stamp(text: str | None) -> float | None:
    value = seconds(text or "")
    return None if value != value else value


def breach_at(found: list[Breach], moment: float) -> tuple[Breach | None, bool]:
    """The stretch going on at ``moment``, and whether for certain (False: it may have been,
    or one that may have been is the nearest)."""
    maybe: Breach | None = None
    for breach in reversed(found):
        on = breach.going_on(moment)
        if on is True:
            return breach, True
        if on is None and maybe is None:
            maybe = breach
    return maybe, False


@dataclass
class Due:
    """A breach that stayed True for the termination delay, and the pods it was due for."""

    breach: Breach
    pods: set[str]  # the lives live in the group when the delay ran out
    unsure: set[str]  # lives that may or may not have been


def due(history: History, gang: Gang, group: int,
        delay: float) -> tuple[list[Due], Breach | None, int, Breach | None]:
    """Each breach with a transition time that stayed True for ``delay``, with the pods the
    group had when the delay ran out (on the cluster's clock); a breach still waiting out its
    delay when the history ends; how many that ran out were of a replica made anew that never
    had its minimum scheduled (not due: G5's); and one whose end may or may not have come
    before its delay ran out. A breach that ended sooner is a flicker (Grove's, while the
    default scheduler binds a new replica's pods one at a time), not one that is due."""
    offset = history.offset
    starting = _starting(history, gang, group)
    lives = gang_lives(history, gang, group)
    found: list[Due] = []
    waiting: Breach | None = None
    unsure: Breach | None = None
    skipped = 0
    for breach in breaches(history, gang, group):
        if breach.since is None:
            continue
        ran_out = breach.since + delay + offset
        lasted = True if breach.ended is None else (
            True if breach.ended.lo > ran_out else False if breach.ended.hi <= ran_out
            else None)
        if lasted is False:
            continue
        if breach.ended is None and history.end < ran_out:
            if id(breach.began) not in starting:
                waiting = breach
            continue
        if id(breach.began) in starting:
            skipped += 1
            continue
        if lasted is None:
            unsure = unsure or breach
            continue
        moment = Span.at(ran_out)
        pods, maybe = set(), set()
        for life in lives:
            live = life.holds(moment, lambda obj: obj is not None and not (
                (obj.get("metadata") or {}).get("deletionTimestamp")))
            if live is True:
                pods.add(life.id)
            elif live is None:
                maybe.add(life.id)
        found.append(Due(breach, pods, maybe))
    return found, waiting, skipped, unsure


def _starting(history: History, gang: Gang, group: int) -> set[int]:
    """The breaches (by the id of the change that began each) of an incarnation of the replica
    (its status object, made anew by a recycle) that never had its minimum scheduled before it
    breached: G5 forbids ending it, so none is due."""
    healthy: set[str] = set()
    found: set[int] = set()
    current: tuple[float | None, bool] | None = None
    reads = {*gang.resources, "pods"}
    for change, state in history.replay(reads):
        if change.namespace != gang.namespace:
            continue
        incarnation = gang.incarnation(state, group)
        if incarnation is not None and incarnation[1] >= incarnation[2]:
            healthy.add(incarnation[0])
        if change.resource not in gang.resources:
            continue
        condition = gang.breach(state, group)
        breached = bool(condition) and condition.get("status") == "True"
        since = _stamp(condition.get("lastTransitionTime")) if breached else None
        if current is not None and (not breached or since != current[0]):
            current = None
        if breached and since is not None and current is None:
            fresh = incarnation is not None and incarnation[0] not in healthy
            current = (since, fresh)
            if fresh:
                found.add(id(change))
    return found


# Within one termination the implementation's deletions follow each other closely (100 pods
# at 50 writes a second: 20 ms apart); a pause longer than this ends the run.
BURST = 2.0


@dataclass
class Recycle:
    """One termination of a gang replica: a run of deletions that took every pod it had."""

    began: Action  # its first deletion
    had: set[str]  # the replica's pod lives when it began
    deleted: set[str] = field(default_factory=set)
    last: float = 0.0  # when it last deleted
    since: float = 0.0  # when it began: its first deletion, or the deletion of their owner
    group: str | None = None
    born: float = 0.0  # when the first of the pods it had was made (or first recorded)

    @property
    def whole(self) -> bool:
        return bool(self.had) and self.had <= self.deleted


def recycles(history: History, gang: Gang, is_actor: Callable[[str], bool]) -> list[Recycle]:
    """The gang's terminations as the audit log shows them: a run of the implementation's
    deletions of one gang replica's pods that removed every pod the replica had when the run
    began. A run is a burst: a deletion more than BURST seconds after the previous one, or of a
    pod created after the run began (a replacement), starts the next. Times are the audit
    log's: the API server's clock. Deleting one finished or surplus pod is no termination.

    The pods a replica had when a run began are those the audit log shows made and not yet
    deleted, and those the watch shows live then (an audit log that missed the creates would
    otherwise make one surplus pod the whole replica). Every deletion counts by the life it
    removed: a name used again is another pod."""
    lives = {life.id: life for life in gang_lives(history, gang)}
    groups = {lid: group_of(gang, life) for lid, life in lives.items()}
    seen: dict[str, tuple[float, float]] = {}  # a life → (certainly live from, going from)
    for lid, life in lives.items():
        going = life.going
        seen[lid] = (life.first.hi, going.lo if going is not None else INF)
    created: dict[str, float] = {}
    gone: set[str] = set()
    live: dict[str | None, set[str]] = {}
    runs: dict[str | None, Recycle] = {}
    done: list[Recycle] = []
    theirs, cascade = done_by(history, is_actor), cascade_began(history, is_actor)
    for action in history.actions:
        if action.resource != "pods" or action.namespace != gang.namespace or \
                action.life is None or action.life.id not in lives:
            continue
        lid = action.life.id
        group = groups[lid]
        if action.creates:
            created[lid] = action.hi
            live.setdefault(group, set()).add(lid)
        elif action.deletes:
            run = runs.get(group)
            if theirs(action):
                if run is None or created.get(lid, -1.0) > run.since or \
                        action.hi - run.last > BURST:
                    done += [run] if run else []
                    # A cascade began when the owner was deleted: pods made since then (Grove
                    # makes the new replica's before the collector removes the old) are not
                    # the replica terminated
                    since = min(action.hi, cascade(action) or action.hi)
                    watched = {other for other, (first, going) in seen.items()
                               if groups[other] == group and first <= since < going}
                    had = ({other for other in live.get(group, ())
                            if created.get(other, -1.0) <= since} | watched) - gone
                    had.add(lid)
                    born = min(min(created.get(n, since), lives[n].first.lo) for n in had)
                    run = runs[group] = Recycle(action, had, since=since, group=group,
                                                born=born)
                run.deleted.add(lid)
                run.last = action.hi
            live.setdefault(group, set()).discard(lid)
            gone.add(lid)
    return sorted((run for run in [*done, *runs.values()] if run.whole),
                  key=lambda run: run.began.hi)


@dataclass
class Partial:
    """A replica the scheduler bound in part before it was recycled."""

    peak: int  # the most of its pods bound at once
    made: set[str]  # its pod lives, made since its previous recycle began (or at all)
    minimum: int
    binders: set[str]  # who bound them (by the audit log)

    def text(self, group: str | None) -> str:
        return (f"replica {group}: at most {self.peak} of its {len(self.made)} pods bound at "
                f"once, minAvailable {self.minimum}")


def bound_in_part(history: History, gang: Gang, runs: list[Recycle]) -> dict[int, Partial]:
    """The recycles in ``runs`` (by position) of a replica whose pods, made since its previous
    recycle began (or at all), the scheduler bound some of but never minAvailable at once: a
    state only a scheduler that binds pod by pod leaves, never a gang scheduler (it binds
    minAvailable of a replica's pods at once, or none). By the audit log: creates, the
    scheduler's bindings, deletions, on the API server's clock, each of the life it touched."""
    minimum = _latest_value(history, gang, gang.mapping["min_available_path"])
    minimum = int(minimum) if isinstance(minimum, int | float) else None
    actions = [a for a in history.actions if a.resource == "pods" and a.ok
               and a.namespace == gang.namespace and a.life is not None]
    out: dict[int, Partial] = {}
    before: dict[str | None, float] = {}
    for index, run in enumerate(runs):
        since, before[run.group] = before.get(run.group, float("-inf")), run.since
        mine = {life.id for life in gang_lives(history, gang, run.group)}
        made = {a.life.id for a in actions if a.creates and since < a.hi <= run.since
                and a.life.id in mine}
        bound: set[str] = set()
        binders: set[str] = set()
        peak = 0
        for action in actions:
            if action.hi > run.began.hi:
                break
            lid = action.life.id
            if lid in made and action.binds:
                bound.add(lid)
                binders.add(action.actor)
                peak = max(peak, len(bound))
            elif action.verb == "delete" and not action.subresource:
                bound.discard(lid)
        if minimum and 0 < peak < minimum:
            out[index] = Partial(peak, made, minimum, binders)
    return out


def excuses(history: History, gang: Gang, runs: list[Recycle],
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
    delay = delay if delay is not None else termination_delay(history, gang)
    for index, part in bound_in_part(history, gang, runs).items():
        run = runs[index]
        facts = [_breach_fact(history, gang, run, delay),
                 _unschedulable_fact(history, run, part),
                 _scheduler_fact(history, part)]
        missing = [text for held, text in facts if not held]
        if missing:
            refused[index] = f"{part.text(run.group)}, but {'; '.join(missing)}"
        else:
            excused[index] = "; ".join([part.text(run.group), *(text for _, text in facts)])
    return excused, refused


def _breach_fact(history: History, gang: Gang, run: Recycle,
                 delay: float | None) -> tuple[bool, str]:
    if not (run.group or "").isdigit():
        return False, "its pods carry no replica index to read its breach condition by"
    breach, certain = breach_at(breaches(history, gang, int(run.group)), run.since)
    if breach is None or not certain:
        return False, "no breach of it was recorded going on when it was recycled"
    if delay is None:
        return False, "its termination delay is not known"
    offset = history.offset
    # when it turned True: its transition time, unless that says later than it was written
    turned = breach.began.hi - offset if breach.since is None else \
        min(breach.since, breach.began.hi - offset)
    began = run.since - offset
    if began - turned < delay:
        return False, (f"its breach was True for {began - turned:.2f}s before the recycle, "
                       f"less than its {delay:g}s termination delay")
    return True, (f"its breach True from +{breach.began.hi - history.origin:.3f}s, "
                  f"{began - turned:.2f}s before the recycle (delay {delay:g}s)")


def _unschedulable_fact(history: History, run: Recycle, part: Partial) -> tuple[bool, str]:
    for lid in sorted(part.made):
        life = history.life(lid) if lid in history.lives else None
        for change in (life.changes if life else ()):
            if change.hi <= run.began.lo and _unschedulable(change.after or {}):
                return True, f"{change.ref} Unschedulable at +{change.hi - history.origin:.3f}s"
    return False, "no pod of it was recorded Unschedulable"


def _unschedulable(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               and c.get("reason") == "Unschedulable"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _scheduler_fact(history: History, part: Partial) -> tuple[bool, str]:
    schedulers = history.schedulers
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
    asked = {(((history.lives[lid].latest or {}).get("spec") or {}).get("schedulerName")
              or "default-scheduler") for lid in part.made if lid in history.lives}
    named = {by_user[user]["name"] for user in part.binders}
    if not asked <= named:
        return False, (f"its pods asked for {', '.join(sorted(asked - named))}, which did not "
                       "bind them")
    shown = "; ".join(f"bound by {user}: {by_user[user]['name']}, {by_user[user]['by']}"
                      for user in sorted(part.binders))
    return True, shown


DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _latest_value(history: History, gang: Gang, path: str) -> Any:
    """What the gang's object last said at ``path`` (None: never recorded there)."""
    lives = history.lives_of(gang.resource, gang.namespace, gang.name)
    for life in reversed(lives):
        obj = life.latest
        if obj is not None:
            return get_path(obj, path)
    return None


def termination_delay(history: History, gang: Gang) -> float | None:
    """The gang's termination delay as last recorded on its object (seconds, or a Go duration
    where the profile says so), or None."""
    path = gang.mapping.get("termination_delay_path")
    if not path:
        return None
    value = _latest_value(history, gang, path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        parts = DURATION.findall(value)
        if parts and "".join(a + u for a, u in parts) == value:
            return sum(float(a) * UNITS[u] for a, u in parts)
    return None
