"""The one door every write the harness makes goes through (tests/unit/test_write_door.py fails
on any create, patch, replace or delete call elsewhere, a body given by position, a raw HTTP
write, or a helm install, upgrade, uninstall or rollback written out; its EXCEPTIONS name the
few made around it on purpose): sent with fieldValidation=Strict where it applies, so an
unknown field is refused rather than silently pruned; a refusal is a harness error, not the
implementation's doing; and what a patch set reads back from the stored object.

Strict where it applies: the API has no field validation for a DELETE (there is no body to
validate), so a delete is sent as it is; what it checks instead is that the object the harness
named was there (a 404 is a harness error, unless the call says ``missing_ok``: a teardown of
what the implementation or the garbage collector may have removed first). A helm chart's
objects are checked by helm itself against the cluster's OpenAPI schema before they are sent,
and a flag that turns that off is refused.

``writes.py`` builds on it for resources named by kind (dynamic, with the generation check)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
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
    through ``writes.py``, with ``query_params=STRICT``. A delete goes through ``delete``."""
    if not hasattr(method, "__name__"):
        raise TypeError("door.call takes a typed client's method; a dynamic resource's writes "
                        "go through aftershock.kube.writes")
    if method.__name__.startswith("delete"):
        raise TypeError(f"{method.__name__} goes through door.delete (a DELETE takes no field "
                        "validation)")
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


def delete(method: Callable[..., Any], *args: Any, missing_ok: bool = False,
           **kwargs: Any) -> Any:
    """One delete with a typed client's ``method`` (delete_*, delete_collection_*), as
    ``kubectl delete --wait=false``: the API's answer (finalizers may hold the object).

    The object named must be there: a 404 is a harness error naming it as kubectl does
    (``pod/ns/name``), never passed over. A call that tolerates "already gone" says so with
    ``missing_ok=True`` (and then gets None for it): a teardown of what the implementation,
    the garbage collector or a step may have removed first."""
    if not getattr(method, "__name__", "").startswith("delete"):
        raise TypeError("door.delete takes a typed client's delete_* method; a dynamic "
                        "resource's deletes go through aftershock.kube.writes.delete")
    try:
        return method(*args, **kwargs)
    except ApiException as exc:
        if exc.status == 404 and missing_ok:
            return None
        if exc.status == 404:
            raise HarnessWriteFailed(f"harness error: {deleted(method, args, kwargs)} to "
                                     "delete is not there") from None
        if exc.status in (400, 422):
            raise refused(f"the delete of {deleted(method, args, kwargs)}", exc) from None
        raise


def deleted(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What a typed client's delete names, as kubectl does: ``pod/ns/name``, ``node/n1``,
    ``networkchaos.chaos-mesh.org/ns/name``, ``the pods of namespace/ns``."""
    try:
        given = inspect.signature(method).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        given = {}
    name = method.__name__.removeprefix("delete_")
    collection = name.startswith("collection_")
    kind = name.removeprefix("collection_").removeprefix("namespaced_").replace("_", "")
    if "plural" in given:  # a custom object: its resource.group
        kind = f"{given['plural']}.{given.get('group', '')}".rstrip(".")
    namespace, named = given.get("namespace"), given.get("name")
    if collection:
        return f"the {kind}s of namespace/{namespace}" if namespace else f"every {kind}"
    return "/".join(str(part) for part in (kind, namespace, named) if part)


HELM_WRITES = ("install", "upgrade", "uninstall", "rollback")
# Flags that would let a chart's objects reach the API unchecked by helm's schema validation.
UNCHECKED = ("--disable-openapi-validation", "--skip-schema-validation")


def helm(binary: str, command: str, *args: str, timeout: float,
         missing_ok: bool = False) -> str:
    """One helm write (``command``: install, upgrade, uninstall or rollback) run here, its
    stdout. Helm checks a chart's objects against the cluster's OpenAPI schema before it sends
    them (an unknown field is refused): a flag that turns that off is refused here. A failure
    is a harness error naming the release; an uninstall of a release that is not there too,
    unless the call says ``missing_ok``."""
    if command not in HELM_WRITES:
        raise ValueError(f"helm {command} is not a write: run it as any other command")
    release = _release(args)
    off = [arg for arg in args if arg.split("=", 1)[0] in UNCHECKED]
    if off:
        raise HarnessWriteFailed(f"harness error: helm {command} of {release} with "
                                 f"{' '.join(off)}: its objects would go unchecked")
    argv = [binary, command, *args]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=dict(os.environ))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HarnessWriteFailed(f"harness error: helm {command} of {release}: {exc}") from None
    if done.returncode == 0:
        return done.stdout
    if command == "uninstall" and "release: not found" in done.stderr:
        if missing_ok:
            return done.stdout
        raise HarnessWriteFailed(f"harness error: {release} to uninstall is not there")
    tail = "\n  ".join(done.stderr.strip().splitlines()[-15:])
    raise HarnessWriteFailed(f"harness error: helm {command} of {release} exited with "
                             f"{done.returncode}:\n  {tail}")


def _release(args: tuple[str, ...]) -> str:
    """``helm release <namespace>/<name>`` from a helm write's arguments: the release is the
    first word after the command that is no flag (``--install`` takes no value)."""
    name = next((arg for arg in args if not arg.startswith("-")), "?")
    namespace = next((args[i + 1] for i, arg in enumerate(args[:-1])
                      if arg in ("--namespace", "-n")), None)
    return f"helm release {namespace}/{name}" if namespace else f"helm release {name}"


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
