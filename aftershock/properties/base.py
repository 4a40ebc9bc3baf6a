"""Properties as first-class objects.

A *check* is a pure function of a recorded history and plain-data parameters (never_more_than,
eventually, termination_timed, ...). A *property* (R1, G2, ... and every check under its own
name) has an id, the sentence it stands for, the concepts and capabilities it needs, and the
checks that may judge it. A step names property ids; the registry judges, and every verdict goes
through the one rule (``rule.settle``), so no check decides alone when to answer "unknown".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from aftershock.checks.verdict import NOT_APPLICABLE, UNKNOWN, Verdict
from aftershock.history import Entry, History, collector_paused
from aftershock.machine.capabilities import Capability
from aftershock.properties.rule import settle

Params = dict[str, Any]
# A judgement's parameter saying why its properties do not apply here (the profile's word): it is
# not judged, and is NOT APPLICABLE with that reason, again when a saved run is judged again.
NOT_APPLICABLE_BECAUSE = "not_applicable"

# Each family's title, in the order the catalogue lists them.
FAMILIES = {
    "R": "replica groups under a stale cache",
    "G": "gang workloads and termination delay",
    "B": "gang schedulers: a pod group bound whole, onto nodes that take it, evicted whole, "
         "a queue within its limit",
    "S": "stateful storage scale-down",
    "N": "per-node bookkeeping outlives its node",
    "D": "dynamic resource allocation",
    "E": "explore's oracles: a run against its unperturbed reference runs",
    "harness": "the generic checks (each judges the properties above that accept it)",
}



@dataclass(frozen=True)
class Judgement:
    """What a step asks to be judged: a check and its parameters, all plain data (so a saved
    run can be judged again)."""

    check: str
    params: Params = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    name: str
    statement: str
    judge: Callable[[History, Params], Verdict]
    audit: bool = False  # reads the audit log (it is read up to now before judging)


@dataclass(frozen=True)
class Property:
    id: str
    family: str  # R, G, S, N, D, or "harness" for the generic checks
    statement: str
    checks: tuple[str, ...]
    concepts: tuple[str, ...] = ()  # any one of them
    capabilities: tuple[str, ...] = ()

    def judge(self, history: Sequence[Entry] | History, params: Params) -> Verdict:
        """``params`` names its check: {"check": "never_more_than", ...}."""
        rest = {k: v for k, v in params.items() if k != "check"}
        return judge([self.id], Judgement(params["check"], rest), history)


class UnknownProperty(LookupError):
    pass


CHECKS: dict[str, Check] = {}
PROPERTIES: dict[str, Property] = {}


def check(name: str, statement: str, audit: bool = False):
    """Register a check; it is also a property of the harness family under its own name."""
    def register(func: Callable[[History, Params], Verdict]):
        CHECKS[name] = Check(name, statement, func, audit)
        PROPERTIES.setdefault(name, Property(name, "harness", statement, (name,)))
        return func
    return register


def prop(id: str, statement: str, checks: Iterable[str], concepts: Iterable[str] = (),
         capabilities: Iterable[str] = ()) -> Property:
    for name in capabilities:
        Capability(name)  # a typo is an import error, not a silent promise
    found = Property(id, id.rstrip("0123456789"), statement, tuple(checks), tuple(concepts),
                     tuple(capabilities))
    PROPERTIES[id] = found
    return found


def get(id: str) -> Property:
    if id not in PROPERTIES:
        raise UnknownProperty(id)
    return PROPERTIES[id]


def all_properties() -> list[Property]:
    return list(PROPERTIES.values())


def problem(ids: Iterable[str], check_name: str | None) -> str | None:
    """Why a step judged by ``check_name`` may not name these properties, or None."""
    for id in ids:
        if id not in PROPERTIES:
            return f"unknown property '{id}'; known: {', '.join(sorted_ids(PROPERTIES))}"
        if check_name is None:
            return f"property {id} named on a step that judges nothing"
        accepted = PROPERTIES[id].checks
        if check_name not in accepted:
            return (f"property {id} is not judged by {check_name} (it is judged by "
                    f"{', '.join(accepted)})")
    return None


def judge(ids: Sequence[str], judgement: Judgement,
          history: Sequence[Entry] | History) -> Verdict:
    """Judge ``judgement`` for the properties ``ids`` over ``history``, through the one rule."""
    history = history if isinstance(history, History) else History(history)
    label = ", ".join(ids)
    wrong = problem(ids, judgement.check)
    if wrong:
        raise UnknownProperty(wrong)
    because = judgement.params.get(NOT_APPLICABLE_BECAUSE)
    if because:
        return Verdict(label, NOT_APPLICABLE, str(because), [], history.origin, subjects=0,
                       reads=frozenset())
    try:
        with collector_paused():
            verdict = CHECKS[judgement.check].judge(history, judgement.params)
    except Exception as exc:  # a judgement that cannot be made is not a verdict
        return Verdict(label, UNKNOWN, f"cannot judge {judgement.check}: {exc!r}", [],
                       history.origin)
    return replace(settle(verdict, history), property=label)


def sorted_ids(ids: Iterable[str]) -> list[str]:
    def key(id: str) -> tuple[int, str, int]:
        found = re.fullmatch(r"([A-Z]+)([0-9]+)", id)
        return (0, found.group(1), int(found.group(2))) if found else (1, id, 0)
    return sorted(ids, key=key)
