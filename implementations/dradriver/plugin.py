"""The node side (what the kubelet plugin would do on each node): prepare the allocated devices
of a bound pod's claims, unprepare them when it terminates or goes; every step one JSON line."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes import client

from implementations.dradriver import node as nodes
from implementations.dradriver.cache import Reflector
from implementations.dradriver.node import Ledger, Prepared, Wait
from implementations.dradriver.publisher import RESOURCE_APIS

log = logging.getLogger("dradriver")


class PrepareLog:
    def __init__(self, path: Path, driver: str):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = path.open("a", encoding="utf-8")
        self.driver = driver

    def write(self, action: str, entry: Prepared) -> None:
        line = nodes.log_line(action, entry, self.driver, time.time())
        self.file.write(json.dumps(line) + "\n")
        self.file.flush()


def _claim_ref(claim: str) -> str:
    return f"resourceclaim/{claim}"


class Plugin:
    def __init__(self, api: client.ApiClient, wake: threading.Event, *, version: str,
                 driver: str, variant: str, namespace: str | None, prepare_log: Path):
        core, resource = client.CoreV1Api(api), RESOURCE_APIS[version](api)
        self.driver, self.variant, self.wake = driver, variant, wake
        if namespace:
            self.pods = Reflector(core.list_namespaced_pod, self._on_pod, "pods",
                                  namespace=namespace)
            self.claims = Reflector(resource.list_namespaced_resource_claim, self._on_claim,
                                    "resourceclaims", namespace=namespace)
        else:
            self.pods = Reflector(core.list_pod_for_all_namespaces, self._on_pod, "pods")
            self.claims = Reflector(resource.list_resource_claim_for_all_namespaces,
                                    self._on_claim, "resourceclaims")
        self.reflectors = (self.pods, self.claims)
        self.out = PrepareLog(prepare_log, driver)
        self.ledger = Ledger(variant)
        self._lock = threading.Lock()
        self._terminating: set[str] = set()  # pod uids seen being deleted with a grace period
        self._gone: list[tuple[str, str, bool]] = []  # (uid, <ns>/<name>, force-deleted)
        self._waiting: set[tuple[str, str, str, str]] = set()  # logged once each

    # ------------------------------------------------------------ watch handlers (threads)

    def _on_pod(self, kind: str, pod: dict[str, Any]) -> None:
        uid = pod["metadata"]["uid"]
        with self._lock:
            if kind == "DELETED":
                self._gone.append((uid, nodes.pod_key(pod), uid not in self._terminating))
                self._terminating.discard(uid)
            elif nodes.terminating_gracefully(pod):
                self._terminating.add(uid)
        self.wake.set()

    def _on_claim(self, _kind: str, _claim: dict[str, Any]) -> None:
        self.wake.set()

    # ------------------------------------------------------------ reconcile (main thread)

    def reconcile(self) -> None:
        """Departures first, so a device they free is free for this round's prepares."""
        with self._lock:
            gone, self._gone = self._gone, []
        for uid, key, forced in gone:
            if forced and uid in self.ledger.pods():
                log.info("pod/%s vanished without terminating (force-deleted)", key)
            self._release(uid, key, forced)
        for pod in self.pods.items():
            if nodes.terminal(pod):
                self._release(pod["metadata"]["uid"], nodes.pod_key(pod), False)
            elif nodes.wants_devices(pod):
                self._prepare_pod(pod)

    def _release(self, uid: str, key: str, forced: bool) -> None:
        for entry in self.ledger.release(uid, forced):
            self.out.write("unprepare", entry)
            log.info("unprepared device %s on node/%s for %s (claim %s): pod/%s done",
                     entry.device, entry.node, _claim_ref(entry.claim), entry.claim_uid, key)

    def _prepare_pod(self, pod: dict[str, Any]) -> None:
        names = nodes.pod_claim_names(pod)
        if names is None:
            return  # a template's claim not made yet: next round
        namespace = pod["metadata"]["namespace"]
        for name in names:
            claim = self.claims.get(f"{namespace}/{name}")
            if claim is None or not nodes.reserved_for(claim, pod["metadata"]["uid"]):
                continue  # the claim cache is behind the pod's binding: next round
            self._prepare_claim(pod, claim)

    def _prepare_claim(self, pod: dict[str, Any], claim: dict[str, Any]) -> None:
        node, pod_uid = pod["spec"]["nodeName"], pod["metadata"]["uid"]
        claim_uid, ref = claim["metadata"]["uid"], nodes.pod_key(claim)
        if self.ledger.uses(node, claim_uid, pod_uid):
            return
        devices = nodes.node_devices(claim, self.driver, node)
        if not devices:
            return
        held = dict(self.ledger.on(node))
        decision = nodes.decide(held, devices, claim_uid, self.variant)
        if isinstance(decision, Wait):
            self._wait(node, decision, claim_uid)
            return
        self._waiting = {k for k in self._waiting if k[3] != claim_uid}
        for entry in self.ledger.prepare(node, decision.devices, ref, claim_uid, pod_uid,
                                         nodes.pod_key(pod)):
            self.out.write("prepare", entry)
            before = held.get(entry.device)
            over = f", over claim {before.claim_uid}" if before else ""
            log.info("prepared device %s on node/%s for %s (claim %s) of pod/%s%s",
                     entry.device, node, _claim_ref(ref), claim_uid, entry.pod, over)

    def _wait(self, node: str, wait: Wait, claim_uid: str) -> None:
        key = (node, wait.device, wait.holder_uid, claim_uid)
        if key not in self._waiting:
            self._waiting.add(key)
            log.info("waiting: device %s on node/%s still prepared for claim %s",
                     wait.device, node, wait.holder_uid)
