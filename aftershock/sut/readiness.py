"""When an implementation started out of the cluster is ready: a line in its log, a URL that
answers 2xx, a Lease in the scenario's namespace that it holds, or an object's condition that
turns True — every one the profile names (none: as soon as it runs)."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from aftershock.profile.placeholders import fill


def waiting_for(start, log: Path, offset: int, api: client.ApiClient, namespace: str,
                values: dict[str, str]) -> list[str]:
    """What the implementation is not yet showing (empty: ready)."""
    missing = []
    if start.ready_log and not _logged(log, offset, start.ready_log):
        missing.append(f"the log line '{start.ready_log}'")
    if start.ready_http and not _answers(fill(start.ready_http, values)):
        missing.append(f"a 2xx from {fill(start.ready_http, values)}")
    if start.ready_lease and not _held(api, namespace, fill(start.ready_lease, values)):
        missing.append(f"lease/{namespace}/{fill(start.ready_lease, values)} held")
    if start.ready_condition and not _condition(api, namespace, start.ready_condition,
                                                values):
        wanted = start.ready_condition
        missing.append(f"condition {wanted['type']}=True on {wanted['resource']['plural']}/"
                       f"{fill(wanted['name'], values)}")
    return missing


def _logged(log: Path, offset: int, line: str) -> bool:
    if not log.exists():
        return False
    with log.open("rb") as handle:
        handle.seek(offset)
        return line.encode() in handle.read()


def _answers(url: str) -> bool:
    """A 2xx from the URL; an https one is asked as a kubelet's HTTPS probe asks, its
    certificate not verified (an implementation's own key pair, made by it as it starts)."""
    unverified = ssl._create_unverified_context() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, timeout=1, context=unverified) as response:
            return 200 <= response.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _held(api: client.ApiClient, namespace: str, name: str) -> bool:
    try:
        lease = client.CoordinationV1Api(api).read_namespaced_lease(name, namespace)
    except ApiException:
        return False
    return bool(lease.spec and lease.spec.holder_identity)


def _condition(api: client.ApiClient, namespace: str, wanted: dict[str, Any],
               values: dict[str, str]) -> bool:
    resource = wanted["resource"]
    try:
        obj = client.CustomObjectsApi(api).get_namespaced_custom_object(
            resource["group"], resource["version"], namespace, resource["plural"],
            fill(wanted["name"], values))
    except ApiException:
        return False
    return any(c.get("type") == wanted["type"] and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])
