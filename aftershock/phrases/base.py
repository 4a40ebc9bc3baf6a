"""How a phrase is registered, matched and built: ``@condition``/``@event``, and the words'
shared helpers. The phrases themselves are in ``objects`` (pods, nodes, conditions) and
``concepts`` (what a profile maps)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import parse

from aftershock.checks.temporal import Event
from aftershock.history.names import SINGULAR
from aftershock.history.state import State
from aftershock.phrases.types import EXTRA_TYPES

PLURAL = {singular: plural for plural, singular in SINGULAR.items()}
CLUSTER_SCOPED = {"nodes", "persistentvolumes", "deviceclasses", "resourceslices", "namespaces",
                  "devicetaintrules"}


@dataclass(frozen=True)
class Condition:
    description: str
    holds: Callable[[State], bool]
    resources: frozenset[str]
    # How many objects the condition speaks of in a state: a judgement over none is not earned.
    about: Callable[[State], int]


@dataclass(frozen=True)
class Phrase:
    pattern: str
    build: Callable[..., Any]

    @property
    def example(self) -> str:
        return re.sub(r"{(\w+)(?::[^}]*)?}", r"<\1>", self.pattern)


CONDITIONS: list[Phrase] = []
EVENTS: list[Phrase] = []


def condition(pattern: str):
    def register(build):
        CONDITIONS.append(Phrase(pattern, build))
        return build
    return register


def event(pattern: str):
    def register(build):
        EVENTS.append(Phrase(pattern, build))
        return build
    return register


def match(phrases: list[Phrase], text: str) -> tuple[Phrase, dict[str, Any]] | None:
    for phrase in phrases:
        found = parse.parse(phrase.pattern, text.strip(), extra_types=EXTRA_TYPES)
        if found is not None:
            return phrase, dict(found.named)
    return None


def problem(phrases: list[Phrase], text: str, what: str) -> str | None:
    """None if ``text`` is a known phrase, else what is wrong and the closest known ones."""
    if match(phrases, text):
        return None
    close = difflib.get_close_matches(text, [p.example for p in phrases], n=3, cutoff=0.3)
    hint = ("; closest known: " + " | ".join(f"'{c}'" for c in close)) if close else ""
    return f"unknown {what} '{text}'{hint}"


class PhraseError(ValueError):
    pass


def _build(phrases: list[Phrase], text: str, what: str, ctx) -> Any:
    found = match(phrases, text)
    if found is None:
        raise PhraseError(problem(phrases, text, what))
    phrase, arguments = found
    return phrase.build(ctx, **arguments)


def build_condition(text: str, ctx) -> Condition:
    return _build(CONDITIONS, text, "condition", ctx)


def build_event(text: str, ctx) -> Event:
    return _build(EVENTS, text, "event", ctx)


# The kinds a scenario's steps named, as discovery found them: word → {"resource": plural,
# "namespaced": bool}. A scenario fact, so a saved judgement reads the words as they were meant.
KINDS = "kinds"


def _discovered(ctx) -> dict[str, dict]:
    return ((getattr(ctx, "facts", None) or {}).get(KINDS)) or {}


def resource_of(kind: str, ctx=None) -> str:
    known = _discovered(ctx).get(kind.lower())
    if known:
        return known["resource"]
    return PLURAL.get(kind.lower(), kind.lower())


def namespace_of(ctx, resource: str) -> str:
    for known in _discovered(ctx).values():
        if known["resource"] == resource:
            return ctx.namespace if known["namespaced"] else ""
    return "" if resource in CLUSTER_SCOPED else ctx.namespace


