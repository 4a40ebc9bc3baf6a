"""The generic checks over one object of any kind (issue 34's authoring steps): a field
compared with a value at every recorded change, a partial manifest matched in time or held for
a duration, and how often the object changed."""

from __future__ import annotations

from dataclasses import replace

from aftershock.checks import objects
from aftershock.checks.verdict import Verdict
from aftershock.history import History
from aftershock.kube.comparison import Comparison
from aftershock.properties.base import Params, check


def _ref(p: Params) -> objects.ObjectRef:
    return objects.ObjectRef(**p["object"])


def _comparison(p: Params) -> Comparison:
    """The step's comparison, with what the schema said of its field ("numeric": a run saved
    before it was said leaves an absent field undecided)."""
    return replace(Comparison.parse(p["comparison"]), numeric=p.get("numeric"))


@check("never_had", "At no recorded change of an object did it have a field so (a field "
       "compared with a value: ==, !=, <, <=, >, >=, exists, absent; an absent field is 0 "
       "where the schema types it as a number, else a state an ordering cannot decide).")
def never_had(history: History, p: Params) -> Verdict:
    return objects.never_had(history, _ref(p), _comparison(p))


@check("kept", "After every recorded change of an object, while it existed, a field was so "
       "(an absent field read as never_had reads it).")
def kept(history: History, p: Params) -> Verdict:
    return objects.kept(history, _ref(p), _comparison(p))


@check("matches_within", "An object matched a partial manifest (Chainsaw's rules) at some "
       "recorded moment within a time bound.")
def matches_within(history: History, p: Params) -> Verdict:
    return objects.matches_within(history, _ref(p), p["expected"], start=p["start"],
                                  within=p["within"], now=p["now"])


@check("matches_for", "An object matched a partial manifest (Chainsaw's rules) at a moment and "
       "at every recorded change after it for a duration: a state that flips away and back "
       "between two polls breaks it.")
def matches_for(history: History, p: Params) -> Verdict:
    return objects.matches_for(history, _ref(p), p["expected"], start=p["start"],
                               duration=p["duration"], now=p["now"])


@check("changed_at_most", "An object changed (a recorded watch event of it) at most a number "
       "of times within a duration from a moment: a status write loop breaks it.")
def changed_at_most(history: History, p: Params) -> Verdict:
    return objects.changed_at_most(history, _ref(p), p["limit"], start=p["start"],
                                   within=p["within"], now=p["now"])


def _condition(p: Params, key: str) -> tuple[objects.ObjectRef, Comparison]:
    """Another object and a comparison on it (``until``, ``while``), as the step saved them."""
    said = p[key]
    return (objects.ObjectRef(**said["object"]),
            replace(Comparison.parse(said["comparison"]), numeric=said.get("numeric")))


@check("never_has_from", "From a moment on (the state an object had then, and every recorded "
       "change after it) until another object first had a field so, a later step began, or "
       "the scenario's end, the object never had a field so.")
def never_has_from(history: History, p: Params) -> Verdict:
    until = _condition(p, "until") if p.get("until") else None
    return objects.never_has_from(history, _ref(p), _comparison(p), start=p["start"],
                                  now=p["now"], until=until, end=p.get("end"),
                                  ended_by=p.get("ended_by", ""))


@check("never_while", "No recorded change of an object left it with a field so while another "
       "object had a field so (a claim written reserved for a pod that had finished); a "
       "condition that never held is UNKNOWN.")
def never_while(history: History, p: Params) -> Verdict:
    return objects.never_while(history, _condition(p, "while"), _ref(p), _comparison(p))
