"""The property registry: R1..D15, B1-B8, E1-E3 and the generic checks, each judged through one
rule.

Importing this package registers every family: the list below is the whole registry. A family
is one module: its judges beside the ``prop(...)`` lines that name them. The registry judges a
saved history: it imports nothing of the scenario, the step library, the providers or the
notebook (``make lint`` holds it to that).
"""

# Every family, in one visible list (importing one registers its checks and properties).
from aftershock.history import History
from aftershock.properties import (  # noqa: F401
    binding,
    dra,
    dra_container,
    dra_node,
    dra_slices,
    dra_upgrade,
    explore,
    gang,
    harness,
    objects,
    progress,
    records,
    replica,
    storage,
)
from aftershock.properties.base import (
    CHECKS,
    NOT_APPLICABLE_BECAUSE,
    PROPERTIES,
    Check,
    Judgement,
    Property,
    UnknownProperty,
    all_properties,
    get,
    judge,
    problem,
)

__all__ = ["CHECKS", "NOT_APPLICABLE_BECAUSE", "PROPERTIES", "Check", "History", "Judgement",
           "Property", "UnknownProperty", "all_properties", "get", "judge", "problem"]
