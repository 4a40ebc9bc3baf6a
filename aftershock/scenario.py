"""The ``Scenario`` every step acts on, and the one step registry both runners dispatch from.

A step is a plain function of a Scenario plus parsed parameters, declared once with
``@given/@when/@then`` below. pytest-bdd (``fixtures/bdd.py``) and the notebook magic read the
same registry, so one definition serves two runners.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aftershock.providers.base import Capability, Cluster, MissingCapability

StepKind = Literal["given", "when", "then"]


@dataclass(frozen=True)
class StepDefinition:
    kind: StepKind
    pattern: str  # a `parse` format string: "a Deployment {name} with {replicas:d} replicas"
    func: Callable[..., Any]

    @property
    def arguments(self) -> list[str]:
        return re.findall(r"{(\w+)(?::[^}]*)?}", self.pattern)

    @property
    def example(self) -> str:
        """The pattern with placeholders shown as <name>, for suggestions."""
        return re.sub(r"{(\w+)(?::[^}]*)?}", r"<\1>", self.pattern)


REGISTRY: list[StepDefinition] = []


def _register(kind: StepKind, pattern: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(StepDefinition(kind, pattern, func))
        return func

    return decorate


def given(pattern: str):
    return _register("given", pattern)


def when(pattern: str):
    return _register("when", pattern)


def then(pattern: str):
    return _register("then", pattern)


def _compiled(definition: StepDefinition):
    import parse

    return parse.compile(definition.pattern)


def match_step(text: str) -> tuple[StepDefinition, dict[str, Any]] | None:
    """The definition whose whole pattern matches ``text``, with its parsed arguments."""
    for definition in REGISTRY:
        found = _compiled(definition).parse(text)
        if found is not None:
            return definition, dict(found.named)
    return None


def closest_steps(text: str, count: int = 3) -> list[str]:
    examples = {definition.example: definition for definition in REGISTRY}
    return difflib.get_close_matches(text, list(examples), n=count, cutoff=0.3)


class StepFailed(AssertionError):
    """A Then step whose property did not hold; the message carries the evidence."""


@dataclass
class Scenario:
    """One scenario's world: the cluster, its namespace, what steps remembered, and cleanup."""

    cluster: Cluster
    api: Any  # kubernetes.client.ApiClient
    namespace: str
    name: str = "scenario"
    report_dir: Path | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    _cleanups: list[tuple[str, Callable[[], None]]] = field(default_factory=list)

    def require(self, capability: Capability) -> None:
        if capability not in self.cluster.capabilities:
            raise MissingCapability(self.cluster.info.provider, capability)

    def remember(self, key: str, value: Any) -> Any:
        self.facts[key] = value
        return value

    def recall(self, key: str) -> Any:
        if key not in self.facts:
            known = ", ".join(sorted(self.facts)) or "nothing yet"
            raise StepFailed(f"no earlier step established '{key}' (known: {known})")
        return self.facts[key]

    def on_cleanup(self, label: str, undo: Callable[[], None]) -> None:
        """Register an undo; run in reverse order when the scenario ends, however it ends."""
        self._cleanups.append((label, undo))

    def close(self) -> list[str]:
        """Run every undo (all of them, even if some fail); return the failures."""
        failures = []
        while self._cleanups:
            label, undo = self._cleanups.pop()
            try:
                undo()
            except Exception as exc:  # every undo must run; report the rest
                failures.append(f"{label}: {exc}")
        return failures


def namespace_for(name: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:40].strip("-") or "scenario"
    return f"{slug}-{secrets.token_hex(3)}"


@contextlib.contextmanager
def suppress_not_found():
    from kubernetes.client.exceptions import ApiException

    try:
        yield
    except ApiException as exc:
        if exc.status != 404:
            raise
