"""The generic checks, each a property of the harness family under its own name. Conditions and
events travel as their words plus the context they were said in, and are rebuilt here."""

from __future__ import annotations

from aftershock import checks, phrases
from aftershock.checks.attribution import actor
from aftershock.checks.verdict import Verdict
from aftershock.history import History
from aftershock.properties.base import Params, check
from aftershock.properties.context import Context


def condition_of(params: Params) -> phrases.Condition:
    return phrases.build_condition(params["condition"], Context.from_json(params["context"]))


def event_of(params: Params, key: str) -> checks.Event:
    return phrases.build_event(params[key], Context.from_json(params["context"]))


@check("never_more_than", "At no recorded event are there more live objects of a selection "
       "than the limit.")
def never_more_than(history: History, p: Params) -> Verdict:
    return checks.never_more_than(history, p["limit"], namespace=p["namespace"],
                                  selector=p["selector"], resource=p.get("resource", "pods"),
                                  what=p.get("what", "live pods"))


@check("always", "A condition holds after every recorded change of what it reads.")
def always(history: History, p: Params) -> Verdict:
    wanted = condition_of(p)
    return checks.always(history, wanted.holds, wanted.description,
                         resources=wanted.resources, about=wanted.about)


@check("eventually", "A condition holds at some recorded moment within a time bound.")
def eventually(history: History, p: Params) -> Verdict:
    wanted = condition_of(p)
    return checks.eventually(history, wanted.holds, wanted.description,
                             start=p["start"], within=p["within"], now=p["now"],
                             resources=wanted.resources, about=wanted.about,
                             namespace=p["context"]["namespace"])


@check("stays_for", "A condition holds from a moment on, at every recorded change, for a "
       "duration.")
def stays_for(history: History, p: Params) -> Verdict:
    wanted = condition_of(p)
    return checks.stays_for(history, wanted.holds, wanted.description,
                            start=p["start"], duration=p["duration"], now=p["now"],
                            resources=wanted.resources, about=wanted.about)


@check("happened_before", "The first occurrence of one event is recorded before the first "
       "of another, and both happen.")
def happened_before(history: History, p: Params) -> Verdict:
    return checks.happened_before(history, event_of(p, "first"),
                                  event_of(p, "second"))


@check("no_earlier_than", "Every occurrence of an event comes at least a delay after the "
       "latest occurrence of another before it.")
def no_earlier_than(history: History, p: Params) -> Verdict:
    return checks.no_earlier_than(history, event_of(p, "event"),
                                  event_of(p, "after"), delay=p["delay"])


@check("exactly", "An event happens exactly a given number of times over the history, or from "
       "the step that last changed the desired state.")
def exactly(history: History, p: Params) -> Verdict:
    event = event_of(p, "event")
    return checks.exactly(history, event, p["count"], concerns=event.concerns,
                          since=p.get("since"))


@check("deleted_by", "No pod of a selection was deleted or evicted by a given actor, nor by "
       "the garbage collector after that actor deleted its owner (by the audit log).",
       audit=True)
def deleted_by(history: History, p: Params) -> Verdict:
    return checks.deleted_by(history, p["namespace"], p["selector"],
                             actor(p["actor"], p.get("exact", False)), p["who"], p["what"])


@check("deleted_count", "Exactly a given number of pods of a selection were deleted or evicted "
       "by a given actor (by the audit log).", audit=True)
def deleted_count(history: History, p: Params) -> Verdict:
    return checks.deleted_count(history, p["namespace"], p["selector"], p["count"],
                                actor(p["actor"], p.get("exact", False)), p["who"], p["what"])


@check("created_by", "Exactly a given number of pods of a selection were created by a given "
       "actor (by the audit log).", audit=True)
def created_by(history: History, p: Params) -> Verdict:
    return checks.created_by(history, p["namespace"], p["selector"], p["count"],
                             actor(p["actor"], p.get("exact", False)), p["who"], p["what"])


@check("admitted", "No write in the scenario's namespace was refused by an admission webhook "
       "that answered (by the audit log).", audit=True)
def admitted(history: History, p: Params) -> Verdict:
    return checks.admitted(history, p["namespace"])


@check("honest_transition", "A condition's lastTransitionTime moves exactly when its status "
       "changes, to the moment of the change.")
def honest_transition(history: History, p: Params) -> Verdict:
    return checks.honest_transitions(history, p["resource"], p["namespace"], p["name"],
                                     p["condition"])
