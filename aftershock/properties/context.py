"""What the words of a step mean in one scenario, as plain data: its namespace, the concepts of
the implementation under test, and what earlier steps established. Conditions and events are
built from their words and a Context, both in a live scenario and when a saved run is judged
again."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.concepts import NoConcept


class MissingFact(LookupError):
    pass


class NotPlainData(TypeError):
    pass


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: sets become sorted lists, tuples lists, paths strings."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, set | frozenset):
        items = [plain(item) for item in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: plain(item) for key, item in value.items()}
    raise NotPlainData(type(value).__name__)


@dataclass
class Context:
    namespace: str
    profile: str | None = None
    concepts: dict[str, dict[str, Any]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def recall(self, key: str) -> Any:
        if key not in self.facts:
            known = ", ".join(sorted(self.facts)) or "nothing yet"
            raise MissingFact(f"no earlier step established '{key}' (known: {known})")
        return self.facts[key]

    def concept(self, name: str) -> dict[str, Any]:
        if self.profile is None:
            raise NoConcept("no implementation profile given (--profile)")
        if name not in self.concepts:
            raise NoConcept(f"profile {self.profile} does not provide the concept '{name}'")
        return self.concepts[name]

    @classmethod
    def of(cls, namespace: str, profile: Any, facts: dict[str, Any]) -> Context:
        """From a live scenario: facts that are not plain data (clients, processes) stay out."""
        kept = {}
        for key, value in facts.items():
            try:
                kept[key] = plain(value)
            except NotPlainData:
                continue
        return cls(namespace, getattr(profile, "name", None),
                   plain(dict(getattr(profile, "concepts", {}) or {})), kept)

    def to_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "profile": self.profile,
                "concepts": self.concepts, "facts": self.facts}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Context:
        return cls(data["namespace"], data.get("profile"), data.get("concepts") or {},
                   data.get("facts") or {})
