"""The generic checks over one object of any kind (issue 34's authoring steps): a field
compared with a value at every recorded change, and a partial manifest matched in time."""

from __future__ import annotations

from aftershock.checks import objects
from aftershock.checks.verdict import Verdict
from aftershock.comparison import Comparison
from aftershock.properties.base import Params, check
from aftershock.properties.history import History


def _ref(p: Params) -> objects.ObjectRef:
    return objects.ObjectRef(**p["object"])


@check("never_had", "At no recorded change of an object did it have a field so (a field "
       "compared with a value: ==, !=, <, <=, >, >=, exists, absent).")
def never_had(history: History, p: Params) -> Verdict:
    return objects.never_had(history.entries, _ref(p), Comparison.parse(p["comparison"]))


@check("kept", "After every recorded change of an object, while it existed, a field was so.")
def kept(history: History, p: Params) -> Verdict:
    return objects.kept(history.entries, _ref(p), Comparison.parse(p["comparison"]))


@check("matches_within", "An object matched a partial manifest (Chainsaw's rules) at some "
       "recorded moment within a time bound.")
def matches_within(history: History, p: Params) -> Verdict:
    return objects.matches_within(history.entries, _ref(p), p["expected"], start=p["start"],
                                  within=p["within"], now=p["now"])
