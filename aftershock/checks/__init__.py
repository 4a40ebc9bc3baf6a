"""Checks: small composable properties over a recorded history (the model of
``aftershock.history``), evaluated at every change in the cluster's order."""

from aftershock.checks.attribution import (
    actor_matches,
    admitted,
    created_by,
    deleted_by,
    deleted_count,
    pod_names,
)
from aftershock.checks.invariants import always, honest_transitions, never_more_than
from aftershock.checks.temporal import (
    Event,
    became_true,
    eventually,
    exactly,
    first,
    happened_before,
    no_earlier_than,
    occurrences,
    stays_for,
)
from aftershock.checks.verdict import PASS, UNKNOWN, VIOLATED, Verdict, describe

__all__ = ["PASS", "UNKNOWN", "VIOLATED", "Event", "Verdict", "actor_matches", "admitted", "always",
           "became_true", "created_by", "deleted_by", "deleted_count", "describe",
           "eventually", "exactly", "first", "happened_before", "honest_transitions",
           "never_more_than", "no_earlier_than", "occurrences", "pod_names", "stays_for"]
