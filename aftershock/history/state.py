"""The state of the cluster at one point of the replay: objects by (resource, namespace,
name), with indexes that answer the same question after every change without a scan, and the
predicates the judges share (live, ready, running, bound)."""

from aftershock.timeline.state import (
    Index,
    Predicate,
    Query,
    Selector,
    State,
    exists,
    is_live,
    is_ready,
    is_running,
    node_of,
    phase,
    selects,
)

__all__ = ["Index", "Predicate", "Query", "Selector", "State", "exists", "is_live", "is_ready",
           "is_running", "node_of", "phase", "selects"]
