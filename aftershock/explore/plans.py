"""Test plans: one precise perturbation each, anchored on an event of the reference runs, and
the pruning of plans that cannot change the outcome (as Sieve prunes).

- stale: the implementation's watch of a resource stalls at its n-th event of a type;
- unobserved: it misses some seconds of events from there, then re-lists;
- intermediate: it is killed and restarted right after its n-th write of a kind;
- node: a node is drained between two steps of the workload.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from aftershock.bdd.steps.watches import RESOURCE_WORDS
from aftershock.explore.trace import Trace
from aftershock.explore.workload import Workload
from aftershock.faults.anchors import ordinal

KINDS = ("stale", "intermediate", "unobserved", "node")
ACTED_WITHIN = 1.0  # a write this soon after an event is taken as the implementation's answer
MAX_PER_KIND = 40  # anchors per (resource, type) or (resource, verb)


@dataclass(frozen=True)
class Plan:
    kind: str
    step: str  # the step that injects it, as a scenario would say it
    after: int  # inserted after this workload step
    anchor: str  # short, for progress lines and file names
    differential: bool = True  # a node plan changes the outcome by design: no E1/E2

    @property
    def slug(self) -> str:
        return f"{self.kind}-{self.anchor}".replace(" ", "-").replace("#", "")


@dataclass
class Plans:
    plans: list[Plan] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)  # why → how many

    def prune(self, why: str) -> None:
        self.pruned[why] = self.pruned.get(why, 0) + 1


def words(resource: str, kinds: dict[str, str]) -> str | None:
    """The word a step uses for a resource ('pod', a custom resource's kind), or None."""
    named = {plural: word for word, plural in RESOURCE_WORDS.items()}
    return kinds.get(resource) or named.get(resource)


def generate(workload: Workload, traces: Sequence[Trace], nodes: Sequence[str],
             kinds: dict[str, str], stall: Sequence[float] = (4.0,),
             miss: Sequence[float] = (3.0,), seed: int = 0) -> Plans:
    """Every plan the reference traces admit, interleaved by kind, shuffled within a kind by
    ``seed``: a stale and an unobserved plan per event anchor and per duration in ``stall``
    and ``miss``. ``kinds`` maps a custom resource's plural to the word its steps use."""
    out = Plans()
    by_kind: dict[str, list[Plan]] = {kind: [] for kind in KINDS}
    at = workload.started
    for resource, type, nth in _event_anchors(traces, out, kinds):
        what = words(resource, kinds)
        anchor = f"{resource}-{type}#{nth}"
        for seconds in stall:
            by_kind["stale"].append(Plan(
                "stale", f"Given the {what} watch of the implementation stalls at its "
                f"{ordinal(nth)} {type} event for {seconds:g} seconds", at,
                _timed(anchor, seconds, stall)))
        for seconds in miss:
            by_kind["unobserved"].append(Plan(
                "unobserved", f"Given the {what} watch of the implementation misses "
                f"{seconds:g} seconds of events from its {ordinal(nth)} {type} event, then "
                "relists", at, _timed(anchor, seconds, miss)))
    for resource, verb, nth in _write_anchors(traces, out, kinds):
        what = words(resource, kinds)
        by_kind["intermediate"].append(Plan(
            "intermediate", f"Given the implementation is killed and restarted right after its "
            f"{ordinal(nth)} {what} {verb}", at, f"{resource}-{verb}#{nth}"))
    for index in workload.actions()[:-1] or workload.actions():
        for node in nodes:
            by_kind["node"].append(Plan("node", f"When I drain node {node} ignoring DaemonSets "
                                        "and deleting emptyDir data", index,
                                        f"drain-{node}-after-step{index}", differential=False))
            by_kind["node"].append(Plan("node", f"When I delete node {node} without draining "
                                        "it", index, f"delete-{node}-after-step{index}",
                                        differential=False))
    rng = random.Random(seed)
    for plans in by_kind.values():
        rng.shuffle(plans)
    while any(by_kind.values()):
        for kind in KINDS:
            if by_kind[kind]:
                out.plans.append(by_kind[kind].pop(0))
    return out


def _timed(anchor: str, seconds: float, durations: Sequence[float]) -> str:
    """The anchor, with the duration when there are several."""
    return anchor if len(durations) == 1 else f"{anchor}-{seconds:g}s"


def _nameable(keys: set, kinds: dict[str, str], counts: list, out: Plans) -> list:
    """The keys whose resource a step can name; the anchors of the others are pruned."""
    kept = []
    for key in sorted(keys):
        if words(key[0], kinds) is None:
            for _ in range(max(c.get(key, 0) for c in counts)):
                out.prune("a resource no step names")
        else:
            kept.append(key)
    return kept


def _event_anchors(traces: Sequence[Trace], out: Plans,
                   kinds: dict[str, str]) -> list[tuple[str, str, int]]:
    """(resource, type, n) for the n-th event every reference run saw, that some run acted on
    within ACTED_WITHIN, and that is not followed by the same write as the anchor before it."""
    counts = [trace.counts() for trace in traces]
    # An implementation that writes nothing through the API (a node-side driver) answers in
    # ways the trace cannot see: none of its events is pruned as never acted on.
    writes = any(trace.writes for trace in traces)
    found = []
    for key in _nameable(set().union(*counts), kinds, counts, out):
        seen = min(c.get(key, 0) for c in counts)
        for _ in range(max(c.get(key, 0) for c in counts) - seen):
            out.prune("not seen in every reference run")
        previous: tuple | None = None
        for nth in range(1, seen + 1):
            answers = tuple(_answer(trace, *key, nth) for trace in traces)
            if writes and all(answer is None for answer in answers):
                out.prune("never acted on")
                continue
            if writes and answers == previous:
                out.prune("the same write answers the anchor before it")
                continue
            previous = answers
            if sum(1 for r, t, _ in found if (r, t) == key) >= MAX_PER_KIND:
                out.prune(f"over {MAX_PER_KIND} anchors of one kind")
                continue
            found.append((*key, nth))
    return found


def _answer(trace: Trace, resource: str, type: str, nth: int) -> int | None:
    event = trace.event(resource, type, nth)
    write = trace.first_write_after(event.mono, ACTED_WITHIN) if event else None
    return write.nth if write else None


def _write_anchors(traces: Sequence[Trace], out: Plans,
                   kinds: dict[str, str]) -> list[tuple[str, str, int]]:
    """(resource, verb, n) for the n-th write of its kind in every reference run."""
    counts = [trace.write_counts() for trace in traces]
    found = []
    for key in _nameable(set().union(*counts), kinds, counts, out):
        seen = min(c.get(key, 0) for c in counts)
        for _ in range(max(c.get(key, 0) for c in counts) - seen):
            out.prune("not seen in every reference run")
        for nth in range(1, min(seen, MAX_PER_KIND) + 1):
            found.append((*key, nth))
        for _ in range(seen - min(seen, MAX_PER_KIND)):
            out.prune(f"over {MAX_PER_KIND} anchors of one kind")
    return found
