"""The generic checks over one object of any kind (issue 34's authoring steps): a field
compared with a value at every recorded change, a partial manifest matched in time or held for
a duration, and how often the object changed."""

from __future__ import annotations

from dataclasses import replace

from aftershock.checks import objects
from aftershock.checks.verdict import Verdict
from aftershock.comparison import Comparison
from aftershock.properties.base import Params, check
from aftershock.properties.history import History


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
    return objects.never_had(history.entries, _ref(p), _comparison(p))


@check("kept", "After every recorded change of an object, while it existed, a field was so "
       "(an absent field read as never_had reads it).")
def kept(history: History, p: Params) -> Verdict:
    return objects.kept(history.entries, _ref(p), _comparison(p))


@check("matches_within", "An object matched a partial manifest (Chainsaw's rules) at some "
       "recorded moment within a time bound.")
def matches_within(history: History, p: Params) -> Verdict:
    return objects.matches_within(history.entries, _ref(p), p["expected"], start=p["start"],
                                  within=p["within"], now=p["now"])


@check("matches_for", "An object matched a partial manifest (Chainsaw's rules) at a moment and "
       "at every recorded change after it for a duration: a state that flips away and back "
       "between two polls breaks it.")
def matches_for(history: History, p: Params) -> Verdict:
    return objects.matches_for(history.entries, _ref(p), p["expected"], start=p["start"],
                               duration=p["duration"], now=p["now"])


@check("changed_at_most", "An object changed (a recorded watch event of it) at most a number "
       "of times within a duration from a moment: a status write loop breaks it.")
def changed_at_most(history: History, p: Params) -> Verdict:
    return objects.changed_at_most(history.entries, _ref(p), p["limit"], start=p["start"],
                                   within=p["within"], now=p["now"])
