"""How the words of the features reach an implementation: the concepts of its profile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Self

from aftershock.kube import paths
from aftershock.machine.capabilities import MissingCapability
from aftershock.profile.placeholders import fill


class NoConcept(MissingCapability):
    """No --profile, or a profile without the concept: the scenario is skipped with this."""

    def __init__(self, why: str):
        Exception.__init__(self, why)


def profile_concept(profile, name: str) -> dict[str, Any]:
    if profile is None:
        raise NoConcept("no implementation profile given (--profile)")
    found = profile.concept(name)
    if found is None:
        raise NoConcept(f"profile {profile.name} does not provide the concept '{name}'")
    return found


def concept(where, name: str) -> dict[str, Any]:
    """The concept's mapping, from a live Scenario or a saved Context (both offer concept())."""
    return where.concept(name)


def replica_group_selector(where, group: str) -> dict[str, str]:
    return {key: fill(value, {"name": group})
            for key, value in concept(where, "replica_group")["pod_selector"].items()}


def get_path(obj: dict, path: str) -> Any:
    """The value at a profile's path, or None where any part is missing."""
    return paths.get(obj, path)


@dataclass(frozen=True)
class ConceptView:
    """One object of a concept a profile maps (a gang, a storage cluster) in the scenario's
    namespace: its name and the profile's mapping, plain data, so a judgement saves it and a
    saved run is judged again from it."""

    CONCEPT: ClassVar[str] = ""
    name: str
    namespace: str
    mapping: dict[str, Any]

    @classmethod
    def of(cls, where, name: str) -> Self:
        return cls(name, where.namespace, concept(where, cls.CONCEPT))

    @property
    def resource(self) -> str:
        return self.mapping["resource"]["plural"]
