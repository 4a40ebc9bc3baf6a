"""What the implementation under test made outside the scenario's namespace, found in the API
server's audit log by its identity, and removed once it has stopped: webhook configurations
an operator registers for itself (Kyverno's), nodes and claims an autoscaler makes. Its
namespace's objects go with the namespace; these would outlive the scenario, and a webhook
whose server is gone refuses every request it matches."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client, dynamic

from aftershock.kube import writes
from aftershock.kube.api import dynamic_client, suppress_not_found


@dataclass(frozen=True)
class Made:
    """A cluster-scoped object one create of the implementation's made."""

    group: str
    version: str
    resource: str
    name: str

    def __str__(self) -> str:
        return f"{self.resource}/{self.name}"


def audit_size(audit_log: Path | None) -> int:
    """Where the log ends now: what the implementation makes from here on is read after it."""
    return audit_log.stat().st_size if audit_log is not None and audit_log.exists() else 0


def made_by(audit_log: Path, actor: str, offset: int = 0) -> list[Made]:
    """Every cluster-scoped object ``actor`` created (and the API server stored), in the order
    made, each once. A line cut short at the end (being written) is skipped."""
    made: dict[Made, None] = {}
    with audit_log.open("rb") as log:
        log.seek(offset)
        for line in log:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            found = _created(event, actor)
            if found is not None:
                made[found] = None
    return list(made)


def _created(event: dict[str, Any], actor: str) -> Made | None:
    ref = event.get("objectRef") or {}
    code = (event.get("responseStatus") or {}).get("code", 0)
    if (event.get("verb") != "create" or event.get("stage") != "ResponseComplete"
            or (event.get("user") or {}).get("username") != actor or ref.get("namespace")
            or ref.get("subresource") or not 200 <= code < 300):
        return None
    name = ref.get("name") or ((event.get("responseObject") or {}).get("metadata") or {}).get(
        "name")
    if not name or not ref.get("resource"):
        return None
    return Made(ref.get("apiGroup", ""), ref.get("apiVersion", "v1"), ref["resource"], name)


def remove(api: client.ApiClient, made: list[Made]) -> list[str]:
    """Delete them, newest first; one a finalizer holds (of the stopped implementation: no one
    else will remove it) is released. Returns what was removed."""
    resources = dynamic_client(api).resources
    removed = []
    for item in reversed(made):
        api_version = f"{item.group}/{item.version}" if item.group else item.version
        try:
            resource = resources.get(api_version=api_version, name=item.resource)
        except dynamic.exceptions.ResourceNotFoundError:
            continue  # its kind went first (a CRD the scenario removed): so did it
        answer = writes.delete(resource, item.name, None, missing_ok=True)
        if answer is None:
            continue
        removed.append(str(item))
        if (answer.get("metadata") or {}).get("finalizers"):
            with suppress_not_found():
                writes.merge_patch(resource, item.name, None, {"metadata": {"finalizers": None}})
    return removed
