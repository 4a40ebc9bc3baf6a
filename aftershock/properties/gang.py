"""G: gang workloads and termination delay (CONFORMANCE.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from aftershock.checks.attribution import actor, cascade_began, done_by, pod_deleted
from aftershock.checks.invariants import never_more_than
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.sut.concepts import get_path
from aftershock.sut.gang import Gang
from aftershock.timeline.entry import AUDIT, AUDIT_SYNC, WATCH, Entry
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


def termination_timed(entries: Iterable[Entry], gang: Gang, group: int, delay: float,
                      latency: float, is_actor: Callable[[str], bool],
                      name: str = "termination_timed") -> Verdict:
    """G2/G3: once the breach has stayed True for ``delay`` since it turned True (its
    lastTransitionTime), the implementation deleted no pod of the group before then, and by
    ``delay + latency`` every pod the group had when the delay ran out is gone. A breach that
    ended sooner is not the one judged. Deletions are attributed by the audit log."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    breach_entry, since, due_pods, before = None, None, None, set()
    for entry, state in replay(entries):
        if since is not None and due_pods is None and entry.wall >= since + delay:
            # The state just before the first change recorded after the delay ran out: the
            # change itself (a pod made then) was not there when it ran out.
            due_pods = before
        if due_pods is not None:
            break
        condition = gang.breach(state, group)
        breached = bool(condition) and condition.get("status") == "True"
        if breached and breach_entry is None:
            breach_entry, since = entry, stamp(condition.get("lastTransitionTime"))
        elif not breached and breach_entry is not None:
            # It ended before its delay ran out: a flicker (Grove's, while the default
            # scheduler binds a new replica's pods one at a time), not the breach that stays.
            breach_entry, since, before = None, None, set()
        if since is not None:
            before = {p["metadata"]["name"] for p in gang.live_pods(state, group)}
    reads = frozenset({*gang.resources, "pods", "audit"})
    if breach_entry is None or since is None:
        # The precondition never held: the scenario, not the implementation, is at fault
        # (a regression that G1 would judge is not this judgement's to blame).
        return Verdict(name, UNKNOWN, f"the precondition never held: group {group} of gang "
                       f"{gang.name} never had its breach condition True with a transition "
                       "time", [], origin, subjects=0, reads=reads)
    if due_pods is None:
        return Verdict(name, UNKNOWN, f"the history ends before the {delay:g}s termination "
                       "delay ran out", [breach_entry], origin, reads=reads)
    deleting = pod_deleted(gang.namespace, group_pod_names(entries, gang, group))
    theirs = done_by(entries, is_actor)
    mine = [e for e in entries if e.kind == AUDIT and deleting(e) and theirs(e)
            and e.wall >= since]
    early = [e for e in mine if e.wall < since + delay]
    if early:
        return Verdict(name, VIOLATED, f"group {group} was terminated "
                       f"{early[0].wall - since:.2f}s after its breach, earlier than the "
                       f"{delay:g}s termination delay", [breach_entry, early[0]], origin,
                       subjects=len(due_pods), reads=reads)
    # lastTransitionTime is whole seconds: the breach turned True within the second after it.
    # Late is certain only past the deadline counted from that second's end.
    deadline = since + delay + latency
    left = sorted(due_pods - {e.name for e in mine if e.wall <= deadline + STAMP})
    if left:
        return Verdict(name, VIOLATED, f"{len(left)} of the {len(due_pods)} pods of group "
                       f"{group} were not terminated within {delay + latency:g}s of the breach "
                       f"(e.g. pod/{gang.namespace}/{left[0]})", [breach_entry], origin,
                       subjects=len(due_pods), by_absence=True, reads=reads)
    unsure = sorted(due_pods - {e.name for e in mine if e.wall <= deadline})
    if unsure:
        return Verdict(name, UNKNOWN, f"{len(unsure)} of the {len(due_pods)} pods of group "
                       f"{group} went {delay + latency:g}s to {delay + latency + STAMP:g}s "
                       f"after the second its breach is stamped with (e.g. "
                       f"pod/{gang.namespace}/{unsure[0]}): whether that was within "
                       f"{delay + latency:g}s of the breach itself, a whole-second stamp cannot "
                       "say", [breach_entry], origin, subjects=len(due_pods), reads=reads)
    if not mine:
        return Verdict(name, UNKNOWN, f"the precondition never held: group {group} had no pod "
                       "left to terminate when its termination delay ran out", [breach_entry],
                       origin, subjects=0, reads=reads)
    first = min(mine, key=lambda e: e.wall)
    return Verdict(name, PASS, f"group {group} terminated {first.wall - since:.2f}s after its "
                   f"breach (delay {delay:g}s, bound {delay + latency:g}s)",
                   [breach_entry, first], origin, subjects=len(due_pods), reads=reads)


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
    or surplus pod is no termination."""
    group_of: dict[str, str] = {}
    label = gang.mapping["group_label"]
    for entry in entries:
        obj = entry.object or {}
        if entry.kind == WATCH and entry.resource == "pods" and \
                entry.namespace == gang.namespace and selects(gang.selector(), obj):
            group_of[entry.name] = ((obj.get("metadata") or {}).get("labels") or {}).get(label)
    deleting = pod_deleted(gang.namespace, set(group_of))
    audits = sorted((e for e in entries if e.kind == AUDIT and e.resource == "pods"
                     and e.namespace == gang.namespace), key=lambda e: e.mono)
    created: dict[str, float] = {}
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
                    had = {name for name in live.get(group, ())
                           if created.get(name, -1.0) <= since}
                    run = runs[group] = _Recycle(entry, had | {entry.name}, since=since,
                                                 group=group)
                run.deleted.add(entry.name)
                run.last = entry.mono
            live.setdefault(group, set()).discard(entry.name)
    return sorted((run for run in [*done, *runs.values()] if run.whole),
                  key=lambda run: run.began.mono)


def at_most_terminations(entries: Iterable[Entry], gang: Gang, limit: int,
                         is_actor: Callable[[str], bool] | None = None,
                         name: str = "at_most_terminations") -> Verdict:
    """G5/G6: the gang was terminated at most ``limit`` times: by the audit log (deletions by
    the implementation, ``recycles``) when its identity is given, else by its own Events (a
    judgement saved before it was)."""
    entries = list(entries)
    origin = entries[0].mono if entries else 0.0
    if is_actor is not None:
        return _recycled_at_most(entries, gang, limit, is_actor, name)
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


def bound_in_part(entries: list[Entry], gang: Gang, runs: list[_Recycle]) -> dict[int, str]:
    """The recycles in ``runs`` (by position) of a replica whose pods, made since its previous
    recycle began (or at all), the scheduler bound some of but never minAvailable at once: a
    state only a scheduler that binds pod by pod leaves, never a gang scheduler (it binds
    minAvailable of a replica's pods at once, or none). By the audit log: creates, the
    scheduler's bindings, deletions, on the API server's clock."""
    minimum = _min_available(entries, gang)
    audits = sorted((e for e in entries if e.kind == AUDIT and e.resource == "pods"
                     and e.namespace == gang.namespace and e.code in (200, 201)),
                    key=lambda e: e.mono)
    out: dict[int, str] = {}
    before: dict[str | None, float] = {}
    for index, run in enumerate(runs):
        since, before[run.group] = before.get(run.group, float("-inf")), run.since
        mine = _group_pods(entries, gang, run.group)
        made = {e.name for e in audits if e.verb == "create" and not e.subresource
                and since < e.mono <= run.since and e.name in mine}
        bound: set[str] = set()
        peak = 0
        for entry in audits:
            if entry.mono > run.began.mono:
                break
            if entry.name in made and entry.verb == "create" and entry.subresource == "binding":
                bound.add(entry.name)
                peak = max(peak, len(bound))
            elif entry.verb == "delete" and not entry.subresource:
                bound.discard(entry.name)
        if minimum and 0 < peak < minimum:
            out[index] = (f"replica {run.group}: at most {peak} of its {len(made)} pods bound "
                          f"at once, minAvailable {minimum}")
    return out


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
                      is_actor: Callable[[str], bool], name: str) -> Verdict:
    origin = entries[0].mono if entries else 0.0
    runs = _recycles(entries, gang, is_actor)
    found = [run.began for run in runs]
    pods = {e.name for e in entries if e.kind == WATCH and e.resource == "pods"
            and e.namespace == gang.namespace and selects(gang.selector(), e.object or {})}
    reads = frozenset({"pods", "audit"})
    excused = (bound_in_part(entries, gang, runs)
               if gang.mapping.get("binding") == "all_or_nothing" else {})
    counted = [entry for index, entry in enumerate(found) if index not in excused]
    if len(found) > limit and len(counted) <= limit:
        # The precondition of the implementation's design never held here: it leaves binding
        # a replica whole to a gang scheduler, and this cluster's bound part of one.
        how = "; ".join(sorted(set(excused.values())))
        return Verdict(name, UNKNOWN, f"gang {gang.name} was terminated {len(found)} times, "
                       f"{len(excused)} of them after the scheduler bound a replica in part "
                       f"({how}): the profile leaves binding a replica whole to a gang "
                       "scheduler (binding: all_or_nothing), which this cluster does not run",
                       [found[i] for i in excused], origin, subjects=len(pods), reads=reads)
    found = counted
    if len(found) > limit:
        return Verdict(name, VIOLATED, f"gang {gang.name} was terminated {len(found)} times "
                       f"(each a replica's every pod deleted by the implementation), at most "
                       f"{limit} allowed", found[:limit + 1], origin, subjects=len(pods),
                       reads=reads)
    summary = (f"gang {gang.name} was terminated {len(found)} times" if pods else
               f"no pod of gang {gang.name} was recorded")
    return Verdict(name, PASS, summary, found, origin, subjects=len(pods), reads=reads)


def group_never_more_than(entries: Iterable[Entry], gang: Gang, group: int, limit: int,
                          is_actor: Callable[[str], bool] | None = None,
                          name: str = "group_never_more_than") -> Verdict:
    """G8: a gang replica never has more live pods than ``limit``. For a gang that leaves
    binding a replica whole to a gang scheduler (``binding: all_or_nothing``), an excess made of
    the pods of a recycle that followed a partial binding (``bound_in_part``: this cluster's
    scheduler is not the one the design counts on) is UNKNOWN; any other excess stands."""
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
    excused = bound_in_part(entries, gang, runs)
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
    how = "; ".join(sorted(set(excused.values())))
    return Verdict(name, UNKNOWN, f"{verdict.summary}, each time counting the pods of a "
                   f"replica recycled after the scheduler bound it in part ({how}); without "
                   f"them {again.summary}: the profile leaves binding a replica whole to a gang "
                   "scheduler (binding: all_or_nothing), which this cluster does not run",
                   verdict.witness, verdict.origin, subjects=verdict.subjects,
                   reads=frozenset({"pods", "audit"}))


def one_warning_per_drop_to_zero(entries: Iterable[Entry], gang: Gang, group: int,
                                 name: str = "one_warning_per_drop") -> Verdict:
    """G9: as many scheduled-zero warnings as times the group's scheduled pods dropped to 0."""
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
    if len(warnings) != len(drops):
        return Verdict(name, VIOLATED, f"group {group} dropped to zero scheduled pods "
                       f"{len(drops)} times and {len(warnings)} warnings were emitted",
                       distinct(drops + warnings)[:6], origin,
                       subjects=seen, by_absence=True, reads=reads)
    return Verdict(name, PASS, f"{len(drops)} drops to zero, {len(warnings)} warnings",
                   distinct(drops + warnings), origin, subjects=seen, reads=reads)


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


@check("termination_timed", "Once a gang replica's breach has stayed True for the termination "
       "delay, none of its pods was deleted before then and all are gone within delay + bound "
       "(deleted by the implementation, or by the garbage collector after it deleted their "
       "owner).", audit=True)
def _termination_timed(history: History, p: Params) -> Verdict:
    return termination_timed(history.entries, _gang(p), p["group"], p["delay"],
                                   p["latency"], actor(p["actor"], exact=True))


@check("at_most_terminations", "A gang is terminated at most a given number of times (a "
       "replica's every pod deleted by the implementation, or by the garbage collector after "
       "it deleted their owner; by the audit log).", audit=True)
def _at_most_terminations(history: History, p: Params) -> Verdict:
    is_actor = actor(p["actor"], exact=True) if p.get("actor") else None
    return at_most_terminations(history.entries, _gang(p), p["limit"], is_actor)


@check("one_warning_per_drop", "One scheduled-zero warning per drop of a gang replica's "
       "scheduled pods to zero.")
def one_warning_per_drop(history: History, p: Params) -> Verdict:
    return one_warning_per_drop_to_zero(history.entries, _gang(p), p["group"])


@check("group_never_more_than", "A gang replica never has more live pods than a limit; for a "
       "gang left to a gang scheduler to bind whole, an excess of a recycle that followed a "
       "binding in part is not judged (by the audit log).", audit=True)
def _group_never_more_than(history: History, p: Params) -> Verdict:
    is_actor = actor(p["actor"], exact=True) if p.get("actor") else None
    return group_never_more_than(history.entries, _gang(p), p["group"], p["limit"], is_actor)


@check("regression_detected", "Whenever a gang replica that had been healthy for 1 s has fewer "
       "scheduled pods than minAvailable, but some, for L seconds on end, its breach condition "
       "was True at some moment of them.")
def regression_detected(history: History, p: Params) -> Verdict:
    return regressions_breached(history.entries, _gang(p), p["latency"], p["now"])


CONCEPTS = ("gang",)
prop("G1", "A regression is detected: a gang replica that was healthy (for at least 1 s, long "
     "enough to be seen, or for less while its status said so) and then has 0 < scheduled < "
     "minAvailable gets the breach condition within L.",
     ["eventually", "regression_detected"], CONCEPTS, ("destructive_faults",))
prop("G2", "Termination after TD: when the breach stays True for TD, within TD + L every pod of "
     "the gang replica is replaced.", ["termination_timed"], CONCEPTS)
prop("G3", "Never early, never unwarranted: no termination earlier than TD after the breach, "
     "none while the breach is not True.", ["termination_timed", "eventually"], CONCEPTS)
prop("G4", "Minimal blast radius: only the breached gang replica is recycled.",
     ["deleted_by"], CONCEPTS)
prop("G5", "Startup is not churned: a gang that never became healthy is not terminated.",
     ["at_most_terminations"], CONCEPTS)
prop("G6", "No churn loop: at most one recycle per breach episode while capacity stays "
     "withheld.", ["at_most_terminations"], CONCEPTS)
prop("G7", "Recovery: after uncordon, all pods Ready and the breach False within T.",
     ["eventually"], CONCEPTS)
prop("G8", "Replacements continue during TD; live pods never exceed replicas.",
     ["never_more_than", "group_never_more_than"], CONCEPTS)
prop("G9", "One warning event per transition of scheduled pods to zero.",
     ["one_warning_per_drop"], CONCEPTS)
