"""G: gang workloads and termination delay (CONFORMANCE.md)."""

from __future__ import annotations

from aftershock.checks.attribution import actor
from aftershock.checks.verdict import Verdict
from aftershock.properties.base import Params, check, prop
from aftershock.properties.history import History
from aftershock.sut import gang as judge
from aftershock.sut.gang import Gang


def _gang(p: Params) -> Gang:
    return Gang(**p["gang"])


@check("termination_timed", "No pod of a breached gang replica is deleted before the "
       "termination delay has run from the breach, and all are gone within delay + bound.",
       audit=True)
def termination_timed(history: History, p: Params) -> Verdict:
    return judge.termination_timed(history.entries, _gang(p), p["group"], p["delay"],
                                   p["latency"], actor(p["actor"], exact=True))


@check("at_most_terminations", "A gang is terminated at most a given number of times (a "
       "replica's every pod deleted by the implementation, by the audit log).", audit=True)
def at_most_terminations(history: History, p: Params) -> Verdict:
    is_actor = actor(p["actor"], exact=True) if p.get("actor") else None
    return judge.at_most_terminations(history.entries, _gang(p), p["limit"], is_actor)


@check("one_warning_per_drop", "One scheduled-zero warning per drop of a gang replica's "
       "scheduled pods to zero.")
def one_warning_per_drop(history: History, p: Params) -> Verdict:
    return judge.one_warning_per_drop_to_zero(history.entries, _gang(p), p["group"])


@check("regression_detected", "Whenever a gang replica that had been healthy for 1 s has fewer "
       "scheduled pods than minAvailable, but some, for L seconds on end, its breach condition "
       "was True at some moment of them.")
def regression_detected(history: History, p: Params) -> Verdict:
    return judge.regressions_breached(history.entries, _gang(p), p["latency"], p["now"])


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
     ["never_more_than"], CONCEPTS)
prop("G9", "One warning event per transition of scheduled pods to zero.",
     ["one_warning_per_drop"], CONCEPTS)
