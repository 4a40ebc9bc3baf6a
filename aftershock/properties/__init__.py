"""The property registry: R1..D7 and the generic checks, each judged through one rule."""

from aftershock.properties.base import (
    CHECKS,
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
from aftershock.properties.history import History

__all__ = ["CHECKS", "PROPERTIES", "Check", "History", "Judgement", "Property",
           "UnknownProperty", "all_properties", "get", "judge", "problem"]
