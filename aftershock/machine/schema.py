"""A small declarative schema for YAML inputs, so every error names file:line, the field and
what was expected (and the closest known field for a typo)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from aftershock.machine.yamlsrc import Located


@dataclass(frozen=True)
class Field:
    kind: type | tuple[type, ...] | str  # a type, or "map" / "list" with ``schema``/``items``
    required: bool = False
    schema: dict[str, Field] | None = None  # for "map" with known keys
    items: Field | None = None  # for "list", and for "map" with free keys (their values)
    choices: tuple[str, ...] = ()
    expected: str = ""  # how to describe it in an error


@dataclass
class Validator:
    doc: Located
    errors: list[Any] = field(default_factory=list)

    def check(self, schema: dict[str, Field]) -> None:
        self._map(self.doc.data, schema, ())

    def _fail(self, message: str, at: tuple) -> None:
        raise self.doc.error(message, *at)

    def _name(self, at: tuple) -> str:
        return ".".join(map(str, at)) or "the document"

    def _map(self, value: Any, schema: dict[str, Field], at: tuple) -> None:
        if not isinstance(value, dict):
            self._fail(f"field '{self._name(at)}' must be a mapping", at)
        for key in value:
            if key not in schema:
                close = difflib.get_close_matches(str(key), list(schema), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self._fail(f"unknown field '{self._name((*at, key))}'{hint}; expected one of: "
                           f"{', '.join(schema)}", (*at, key))
        for key, spec in schema.items():
            if key in value:
                self._value(value[key], spec, (*at, key))
            elif spec.required:
                self._fail(f"field '{self._name((*at, key))}' is required"
                           f"{': ' + spec.expected if spec.expected else ''}", at)

    def _value(self, value: Any, spec: Field, at: tuple) -> None:
        if spec.kind == "map":
            if spec.schema is not None:
                self._map(value, spec.schema, at)
                return
            if not isinstance(value, dict):
                self._fail(f"field '{self._name(at)}' must be a mapping", at)
            for key, item in value.items():
                if spec.items is not None:
                    self._value(item, spec.items, (*at, key))
            return
        if spec.kind == "list":
            if not isinstance(value, list):
                self._fail(f"field '{self._name(at)}' must be {spec.expected or 'a list'}", at)
            for index, item in enumerate(value):
                if spec.items is not None:
                    self._value(item, spec.items, (*at, index))
            return
        if isinstance(value, bool) and spec.kind is not bool:
            self._fail(f"field '{self._name(at)}' must be {self._describe(spec)}, got {value!r}",
                       at)
        if not isinstance(value, spec.kind):
            self._fail(f"field '{self._name(at)}' must be {self._describe(spec)}, got "
                       f"{type(value).__name__} {value!r}", at)
        if spec.choices and value not in spec.choices:
            self._fail(f"field '{self._name(at)}' must be one of {', '.join(spec.choices)}, "
                       f"got {value!r}", at)

    @staticmethod
    def _describe(spec: Field) -> str:
        if spec.expected:
            return spec.expected
        names = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}
        kinds = spec.kind if isinstance(spec.kind, tuple) else (spec.kind,)
        return " or ".join(names.get(kind, getattr(kind, "__name__", str(kind)))
                           for kind in kinds)


def validate(doc: Located, schema: dict[str, Field]) -> None:
    Validator(doc).check(schema)
