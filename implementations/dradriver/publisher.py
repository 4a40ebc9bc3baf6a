"""The controller side: the driver's DeviceClass, and one ResourceSlice per (selected) node
with devices, kept in sync with the nodes."""

from __future__ import annotations

import logging
import threading
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from implementations.dradriver.cache import Reflector
from implementations.dradriver.slices import (
    DEVICES_LABEL,
    GROUP,
    Create,
    Delete,
    NodeDevices,
    device_class_body,
    device_count,
    plan_slices,
    slice_body,
    slice_name,
)

log = logging.getLogger("dradriver")
# The same methods and object shapes in both versions (for what this driver uses).
ResourceApi = client.ResourceV1Api | client.ResourceV1beta2Api
RESOURCE_APIS: dict[str, type[ResourceApi]] = {"v1": client.ResourceV1Api,
                                                "v1beta2": client.ResourceV1beta2Api}


class Publisher:
    def __init__(self, api: client.ApiClient, wake: threading.Event, *, version: str,
                 driver: str, namespace: str, node_selector: str | None):
        self.core, self.resource = client.CoreV1Api(api), RESOURCE_APIS[version](api)
        self.api_version = f"{GROUP}/{version}"
        self.driver, self.namespace, self.wake = driver, namespace, wake
        self._warned: set[tuple[str, str]] = set()  # (node, label value) warned about once
        self.nodes = Reflector(self.core.list_node, self._changed, "nodes",
                               label_selector=node_selector or "")
        self.slices = Reflector(self.resource.list_resource_slice, self._changed, "resourceslices",
                                field_selector=f"spec.driver={driver}")
        self.reflectors = (self.nodes, self.slices)

    def _changed(self, _kind: str, _obj: dict[str, Any]) -> None:
        self.wake.set()

    def create_device_class(self) -> None:
        try:
            self.resource.create_device_class(device_class_body(self.driver, self.api_version))
        except ApiException as exc:
            if exc.status != 409:
                raise
            log.debug("skipped create of deviceclass/%s: exists already", self.driver)
            return
        log.info("created deviceclass/%s", self.driver)

    def _node(self, node: dict[str, Any]) -> NodeDevices:
        meta = node["metadata"]
        label = (meta.get("labels") or {}).get(DEVICES_LABEL)
        count = device_count(label)
        if count is None:
            if (meta["name"], label) not in self._warned:
                self._warned.add((meta["name"], label))
                log.warning("node/%s: label %s=%r is not a non-negative integer; no devices",
                            meta["name"], DEVICES_LABEL, label)
            count = 0
        return NodeDevices(meta["uid"], count)

    def plan(self) -> list[Create | Delete]:
        nodes = {n["metadata"]["name"]: self._node(n) for n in self.nodes.items()}
        return plan_slices(nodes, self.slices.items(), driver=self.driver,
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
        body = slice_body(action.node, action.node_uid, driver=self.driver,
                          count=action.devices, namespace=self.namespace,
                          api_version=self.api_version)
        try:
            self.resource.create_resource_slice(body)
        except ApiException as exc:
            if exc.status != 409:
                raise
            log.debug("skipped create of resourceslice/%s: exists already", name)
            return
        log.info("published resourceslice/%s for node/%s (%d devices)", name, action.node,
                 action.devices)

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
