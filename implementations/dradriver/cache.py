"""List, then watch, one resource into a cache of raw objects, telling a handler of every event
in order (the driver needs to know whether a pod was seen terminating before it went)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes.client.exceptions import ApiException
from kubernetes.watch import Watch

WATCH_SECONDS = 60
log = logging.getLogger("dradriver")
Handler = Callable[[str, dict[str, Any]], None]


def key_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


class Reflector:
    """A relist (after a dropped or expired watch) reports what vanished meanwhile as DELETED."""

    def __init__(self, list_fn: Callable[..., Any], handler: Handler, kind: str,
                 **selectors: str):
        self.list_fn, self.handler, self.kind = list_fn, handler, kind
        self.selectors = {k: v for k, v in selectors.items() if v}
        self.synced = threading.Event()
        self._lock = threading.Lock()
        self._items: dict[str, dict[str, Any]] = {}

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"reflector-{self.kind}", daemon=True).start()

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._items.values())

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.get(key)

    def _run(self) -> None:
        version: str | None = None
        while True:
            try:
                if version is None:
                    version = self._list()
                version = self._watch(version)
            except ApiException as exc:
                if exc.status == 410:
                    version = None  # expired: list again
                else:
                    log.warning("watch of %s failed: %s %s", self.kind, exc.status, exc.reason)
                    time.sleep(1)
            except Exception as exc:  # connection dropped: list again
                log.warning("watch of %s failed: %s", self.kind, exc)
                version = None
                time.sleep(1)

    def _list(self) -> str:
        body = json.loads(self.list_fn(_preload_content=False, **self.selectors).data)
        fresh = {key_of(o): o for o in body.get("items") or []}
        with self._lock:
            old, self._items = self._items, fresh
        for key, obj in old.items():
            if fresh.get(key, {}).get("metadata", {}).get("uid") != obj["metadata"].get("uid"):
                self.handler("DELETED", obj)
        for key, obj in fresh.items():
            self.handler("MODIFIED" if key in old else "ADDED", obj)
        self.synced.set()
        return body["metadata"]["resourceVersion"]

    def _watch(self, version: str) -> str:
        watch = Watch(return_type=object)  # raw dicts, no models; still tracks the version
        for event in watch.stream(self.list_fn, resource_version=version,
                                  allow_watch_bookmarks=True, timeout_seconds=WATCH_SECONDS,
                                  **self.selectors):
            kind, obj = event["type"], event["raw_object"]
            if kind not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            with self._lock:
                if kind == "DELETED":
                    self._items.pop(key_of(obj), None)
                else:
                    self._items[key_of(obj)] = obj
            self.handler(kind, obj)
        return watch.resource_version or version
