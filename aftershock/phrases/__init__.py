"""The words of conditions and events inside steps ("3 pods of web are Running",
"deployment/web got condition Available True"), each turned into a predicate over the recorded
state. Like steps, phrases are checked at collection: a typo names the closest known phrase.

A phrase is built from its words and a context (``aftershock.properties.context.Context``, or a
live Scenario, which offers the same): the namespace, the implementation's concepts and what
earlier steps established. Judging a saved run again rebuilds the same phrase from the same
words and the context saved with the judgement."""

# Every phrase module, in one visible list, in the order a step's words are matched against
# them (importing one registers its phrases).
# isort: off
from aftershock.phrases import (  # noqa: F401
    objects,
    concepts,
)
# isort: on
from aftershock.phrases.base import (
    CLUSTER_SCOPED,
    CONDITIONS,
    EVENTS,
    KINDS,
    Condition,
    Phrase,
    PhraseError,
    build_condition,
    build_event,
    condition,
    event,
    match,
    problem,
    resource_of,
)

__all__ = ["CLUSTER_SCOPED", "CONDITIONS", "EVENTS", "KINDS", "Condition", "Phrase", "PhraseError",
           "build_condition", "build_event", "condition", "event", "match", "problem",
           "resource_of"]
