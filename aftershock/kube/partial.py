"""A partial manifest matched against an object, by the rules Chainsaw documents for its
assertion trees, with this harness's paths for list elements:

- a map matches when every key it gives matches (keys it does not give are not looked at);
  an empty map matches any value that is there;
- a key may select a list element the way a profile's path does, by key or by index:
  ``conditions[type=Ready]: {status: "True"}``, ``containers[0]: {name: app}``;
- a list matches a list of the same length, element by element in order;
- ``null`` matches a field that is absent or null (so a partial manifest can say a field is
  gone); any other value needs the field;
- scalars match when equal: numbers as numbers (``2`` matches ``2.0``), and a value of another
  type never matches (the string ``"2"`` is not the number ``2``, ``false`` is not ``0``).

``mismatches`` lists every field that does not match, by its path, for the step's message."""

from __future__ import annotations

from typing import Any

from aftershock.kube import paths

_MISSING = object()


def matches(expected: Any, actual: Any) -> bool:
    return not mismatches(expected, actual)


def mismatches(expected: Any, actual: Any, where: str = "") -> list[str]:
    if expected is None:
        return [] if actual is None or actual is _MISSING else \
            [f"{where or '.'}: {_kind(actual)} {_short(actual)}, expected it absent or null"]
    if actual is _MISSING or actual is None:
        return [f"{where or '.'}: absent, expected {_short(expected)}"]
    if expected == {}:  # only that it is there (Chainsaw's empty map)
        return []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where or '.'}: {_kind(actual)}, expected a map"]
        found: list[str] = []
        for key, value in expected.items():
            found += mismatches(value, _field(actual, str(key), where), _join(where, str(key)))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{where or '.'}: {_kind(actual)}, expected a list"]
        if len(expected) != len(actual):
            return [f"{where or '.'}: {len(actual)} elements, expected {len(expected)}"]
        return [problem for position, (want, have) in enumerate(zip(expected, actual,
                                                                    strict=True))
                for problem in mismatches(want, have, f"{where}[{position}]")]
    if _same(expected, actual):
        return []
    return [f"{where or '.'}: {_short(actual)}, expected {_short(expected)}"]


def _field(actual: dict, key: str, where: str) -> Any:
    """The value a key of the partial manifest names: a plain key, or one with list
    selectors (``conditions[type=Ready]``)."""
    if "[" not in key:
        return actual.get(key, _MISSING)
    try:
        steps = paths.parse(key)
    except paths.PathError as exc:
        raise PartialError(f"{_join(where, key)}: {exc}") from None
    if len(steps) < 2 or any(isinstance(step, paths.Key) for step in steps[1:]):
        raise PartialError(f"{_join(where, key)}: one key with its list selectors, as in "
                           "conditions[type=Ready] (nest maps for the fields below it)")
    value = paths.get(actual, key)
    return _MISSING if value is None else value


def leaf_paths(expected: Any) -> list[list[paths.Step]]:
    """The paths a partial manifest names, down to each value it gives (a list element by its
    position), as steps: what a schema must hold for the match to be about real fields. A key
    is one step however many dots it has (``app.kubernetes.io/name`` under ``labels``)."""
    if isinstance(expected, dict) and expected:
        return [[*_key_steps(str(key)), *path] for key, value in expected.items()
                for path in leaf_paths(value) or [[]]]
    if isinstance(expected, list) and expected:
        return [[paths.Index(position), *path] for position, value in enumerate(expected)
                for path in leaf_paths(value) or [[]]]
    return []


def _key_steps(key: str) -> list[paths.Step]:
    if "[" not in key:
        return [paths.Key(key)]
    try:
        return paths.parse(key)
    except paths.PathError as exc:
        raise PartialError(f"{key}: {exc}") from None


class PartialError(ValueError):
    """A key of the partial manifest that is not one (a selector that cannot be read)."""


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return float(expected) == float(actual)
    return type(expected) is type(actual) and expected == actual


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: Any) -> str:
    return {dict: "a map", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."
