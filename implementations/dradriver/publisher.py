"""The controller side: one ResourceSlice per (selected) node, kept in sync with the nodes."""

from __future__ import annotations

import logging
import threading
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from implementations.dradriver.cache import Reflector
from implementations.dradriver.slices import Create, Delete, plan_slices, slice_body, slice_name

log = logging.getLogger("dradriver")


class Publisher:
    def __init__(self, api: client.ApiClient, wake: threading.Event, *, driver: str,
                 count: int, namespace: str, node_selector: str | None):
        self.core, self.resource = client.CoreV1Api(api), client.ResourceV1Api(api)
        self.driver, self.count, self.namespace = driver, count, namespace
        self.wake = wake
        self.nodes = Reflector(self.core.list_node, self._changed, "nodes",
                               label_selector=node_selector or "")
        self.slices = Reflector(self.resource.list_resource_slice, self._changed, "resourceslices",
                                field_selector=f"spec.driver={driver}")
        self.reflectors = (self.nodes, self.slices)

    def _changed(self, _kind: str, _obj: dict[str, Any]) -> None:
        self.wake.set()

    def plan(self) -> list[Create | Delete]:
        nodes = {n["metadata"]["name"]: n["metadata"]["uid"] for n in self.nodes.items()}
        return plan_slices(nodes, self.slices.items(), driver=self.driver, count=self.count,
                           namespace=self.namespace)

    def reconcile(self) -> list[Create | Delete]:
        actions = self.plan()
        for action in actions:
            try:
                if isinstance(action, Delete):
                    self._delete(action)
                else:
                    self._create(action)
            except ApiException as exc:
                log.warning("%s failed: %s %s", action, exc.status, exc.reason)
        return actions

    def _live_uid(self, node: str) -> str | None:
        """The node as the API server has it now: the cache may be behind its deletion."""
        try:
            return self.core.read_node(node).metadata.uid
        except ApiException as exc:
            if exc.status != 404:
                raise
            return None

    def _create(self, action: Create) -> None:
        name = slice_name(action.node, self.driver)
        if self._live_uid(action.node) != action.node_uid:
            log.info("skipped resourceslice/%s: node/%s is gone", name, action.node)
            return
        body: dict[str, Any] = slice_body(action.node, action.node_uid, driver=self.driver,
                                          count=self.count, namespace=self.namespace)
        try:
            self.resource.create_resource_slice(body)
        except ApiException as exc:
            if exc.status != 409:
                raise
            log.debug("skipped create of resourceslice/%s: exists already", name)
            return
        log.info("published resourceslice/%s for node/%s (%d devices)", name, action.node,
                 self.count)

    def _delete(self, action: Delete) -> None:
        options = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=action.uid))
        try:
            self.resource.delete_resource_slice(action.name, body=options)
        except ApiException as exc:
            if exc.status not in (404, 409):
                raise
            log.debug("skipped delete of resourceslice/%s: gone already", action.name)
            return
        log.info("deleted resourceslice/%s: %s", action.name, action.why)
