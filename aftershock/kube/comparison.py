"""A field of an object compared with a value, as authoring steps write it:
``status.readyWorkerReplicas > 5``, ``spec.workerGroupSpecs[groupName=workers].replicas >= 1``,
``status.allocation exists``, ``metadata.deletionTimestamp absent``. The path is a profile's
path (``aftershock.kube.paths``); the value is a YAML scalar (``5``, ``true``, ``ready``, ``"5"``).
Numbers compare as numbers, strings as strings; an ordering between a number and a string does
not hold.

A field that is absent (or a list element a selector finds none of) is one rule for every
check: where the published schema types the field as a number, absent is 0 (Kubernetes omits a
zero counter: ``readyReplicas`` absent is no ready replica); an equality with a value that is no
number does not hold on it (``== "False"``: no, ``!= "False"``: yes); anything else on it (an
ordering on a field the schema does not type as a number, an equality with a number there) is
not decided, and a judge over such a state says UNKNOWN. So ``never_had(c)`` and
``kept(not c)`` give the same answer over the same history."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

import yaml

from aftershock.kube import paths

BINARY = ("==", "!=", "<=", ">=", "<", ">")
UNARY = ("exists", "absent")
OPERATORS = (*BINARY, *UNARY)
_FORM = re.compile(r"\s*(?P<path>\S+)\s+(?:(?P<unary>exists|absent)|"
                   r"(?P<op>==|!=|<=|>=|<|>)\s*(?P<value>.+?))\s*")
EXPECTED = ("<path> <op> <value> (op one of ==, !=, <, <=, >, >=) or <path> exists, "
            "<path> absent")


class ComparisonError(ValueError):
    pass


@dataclass(frozen=True)
class Comparison:
    path: str
    op: str
    value: Any = None
    # Whether the published schema types the field as a number (True: absent is 0), as
    # another type (False), or None where no schema said
    numeric: bool | None = None

    @classmethod
    def parse(cls, text: str) -> Comparison:
        found = _FORM.fullmatch(text)
        if not found:
            raise ComparisonError(f"'{text.strip()}': expected {EXPECTED}")
        try:
            paths.parse(found["path"])
        except paths.PathError as exc:
            raise ComparisonError(str(exc)) from None
        if found["unary"]:
            return cls(found["path"], found["unary"])
        return cls(found["path"], found["op"], _scalar(found["value"], text))

    def holds(self, obj: dict[str, Any] | None) -> bool:
        """Whether the object, as it is, has the field so; no object holds nothing, and
        neither does a state ``decide`` cannot decide."""
        return self.decide(obj) is True

    def decide(self, obj: dict[str, Any] | None) -> bool | None:
        """Whether the object has the field so; None where the field is absent and the rule
        above does not decide it."""
        if obj is None:
            return False
        actual = paths.get(obj, self.path)
        if self.op in UNARY:
            return (actual is not None) == (self.op == "exists")
        if actual is None and self.value is not None:  # "== null" is a test of absence
            if self.numeric:
                actual = 0
            elif self.op in ("==", "!=") and not _number(self.value):
                return self.op == "!="
            else:
                return None
        return compare(actual, self.op, self.value)

    def negation(self) -> Comparison:
        """The comparison that holds exactly where this one does not (both undecided alike)."""
        return Comparison(self.path, NEGATION[self.op], self.value, self.numeric)

    @property
    def text(self) -> str:
        if self.op in UNARY:
            return f"{self.path} {self.op}"
        return f"{self.path} {self.op} {shown(self.value)}"

    def negated(self) -> str:
        """The words for a state that breaks it, for a witness."""
        return f"{self.path} {NEGATION[self.op]}" + (
            "" if self.op in UNARY else f" {shown(self.value)}")


NEGATION = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
            "exists": "absent", "absent": "exists"}


def _scalar(text: str, whole: str) -> Any:
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ComparisonError(f"'{whole.strip()}': the value '{text}' is not a YAML "
                              "scalar") from None
    if isinstance(value, dict | list):
        raise ComparisonError(f"'{whole.strip()}': compare one field with one value, not a "
                              f"{'map' if isinstance(value, dict) else 'list'} (to match "
                              "several fields, use a step that matches a partial manifest)")
    return value


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def compare(actual: Any, op: str, expected: Any) -> bool:
    if op in ("==", "!="):
        same = actual == expected if not (_number(actual) and _number(expected)) else \
            float(actual) == float(expected)
        if isinstance(actual, bool) != isinstance(expected, bool):
            same = False  # True == 1 in Python, not in YAML
        return same == (op == "==")
    comparable = (_number(actual) and _number(expected)) or (
        isinstance(actual, str) and isinstance(expected, str))
    if not comparable:
        return False
    return {"<": actual < expected, "<=": actual <= expected, ">": actual > expected,
            ">=": actual >= expected}[op]


def shown(value: Any) -> str:
    """A value as a step would write it."""
    if isinstance(value, str):
        loaded = None
        with contextlib.suppress(yaml.YAMLError):
            loaded = yaml.safe_load(value)
        return value if loaded == value and value.strip() == value and value else f'"{value}"'
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
