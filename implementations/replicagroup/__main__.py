"""python -m implementations.replicagroup --variant faulty|correct [--kubeconfig K] --namespace N"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import threading
import time

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.informer.informer import SharedInformer

from implementations import load_config

GROUP, VERSION, PLURAL = "aftershock.io", "v1", "replicagroups"
GROUP_LABEL, ROLE_LABEL = "aftershock.io/group", "aftershock.io/role"
EXPECTATIONS_TIMEOUT = 30.0
log = logging.getLogger("replicagroup")


class Expectations:
    """Per group: how many creations/deletions were issued and not yet observed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[int, int, float]] = {}

    def expect(self, group: str, adds: int, dels: int) -> None:
        with self._lock:
            self._pending[group] = (adds, dels, time.monotonic())

    def observed(self, group: str, added: int = 0, deleted: int = 0) -> None:
        with self._lock:
            adds, dels, since = self._pending.get(group, (0, 0, 0.0))
            self._pending[group] = (max(0, adds - added), max(0, dels - deleted), since)

    def satisfied(self, group: str) -> bool:
        with self._lock:
            adds, dels, since = self._pending.get(group, (0, 0, 0.0))
            return (adds == 0 and dels == 0) or time.monotonic() - since > EXPECTATIONS_TIMEOUT


class Controller:
    def __init__(self, api: client.ApiClient, namespace: str, variant: str):
        self.core = client.CoreV1Api(api)
        self.objects = client.CustomObjectsApi(api)
        self.namespace, self.variant = namespace, variant
        self.expectations = Expectations()
        self.pods = SharedInformer(self.core.list_namespaced_pod, namespace=namespace)
        self.wake = threading.Event()
        self.terminating: set[str] = set()

    def start(self) -> None:
        self.pods.add_event_handler("ADDED", lambda pod: self._seen(pod, added=1))
        self.pods.add_event_handler("DELETED", self._deleted)
        self.pods.add_event_handler("MODIFIED", self._modified)
        self.pods.start()
        # Both variants wait for the first list, as client-go controllers WaitForCacheSync: a
        # restarted controller that reconciles from an empty cache re-creates every pod.
        while self.pods._resource_version is None:  # the informer has no synced flag
            time.sleep(0.02)

    def _deleted(self, pod) -> None:
        if pod.metadata.uid not in self.terminating:  # counted when it began terminating
            self._seen(pod, deleted=1)
        else:
            self.terminating.discard(pod.metadata.uid)
            self.wake.set()

    def _modified(self, pod) -> None:
        # A pod held by a finalizer is never DELETED; its deletionTimestamp is the deletion
        # this controller asked for (as the ReplicaSet controller counts it).
        uid = pod.metadata.uid
        if pod.metadata.deletion_timestamp and uid not in self.terminating:
            self.terminating.add(uid)
            self._seen(pod, deleted=1)
        self.wake.set()

    def _seen(self, pod, added: int = 0, deleted: int = 0) -> None:
        group = (pod.metadata.labels or {}).get(GROUP_LABEL)
        if group:
            self.expectations.observed(group, added, deleted)
        self.wake.set()

    def run(self) -> None:
        while True:
            try:
                groups = self.objects.list_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL)["items"]
                for group in groups:
                    self.reconcile(group)
            except ApiException as exc:
                log.warning("reconcile failed: %s", exc.reason)
            self.wake.wait(0.2)
            self.wake.clear()

    def _cached_pods(self, name: str, role: str) -> list:
        return [p for p in self.pods.cache.list()
                if (p.metadata.labels or {}).get(GROUP_LABEL) == name
                and (p.metadata.labels or {}).get(ROLE_LABEL) == role
                and not p.metadata.deletion_timestamp]

    def reconcile(self, group: dict) -> None:
        name = group["metadata"]["name"]
        spec = group["spec"]
        if self.variant == "correct" and not self.expectations.satisfied(name):
            return  # not acting again before observing what it already did
        wanted = {"worker": int(spec["replicas"]), "head": 1 if spec.get("head") else 0}
        plans = {role: (desired, self._cached_pods(name, role)) for role, desired in wanted.items()}
        adds = sum(max(0, desired - len(pods)) for desired, pods in plans.values())
        dels = sum(max(0, len(pods) - desired) for desired, pods in plans.values())
        if not (adds or dels):
            return
        # Expect before acting: the watch may report a pod before create() returns.
        self.expectations.expect(name, adds, dels)
        for role, (desired, pods) in plans.items():
            diff = desired - len(pods)
            for _ in range(max(0, diff)):
                self._create(group, role)
            if diff < 0:
                victims = random.sample(pods, -diff) if self.variant == "faulty" else \
                    sorted(pods, key=lambda p: p.metadata.creation_timestamp)[diff:]
                for pod in victims:
                    self._delete(pod)

    def _create(self, group: dict, role: str) -> None:
        name = group["metadata"]["name"]
        finalizer = group["spec"].get("finalizer")
        metadata = {"generateName": f"{name}-{role}-",
                    "labels": {GROUP_LABEL: name, ROLE_LABEL: role,
                               "app.kubernetes.io/name": name},
                    "ownerReferences": [{"apiVersion": f"{GROUP}/{VERSION}",
                                         "kind": "ReplicaGroup", "name": name,
                                         "uid": group["metadata"]["uid"], "controller": True}]}
        if finalizer:
            metadata["finalizers"] = [finalizer]
        pod = {"metadata": metadata,
               "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                        "terminationGracePeriodSeconds": 0}}
        try:
            created = self.core.create_namespaced_pod(self.namespace, pod)
        except ApiException:
            self.expectations.observed(name, added=1)  # this one will never be seen
            raise
        log.info("created pod/%s/%s", self.namespace, created.metadata.name)

    def _delete(self, pod) -> None:
        try:
            self.core.delete_namespaced_pod(pod.metadata.name, self.namespace)
            log.info("deleted pod/%s/%s", self.namespace, pod.metadata.name)
        except ApiException as exc:
            if exc.status != 404:
                group = (pod.metadata.labels or {}).get(GROUP_LABEL, "")
                self.expectations.observed(group, deleted=1)  # this one will never be seen
                raise


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("faulty", "correct"), required=True)
    parser.add_argument("--kubeconfig", help="default: $KUBECONFIG, else in-cluster")
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    # as a container's first process SIGTERM would be ignored until the grace period ends;
    # nothing to clean up, and the informer's threads would hold up a plain exit
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    configuration = load_config(args.kubeconfig)
    controller = Controller(client.ApiClient(configuration), args.namespace, args.variant)
    controller.start()
    log.info("started replicagroup (%s) in namespace %s", args.variant, args.namespace)
    controller.run()


if __name__ == "__main__":
    main()
