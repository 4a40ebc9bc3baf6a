"""The one door every write the harness makes goes through (tests/unit/test_write_door.py fails
on any create, patch or replace call elsewhere): sent with fieldValidation=Strict, so an
unknown field is refused rather than silently pruned; a refusal is a harness error, not the
implementation's doing; and what a patch set reads back from the stored object.
``writes.py`` builds on it for the resources a profile maps (dynamic, with the generation
check)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from aftershock.errors import StepFailed

STRICT = [("fieldValidation", "Strict")]


class HarnessWriteFailed(StepFailed):
    """The harness could not make a change it meant to make: a harness error."""


def refused(what: str, exc: ApiException) -> HarnessWriteFailed:
    try:
        message = json.loads(exc.body or "{}").get("message") or exc.reason
    except ValueError:
        message = exc.reason
    return HarnessWriteFailed(f"harness error: the API refused {what} (HTTP {exc.status}): "
                              f"{message}")


def call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """One write with a typed client's ``method`` (create_*, patch_*, replace_*). A patch's
    body must read back from what the API stored (a value of null removes; times are the
    server's to format). The dynamic client ignores ``field_validation``: its writes go
    through ``writes.py``, with ``query_params=STRICT``."""
    if not hasattr(method, "__name__"):
        raise TypeError("door.call takes a typed client's method; a dynamic resource's writes "
                        "go through aftershock.writes")
    what = method.__name__.replace("_", " ")
    try:
        result = method(*args, field_validation="Strict", **kwargs)
    except ApiException as exc:
        if exc.status in (400, 422):
            raise refused(f"{what} {_named(args)}".strip(), exc) from None
        raise
    body = kwargs.get("body", args[-1] if args else None)
    if method.__name__.startswith("patch") and isinstance(body, dict):
        stored = ApiClient().sanitize_for_serialization(result)
        missing = unmet(body, stored)
        if missing:
            raise HarnessWriteFailed(f"harness error: {what} {_named(args)}: {missing} does "
                                     "not read back from the stored object")
    return result


def _named(args: tuple[Any, ...]) -> str:
    return "/".join(str(a) for a in reversed(args[:-1]) if isinstance(a, str))


def unmet(wanted: Any, stored: Any, path: str = "") -> str | None:
    """The first path of ``wanted`` that ``stored`` does not hold (None: all of it). A list
    element is held when some stored element holds it (the API merges lists it keys)."""
    if isinstance(wanted, dict):
        if not isinstance(stored, dict):
            return path or "."
        for key, value in wanted.items():
            if value is None or key.endswith(("Time", "Timestamp")):
                continue
            found = unmet(value, stored.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(wanted, list):
        if not isinstance(stored, list):
            return path
        for index, item in enumerate(wanted):
            if all(unmet(item, have) for have in stored):
                return f"{path}[{index}]"
        return None
    return None if wanted == stored else path
