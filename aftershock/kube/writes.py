"""Writes to a resource named by its kind (the dynamic client: a profile's or a step's
``kind/name``), through ``door``: server-side apply, merge patch, create and delete, each read
back from the stored object (the values it set are there, and a change to the spec moved the
generation). A write that did not take ends the scenario as a harness error: the
implementation was never asked, so nothing it did can be judged against it."""

from __future__ import annotations

from typing import Any

from kubernetes.client.exceptions import ApiException

from aftershock.kube import paths
from aftershock.kube.door import STRICT, HarnessWriteFailed, call, unmet
from aftershock.kube.door import refused as _refused

__all__ = ["STRICT", "HarnessWriteFailed", "apply", "call", "create", "delete", "merge_patch",
           "set_field", "unmet"]
JSON_PATCH = "application/json-patch+json"


def _ref(kind: str, namespace: str | None, name: str) -> str:
    return f"{kind.lower()}/{namespace}/{name}" if namespace else f"{kind.lower()}/{name}"


def create(resource, body: dict[str, Any], namespace: str | None,
           fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """Create ``body`` with ``fields`` (a profile's path → value) set in it; each must read
    back from the stored object."""
    for path, value in (fields or {}).items():
        paths.put(body, path, value)
    meta = body.get("metadata") or {}
    ref = _ref(body.get("kind", resource.kind), namespace, meta.get("name", "?"))
    try:
        created = resource.create(body=body, namespace=namespace, query_params=list(STRICT))
    except ApiException as exc:
        if exc.status in (400, 422):
            raise _refused(f"the create of {ref}", exc) from None
        raise
    stored = created.to_dict()
    for path, value in (fields or {}).items():
        found = paths.get(stored, path)
        if found != value:
            raise HarnessWriteFailed(f"harness error: {ref} was created, but {path} reads "
                                     f"back {found!r}, not {value!r} (the field was dropped)")
    return stored


def set_field(resource, name: str, namespace: str | None, path: str, value: Any,
              attempts: int = 3) -> dict[str, Any]:
    """Set ``path`` to ``value`` with a JSON patch against the object as read (an element
    picked by key is pinned by a test op), then confirm it took: the value reads back and, if
    it changed, the generation moved."""
    ref = _ref(resource.kind, namespace, name)
    for attempt in range(attempts):
        current = resource.get(name=name, namespace=namespace).to_dict()
        try:
            ops = paths.patch(current, path, value)
        except paths.PathError as exc:
            raise HarnessWriteFailed(f"harness error: {ref}: {exc}") from None
        try:
            patched = resource.patch(body=ops, name=name, namespace=namespace,
                                     content_type=JSON_PATCH, query_params=list(STRICT))
            break
        except ApiException as exc:
            if exc.status == 422 and attempt < attempts - 1 and '"test"' in (exc.body or ""):
                continue  # the list moved under us: read it again
            if exc.status in (400, 422):
                raise _refused(f"setting {path} of {ref}", exc) from None
            raise
    after = patched.to_dict()
    found = paths.get(after, path)
    if found != value:
        raise HarnessWriteFailed(f"harness error: {ref}: {path} reads back {found!r} after "
                                 f"setting it to {value!r}")
    before = (current.get("metadata") or {}).get("generation")
    moved = (after.get("metadata") or {}).get("generation")
    if paths.get(current, path) != value and before is not None and moved == before:
        raise HarnessWriteFailed(f"harness error: {ref}: {path} was set to {value!r} but the "
                                 f"generation stayed {before}: the change did not reach the "
                                 "spec the implementation reads")
    return after


MERGE_PATCH = "application/merge-patch+json"
FIELD_MANAGER = "aftershock"


def apply(resource, manifest: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    """Apply a whole manifest, as ``kubectl apply --server-side --force-conflicts`` does
    (create it, or make it so); its ``status``, which an apply does not write, through the
    status subresource. Each field given must read back from the stored object."""
    meta = manifest.get("metadata") or {}
    ref = _ref(manifest.get("kind", resource.kind), namespace, meta.get("name", "?"))
    status = manifest.get("status")
    body = {key: value for key, value in manifest.items() if key != "status"}
    try:
        stored = resource.server_side_apply(
            body=body, name=meta.get("name"), namespace=namespace, field_manager=FIELD_MANAGER,
            force_conflicts=True, query_params=list(STRICT)).to_dict()
    except ApiException as exc:
        if exc.status in (400, 409, 422):
            raise _refused(f"the apply of {ref}", exc) from None
        raise
    _read_back(ref, body, stored, "applied")
    if status is not None:
        stored = _patch_status(resource, ref, meta.get("name"), namespace, status)
    return stored


def merge_patch(resource, name: str, namespace: str | None,
                body: dict[str, Any]) -> dict[str, Any]:
    """A JSON merge patch (``kubectl patch --type merge``; null removes a field), its
    ``status`` through the status subresource; each field given must read back."""
    ref = _ref(resource.kind, namespace, name)
    rest = {key: value for key, value in body.items() if key != "status"}
    stored: dict[str, Any] = {}
    if rest:
        stored = _merge(resource, ref, name, namespace, rest, "patched")
    if "status" in body:
        stored = _patch_status(resource, ref, name, namespace, body["status"])
    return stored


def _patch_status(resource, ref: str, name: str, namespace: str | None,
                  status: Any) -> dict[str, Any]:
    return _merge(resource.status, ref, name, namespace, {"status": status}, "given its status")


def _merge(target, ref: str, name: str, namespace: str | None, body: dict[str, Any],
           done: str) -> dict[str, Any]:
    """One merge patch of ``target`` (the resource, or its status subresource), read back."""
    try:
        stored = target.patch(body=body, name=name, namespace=namespace,
                              content_type=MERGE_PATCH, query_params=list(STRICT)).to_dict()
    except ApiException as exc:
        if exc.status in (400, 404, 422):
            raise _refused(f"the {'status' if done != 'patched' else 'patch'} of {ref}",
                           exc) from None
        raise
    _read_back(ref, body, stored, done)
    return stored


def _read_back(ref: str, wanted: dict[str, Any], stored: dict[str, Any], done: str) -> None:
    missing = unmet(wanted, stored)
    if missing:
        raise HarnessWriteFailed(f"harness error: {ref} was {done}, but {missing.lstrip('.')} "
                                 "does not read back from the stored object (the field was "
                                 "dropped or changed)")


def delete(resource, name: str, namespace: str | None, *, missing_ok: bool = False,
           body: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Delete an object (``kubectl delete --wait=false``): it must have been there, and now
    be gone or going (a deletionTimestamp: finalizers may hold it). ``body``: delete options
    (``{"propagationPolicy": "Background"}``). A DELETE takes no field validation.

    A 404 is a harness error naming the object, unless the call says ``missing_ok=True`` (a
    teardown of what the implementation, the garbage collector or a step may have removed
    first): then None."""
    ref = _ref(resource.kind, namespace, name)
    try:
        answer = resource.delete(name=name, namespace=namespace,
                                 **({"body": body} if body is not None else {}))
    except ApiException as exc:
        if exc.status == 404 and missing_ok:
            return None
        if exc.status == 404:
            raise HarnessWriteFailed(f"harness error: {ref} to delete is not there") from None
        if exc.status in (400, 422):
            raise _refused(f"the delete of {ref}", exc) from None
        raise
    return answer.to_dict() if hasattr(answer, "to_dict") else answer
