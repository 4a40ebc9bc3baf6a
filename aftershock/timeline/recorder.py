"""The recorder: lists then watches every relevant resource directly on the apiserver (never
through a fault proxy) and appends each event to the timeline with the recorder's clock.

On 410 Gone (or a list that failed) it records an explicit gap, re-lists, and closes the gap with
one entry that carries every difference the re-list found, applied at once: no state between the
old and the new one is ever judged. A check spanning the gap answers "unknown", never "pass".
Its own failures and anomalies are entries of the timeline too, so the judges see them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import urllib3

from aftershock.kube.api import load_config
from aftershock.timeline.audit import AuditTail
from aftershock.timeline.collector import OutOfCollector
from aftershock.timeline.entry import ANOMALY, ERROR, GAP_END, GAP_START, WATCH
from aftershock.timeline.resources import DEFAULT_RESOURCES, Resource, spelled
from aftershock.timeline.state import State
from aftershock.timeline.store import Timeline

WATCH_SECONDS = 240
PAGE = 500
# How long a judgement waits for every watch to deliver what a list shows (the recorder's lag
# at 1,000 nodes is 0.2 s at p99): past it, the watch's last stretch is a gap.
CATCH_UP = 10.0
UNLISTABLE = "served with no list or watch"


class Gone(Exception):
    """The watch's resourceVersion is too old (HTTP 410)."""


class RawApi:
    """Plain JSON over the kubeconfig's TLS identity: no model (de)serialisation in the hot path."""

    def __init__(self, kubeconfig: Path | str, context: str | None = None):
        configuration = load_config(kubeconfig, context)
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

    def mark_audit_log(self) -> None:
        """One audited request that persists nothing (a SelfSubjectReview): its audit event is
        stamped after this moment, so reading up to it proves the log has caught up."""
        body = json.dumps({"apiVersion": "authentication.k8s.io/v1",
                           "kind": "SelfSubjectReview"}).encode()
        self.pool.request("POST", f"{self.host}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                          body=body, headers={**self.headers, "Content-Type": "application/json"},
                          timeout=10.0)

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


def last_write(obj: dict[str, Any]) -> str:
    """When the object was last written, on the API server's clock (whole seconds): the newest
    time its managedFields give, or its creation."""
    meta = _meta(obj)
    times = [f.get("time") or "" for f in meta.get("managedFields") or []]
    return max([*times, meta.get("creationTimestamp") or ""])


def _revision(meta: dict[str, Any]) -> int:
    version = meta.get("resourceVersion") or ""
    return int(version) if version.isdigit() else 0


def level(resource: str, recorded: dict[tuple[str, str, str], dict[str, Any]],
          listed: dict[tuple[str, str], int], version: int = 0) -> bool:
    """Whether the recorded objects of one resource have caught up with a list made at
    ``version``: each listed object recorded at its listed revision or later, and no recorded
    object that the list lacks at a revision below it (``missed``: its deletion not yet
    delivered)."""
    for (namespace, name), revision in listed.items():
        obj = recorded.get((resource, namespace, name))
        if obj is None or _revision(_meta(obj)) < revision:
            return False
    return not missed(resource, recorded, listed, version)


def missed(resource: str, recorded: dict[tuple[str, str, str], dict[str, Any]],
           listed: dict[tuple[str, str], int], version: int) -> list[dict[str, Any]]:
    """The recorded objects of one resource that a list at ``version`` no longer has, each
    recorded at a revision below it: deleted before the list, and that deletion not (yet)
    delivered by the watch."""
    return [obj for (kind, namespace, name), obj in recorded.items()
            if kind == resource and (namespace, name) not in listed
            and _revision(_meta(obj)) < version]


def _trimmed(obj: dict[str, Any], resource: str = "") -> dict[str, Any]:
    """The object without managedFields (who wrote which field is the audit log's to say, and
    they are most of an object's size), and a Secret without its values: each becomes a digest,
    so a change still shows and nothing secret reaches the history or a report."""
    meta = obj.get("metadata")
    if meta and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    if resource == "secrets":
        obj = {**obj, **{field: {key: _digest(value) for key, value in obj[field].items()}
                         for field in ("data", "stringData") if isinstance(obj.get(field), dict)}}
    return obj


def recorded_form(obj: dict[str, Any], resource: str) -> dict[str, Any]:
    """The object as the history holds it: what a step compares with the history (a partial
    manifest of a Secret's values) is put in the same form, digests with digests."""
    return _trimmed(obj, resource)


def _deletions(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "DELETED", "object": obj} for obj in objects]


def _digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(str(value).encode()).hexdigest()[:16]


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
        self._versions: dict[str, str] = {}  # where each watch resumes, carried through errors
        self._served: dict[str, Resource] = {}  # the version of each resource being watched
        self._last_mono: dict[str, float] = {}  # when each resource last changed on the timeline
        self._lagging: set[str] = set()  # watches found behind a list, until they catch up
        self.anomalies: list[str] = []
        self.errors: list[str] = []
        self._fence = OutOfCollector()
        self._unwatchable: set[str] = set()  # plurals asked for that cannot be recorded
        # API group → its versions, the preferred one first
        self._preferred: dict[str, list[str]] | None = None

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> Recorder:
        """List every resource (in parallel), then watch each from its list's version.
        Returns once every list is recorded, so nothing done after start() is missed."""
        versions: dict[str, tuple[Resource, str | None]] = {}
        listers = [threading.Thread(target=self._initial_list, args=(r, versions), daemon=True)
                   for r in self.resources]
        for thread in listers:
            thread.start()
        for thread in listers:
            thread.join()
        self.timeline.mark("recording", recording={
            r.name: versions[r.name][0].group_version for r in self.resources
            if r.name in versions},
            audit=self.audit is not None,
            unserved=[r.name for r in self.resources if r.name not in versions])
        for wanted in self.resources:
            if wanted.name not in versions:
                continue  # not served by this cluster (e.g. a CRD not installed yet)
            self._follow(*versions[wanted.name])
        if self.audit:
            self.audit.start()
        return self

    def _follow(self, resource: Resource, version: str | None) -> None:
        """Watch from ``version``; None (the list failed) re-lists first, inside a gap."""
        self._versions[resource.name] = version or ""
        self._served[resource.name] = resource
        thread = threading.Thread(target=self._watch_loop, name=f"watch-{resource.name}",
                                  args=(resource, version is None), daemon=True)
        thread.start()
        self._threads.append(thread)

    def watch(self, resource: Resource) -> None:
        """Record one more resource from now on (e.g. a CRD the implementation installed):
        its objects as they are now, then every change."""
        if any(r.name == resource.name and r.group_version == resource.group_version
               for r in self.resources):
            return
        versions: dict[str, tuple[Resource, str | None]] = {}
        self._initial_list(resource, versions)
        if resource.name not in versions:
            raise RuntimeError(f"the cluster does not serve {resource.path}")
        self.resources.append(resource)
        served, version = versions[resource.name]
        self.timeline.mark(f"recording {resource.name}",
                           recording={resource.name: served.group_version})
        self._follow(served, version)

    def record(self, kinds: Iterable[tuple[str, str]]) -> list[str]:
        """Record these kinds too ((API group, plural): every kind an implementation may
        write), from now on, each at the version the cluster prefers (or the first other version
        of its group that serves it). A plural already
        recorded is left as it is. Returns the kinds that cannot be recorded, noted on the
        timeline apart: those this cluster does not serve, and those it serves with no list
        and watch (a create-only kind such as selfsubjectreviews): a judge that needs one says
        which."""
        unserved, unlistable = [], []
        for group, plural in kinds:
            if plural in self._served or plural in self._unwatchable:
                continue
            found = self._discovered(group, plural)
            if not isinstance(found, Resource):
                (unlistable if found == UNLISTABLE else unserved).append(spelled(group, plural))
                self._unwatchable.add(plural)
                continue
            try:
                self.watch(found)
            except RuntimeError:
                unserved.append(spelled(group, plural))
        if unserved:
            self.timeline.mark("not served", unserved=unserved)
        if unlistable:
            self.timeline.mark(UNLISTABLE, unlistable=unlistable)
        return unserved + unlistable

    def _discovered(self, group: str, plural: str) -> Resource | str | None:
        """The listable, watchable resource ``plural`` of ``group`` ("*": any group) at the
        version the cluster prefers, by discovery; UNLISTABLE if it is served only without
        list or watch, None if it is not served."""
        groups = [group] if group != "*" else ["", *self._group_versions()]
        served = False
        for name in groups:
            for version in ["v1"] if name == "" else self._group_versions().get(name, []):
                path = "/api/v1" if name == "" else f"/apis/{name}/{version}"
                with contextlib.suppress(Exception):  # not served: the next version, or none
                    for item in self.api.get(path).get("resources") or ():
                        if item.get("name") != plural:
                            continue
                        if {"list", "watch"} <= set(item.get("verbs") or ()):
                            return Resource(plural, "v1" if name == "" else f"{name}/{version}")
                        served = True
                if served:
                    break
        return UNLISTABLE if served else None

    def _group_versions(self) -> dict[str, list[str]]:
        """Each group's versions, the preferred one first: a kind only another version serves
        (scheduling.k8s.io's Workload beside v1's PriorityClass) is recorded there."""
        if self._preferred is None:
            self._preferred = {}
            with contextlib.suppress(Exception):  # no discovery: nothing more is recorded
                for group in self.api.get("/apis").get("groups") or ():
                    preferred = (group.get("preferredVersion") or {}).get("version")
                    listed = [v.get("version") for v in group.get("versions") or ()
                              if v.get("version") and v.get("version") != preferred]
                    self._preferred[group["name"]] = [*([preferred] if preferred else []),
                                                      *listed]
        return self._preferred

    def stop(self) -> None:
        self._stop.set()
        for response in list(self._responses.values()):
            with contextlib.suppress(Exception):  # already closed: nothing left to stop
                response.shutdown()
        for thread in self._threads:
            thread.join(timeout=5)
        if self.audit:
            self.audit.stop()
        self._fence.release()

    @property
    def has_audit(self) -> bool:
        return self.audit is not None

    def sync_audit(self, timeout: float = 3.0) -> bool:
        """Before judging who did what: read the audit log past this moment, for at most
        ``timeout`` seconds; whether it got there."""
        if not self.audit:
            return False
        wall = time.time()
        with contextlib.suppress(Exception):  # then only other writes can move the log
            self.api.mark_audit_log()
        return self.audit.read_until(wall, timeout)

    def catch_up(self, timeout: float = CATCH_UP) -> list[str]:
        """Before a judgement: wait until every watch has delivered what a list made now shows
        (every listed object at its listed resourceVersion or later). A watch that stalls
        without an error would otherwise
        leave a stretch in which nothing was recorded looking quiet. Each watch still behind
        after ``timeout`` opens a gap from its last recorded change, closed when a later
        catch-up finds it level; returns those resources."""
        listed: dict[str, tuple[dict[tuple[str, str], int], int]] = {}
        failed: dict[str, str] = {}
        served = dict(self._served)

        def list_one(name: str, resource: Resource) -> None:
            try:
                items, version = self._list_all(resource)
            except Exception as exc:  # whether its watch is level cannot be known: a gap
                failed[name] = repr(exc)[:300]
                return
            listed[name] = ({(_meta(i).get("namespace", ""), _meta(i).get("name", "")):
                             _revision(_meta(i)) for i in items}, int(version or 0))
        threads = [threading.Thread(target=list_one, args=item, daemon=True)
                   for item in served.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        def behind(state: State) -> list[str]:
            # A watch that delivered an event at or past the list's version has delivered
            # everything before it (events come in revision order): what it still lacks then,
            # a deletion, it missed, and waiting will not bring it (closed below).
            return [name for name, (objects, version) in listed.items()
                    if (name not in state.gaps or name in self._lagging)
                    and self._last_rv.get(name, 0) < version
                    and not level(name, state.of(name), objects, version)]
        self.timeline.wait_until(lambda state: not behind(state), timeout)
        state = self.timeline.state()
        # Still behind on what the list shows: a lag. Behind only on deletions once the wait
        # is over: missed, closed with them below.
        late = [name for name in behind(state) if not level(name, state.of(name),
                                                            listed[name][0])]
        for name in sorted(failed):
            if name not in self._lagging and name not in state.gaps:
                self.timeline.append(GAP_START, resource=name, detail=f"the list that checks "
                                     f"its watch failed: {failed[name]}", extra={
                                         "since": self._last_mono.get(name,
                                                                      self.timeline.started)})
            late.append(name)
        for name in sorted(listed):
            objects, version = listed[name]
            gone = [] if name in late or (name in state.gaps and name not in self._lagging) \
                else missed(name, state.of(name), objects, version)
            if name in late and name not in self._lagging:
                self.timeline.append(GAP_START, resource=name, detail=f"the watch had not "
                                     f"caught up with a list at {version} after "
                                     f"{timeout:g}s", extra={"since": self._last_mono.get(
                                         name, self.timeline.started)})
            elif name not in late and name in self._lagging:
                self.timeline.append(GAP_END, resource=name, rv=str(version),
                                     detail="the watch caught up",
                                     extra={"changes": _deletions(gone)})
            elif gone:
                self._close_missed(name, gone, version)
        self._lagging = set(late)
        return late

    def _close_missed(self, resource: str, gone: list[dict[str, Any]], version: int) -> None:
        """Deletions the watch never delivered, closed as a re-list closes a gap: from the
        last recorded change of the first of them (each went some time after it) to now,
        whose changes delete them."""
        keys = {(resource, _meta(o).get("namespace", ""), _meta(o).get("name", "")) for o in gone}
        # its last change the watch delivered: an audited request about it is no change
        last = {entry.key: entry.mono for entry in self.timeline.entries
                if entry.kind == WATCH and entry.key in keys}
        names = ", ".join(sorted(f"{n}/{k}" if n else k for _, n, k in keys))
        self.timeline.append(GAP_START, resource=resource, detail=f"the watch did not deliver "
                             f"the deletion of {resource} {names} (a list at {version} lacks "
                             "them)", extra={"since": min(last.values(), default=time.monotonic())})
        self.timeline.append(GAP_END, resource=resource, rv=str(version),
                             detail=f"closed by the list at {version}: {len(gone)} deletions",
                             extra={"changes": _deletions(gone)})

    def _error(self, resource: Resource, text: str) -> None:
        self.errors.append(f"{resource.name}: {text}")
        self.timeline.append(ERROR, resource=resource.name, detail=text)

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
                      versions: dict[str, tuple[Resource, str | None]]) -> None:
        """List the first served of the resource's versions; versions[name] says which, with
        the version to watch from, or None when the list failed: its history is a gap until a
        re-list succeeds."""
        for resource in wanted.candidates():
            try:
                items, version = self._list_all(resource)
            except Exception as exc:
                if "HTTP 404" in str(exc):
                    continue
                self._error(resource, f"list failed: {exc}")
                versions[resource.name] = (resource, None)
                return
            for item in items:
                self._record(resource, "SYNC", item)
            versions[resource.name] = (resource, version)
            return

    # --- watching -------------------------------------------------------------------------

    def _watch_loop(self, resource: Resource, relist_first: bool) -> None:
        if relist_first:
            self._relist(resource, "the list failed")
        while not self._stop.is_set():
            try:
                self._watch_once(resource)
            except Gone:
                self._relist(resource, "410 Gone")
            except Exception as exc:
                if self._stop.is_set():
                    return
                # Connection lost: resume from the last version recorded, never from where
                # this watch started (that would record its events twice).
                self._error(resource, f"watch broke, resuming at "
                            f"{self._versions[resource.name]}: {exc!r}")
                self._stop.wait(0.2)

    def _watch_once(self, resource: Resource) -> None:
        response = self.api.open_watch(resource.path,
                                       resourceVersion=self._versions[resource.name],
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
                if kind != "BOOKMARK":
                    self._record(resource, kind, obj)
                version = _meta(obj).get("resourceVersion")
                if version:
                    self._versions[resource.name] = version
        finally:
            self._responses.pop(resource.name, None)
            response.release_conn()

    def _record(self, resource: Resource, kind: str, obj: dict[str, Any]) -> None:
        written = last_write(obj)
        obj = _trimmed(obj, resource.name)
        meta = _meta(obj)
        rv = meta.get("resourceVersion", "")
        self._check_order(resource, kind, rv)
        entry = self.timeline.append(
            WATCH, resource=resource.name, namespace=meta.get("namespace", ""),
            name=meta.get("name", ""), uid=meta.get("uid", ""), rv=rv, type=kind, object=obj,
            extra={"written": written} if written else {})
        self._last_mono[resource.name] = entry.mono
        self._fence.grew()

    def _check_order(self, resource: Resource, kind: str, rv: str) -> None:
        """Watch events of one resource arrive in increasing resourceVersion; anything else
        means the stream is not the history it claims to be."""
        if kind == "SYNC" or not rv.isdigit():
            return
        number = int(rv)
        last = self._last_rv.get(resource.name, 0)
        if number <= last:
            text = f"resourceVersion {number} after {last}"
            self.anomalies.append(f"{resource.name}: {text}")
            self.timeline.append(ANOMALY, resource=resource.name, detail=text)
        self._last_rv[resource.name] = max(last, number)

    def _relist(self, resource: Resource, why: str) -> None:
        """Record a gap, re-list, and close the gap with every difference at once."""
        self.timeline.append(GAP_START, resource=resource.name, detail=why)
        while not self._stop.is_set():
            try:
                items, version = self._list_all(resource)
                break
            except Exception as exc:
                self._error(resource, f"re-list failed: {exc!r}")
                self._stop.wait(0.5)
        else:
            return
        known = {key: obj for key, obj in self.timeline.snapshot().items()
                 if key[0] == resource.name}
        changes = []
        for item in map(_trimmed, items):
            meta = _meta(item)
            before = known.pop((resource.name, meta.get("namespace", ""), meta.get("name", "")),
                               None)
            if before is None:
                changes.append({"type": "ADDED", "object": item})
            elif _meta(before).get("resourceVersion") != meta.get("resourceVersion"):
                changes.append({"type": "MODIFIED", "object": item})
        # Deletions first: a reader going through the changes one by one never sees an old
        # object beside its replacement.
        changes[:0] = [{"type": "DELETED", "object": obj} for obj in known.values()]
        self._versions[resource.name] = version
        self._last_rv[resource.name] = int(version) if version.isdigit() else 0
        self.timeline.append(GAP_END, resource=resource.name, rv=version,
                             detail=f"re-listed at {version}: {len(changes)} changes",
                             extra={"changes": changes})
        self._fence.grew(len(changes))
