"""The recorder: lists then watches every relevant resource directly on the apiserver (never
through a fault proxy) and appends each event to the timeline with the recorder's clock.

On 410 Gone (or a watch that cannot resume) it records an explicit gap, re-lists, records the
differences, and closes the gap: a check spanning the gap answers "unknown", never "pass".
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client, config

from aftershock.timeline.audit import AuditTail
from aftershock.timeline.entry import GAP_END, GAP_START, WATCH
from aftershock.timeline.resources import DEFAULT_RESOURCES, Resource
from aftershock.timeline.store import Timeline

WATCH_SECONDS = 240
PAGE = 500


class Gone(Exception):
    """The watch's resourceVersion is too old (HTTP 410)."""


class RawApi:
    """Plain JSON over the kubeconfig's TLS identity: no model (de)serialisation in the hot path."""

    def __init__(self, kubeconfig: Path | str, context: str | None = None):
        configuration = client.Configuration()
        config.load_kube_config(config_file=str(kubeconfig), context=context,
                                client_configuration=configuration, persist_config=False)
        self.host = configuration.host.rstrip("/")
        self.headers = {"Accept": "application/json"}
        token = (configuration.api_key or {}).get("authorization") or \
            (configuration.api_key or {}).get("BearerToken")
        if token:
            self.headers["Authorization"] = token
        self.pool = urllib3.PoolManager(
            num_pools=4, maxsize=64, ca_certs=configuration.ssl_ca_cert,
            cert_file=configuration.cert_file, key_file=configuration.key_file,
            cert_reqs="CERT_REQUIRED" if configuration.verify_ssl else "CERT_NONE")

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        response = self.pool.request("GET", f"{self.host}{path}", fields=params,
                                     headers=self.headers, timeout=30.0)
        if response.status == 410:
            raise Gone(path)
        if response.status != 200:
            raise RuntimeError(f"GET {path}: HTTP {response.status}: {response.data[:300]!r}")
        return json.loads(response.data)

    def open_watch(self, path: str, **params: Any) -> urllib3.BaseHTTPResponse:
        return self.pool.request(
            "GET", f"{self.host}{path}", fields={"watch": "true", **params}, headers=self.headers,
            preload_content=False, timeout=urllib3.Timeout(connect=10.0, read=None))


def lines(response: urllib3.BaseHTTPResponse) -> Iterable[bytes]:
    """Each newline-terminated JSON frame, as soon as its chunk arrives."""
    buffer = b""
    for chunk in response.stream(amt=None, decode_content=True):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


class Recorder:
    def __init__(self, timeline: Timeline, kubeconfig: Path | str, context: str | None = None,
                 resources: Iterable[Resource] = DEFAULT_RESOURCES,
                 audit_log: Path | None = None):
        self.timeline = timeline
        self.api = RawApi(kubeconfig, context)
        self.resources = list(resources)
        self.audit = AuditTail(audit_log, timeline) if audit_log else None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._responses: dict[str, urllib3.BaseHTTPResponse] = {}
        self._last_rv: dict[str, int] = {}
        self.anomalies: list[str] = []
        self.errors: list[str] = []

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> Recorder:
        """List every resource (in parallel), then watch each from its list's version.
        Returns once every list is recorded, so nothing done after start() is missed."""
        versions: dict[str, tuple[Resource, str]] = {}
        listers = [threading.Thread(target=self._initial_list, args=(r, versions), daemon=True)
                   for r in self.resources]
        for thread in listers:
            thread.start()
        for thread in listers:
            thread.join()
        for wanted in self.resources:
            if wanted.name not in versions:
                continue  # not served by this cluster (e.g. a CRD not installed yet)
            resource, version = versions[wanted.name]
            thread = threading.Thread(target=self._watch_loop, name=f"watch-{resource.name}",
                                      args=(resource, version), daemon=True)
            thread.start()
            self._threads.append(thread)
        if self.audit:
            self.audit.start()
        return self

    def watch(self, resource: Resource) -> None:
        """Record one more resource from now on (e.g. a CRD the implementation installed):
        its objects as they are now, then every change."""
        if any(r.name == resource.name and r.group_version == resource.group_version
               for r in self.resources):
            return
        versions: dict[str, tuple[Resource, str]] = {}
        self._initial_list(resource, versions)
        if resource.name not in versions:
            raise RuntimeError(f"the cluster does not serve {resource.path}")
        self.resources.append(resource)
        served, version = versions[resource.name]
        thread = threading.Thread(target=self._watch_loop, name=f"watch-{resource.name}",
                                  args=(served, version), daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for response in list(self._responses.values()):
            with contextlib.suppress(Exception):  # already closed: nothing left to stop
                response.shutdown()
        for thread in self._threads:
            thread.join(timeout=5)
        if self.audit:
            self.audit.stop()

    @property
    def has_audit(self) -> bool:
        return self.audit is not None

    def sync_audit(self) -> bool:
        """Before judging who did what: read the audit log past this moment."""
        if self.audit:
            return self.audit.read_until(time.time())
        return False

    # --- listing --------------------------------------------------------------------------

    def _list_all(self, resource: Resource) -> tuple[list[dict[str, Any]], str]:
        items, token = [], None
        while True:
            params: dict[str, Any] = {"limit": PAGE}
            if token:
                params["continue"] = token
            page = self.api.get(resource.path, **params)
            items += page.get("items") or []
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items, page["metadata"]["resourceVersion"]

    def _initial_list(self, wanted: Resource,
                      versions: dict[str, tuple[Resource, str]]) -> None:
        """List the first served of the resource's versions; versions[name] says which."""
        for resource in wanted.candidates():
            try:
                items, version = self._list_all(resource)
            except RuntimeError as exc:
                if "HTTP 404" not in str(exc):
                    self.errors.append(f"list {resource.name}: {exc}")
                    return
                continue
            for item in items:
                self._record(resource, "SYNC", item)
            versions[resource.name] = (resource, version)
            return

    # --- watching -------------------------------------------------------------------------

    def _watch_loop(self, resource: Resource, version: str) -> None:
        while not self._stop.is_set():
            try:
                version = self._watch_once(resource, version)
            except Gone:
                version = self._relist(resource, "410 Gone")
            except Exception as exc:
                if self._stop.is_set():
                    return
                self.errors.append(f"watch {resource.name}: {exc!r}")
                self._stop.wait(0.2)  # connection lost: resume from the last version

    def _watch_once(self, resource: Resource, version: str) -> str:
        response = self.api.open_watch(resource.path, resourceVersion=version,
                                       allowWatchBookmarks="true", timeoutSeconds=WATCH_SECONDS)
        self._responses[resource.name] = response
        try:
            if response.status == 410:
                raise Gone(resource.name)
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}")
            for line in lines(response):
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone(resource.name)
                    raise RuntimeError(obj.get("message", "watch error"))
                version = _meta(obj).get("resourceVersion", version)
                if kind != "BOOKMARK":
                    self._record(resource, kind, obj)
            return version
        finally:
            self._responses.pop(resource.name, None)
            response.release_conn()

    def _record(self, resource: Resource, kind: str, obj: dict[str, Any], **extra: Any) -> None:
        meta = _meta(obj)
        rv = meta.get("resourceVersion", "")
        if not extra.get("relisted"):
            self._check_order(resource, kind, rv)
        self.timeline.append(WATCH, resource=resource.name, namespace=meta.get("namespace", ""),
                             name=meta.get("name", ""), uid=meta.get("uid", ""), rv=rv,
                             type=kind, object=obj, extra=extra)

    def _check_order(self, resource: Resource, kind: str, rv: str) -> None:
        """Watch events of one resource arrive in increasing resourceVersion; anything else
        means the stream is not the history it claims to be."""
        if kind == "SYNC" or not rv.isdigit():
            return
        number = int(rv)
        last = self._last_rv.get(resource.name, 0)
        if number <= last:
            self.anomalies.append(f"{resource.name}: resourceVersion {number} after {last}")
        self._last_rv[resource.name] = max(last, number)

    def _relist(self, resource: Resource, why: str) -> str:
        """Record a gap, re-list, record what changed meanwhile, close the gap."""
        self.timeline.append(GAP_START, resource=resource.name, detail=why)
        while not self._stop.is_set():
            try:
                items, version = self._list_all(resource)
                break
            except Exception as exc:
                self.errors.append(f"relist {resource.name}: {exc!r}")
                self._stop.wait(0.5)
        else:
            return ""
        known = {key: obj for key, obj in self.timeline.snapshot().items()
                 if key[0] == resource.name}
        for item in items:
            meta = _meta(item)
            key = (resource.name, meta.get("namespace", ""), meta.get("name", ""))
            before = known.pop(key, None)
            if before is None:
                self._record(resource, "ADDED", item, relisted=True)
            elif _meta(before).get("resourceVersion") != meta.get("resourceVersion"):
                self._record(resource, "MODIFIED", item, relisted=True)
        for obj in known.values():
            self._record(resource, "DELETED", obj, relisted=True)
        self._last_rv[resource.name] = int(version) if version.isdigit() else 0
        self.timeline.append(GAP_END, resource=resource.name, detail=f"re-listed at {version}")
        return version
