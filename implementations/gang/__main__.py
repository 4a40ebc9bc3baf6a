"""python -m implementations.gang --variant faulty|correct --kubeconfig K --namespace N"""

from __future__ import annotations

import argparse
import logging
import socket
import threading
import time
from datetime import UTC, datetime
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.informer.informer import SharedInformer
from kubernetes.watch import Watch

from implementations import load_config
from implementations.gang import decisions
from implementations.gang.decisions import GANG_LABEL, GROUP_LABEL, Status

GROUP, VERSION, PLURAL, KIND = "aftershock.io", "v1", "gangs", "Gang"
COMPONENT, PAUSE_IMAGE = "gang-operator", "registry.k8s.io/pause:3.10"
TERMINATED_REASON, ZERO_REASON = "GangTerminated", "ScheduledZero"
POLL, IN_FLIGHT_TIMEOUT, WATCH_SECONDS = 1.0, 30.0, 60
log = logging.getLogger("gang")


class InFlight:
    """Own creations not yet in the pod cache and own deletions not yet seen there: the
    cache is not trusted to count them until it does (or they time out)."""

    def __init__(self) -> None:
        self.created: dict[str, tuple[str, float]] = {}  # pod name -> (gang/index, issued)
        self.deleted: dict[str, float] = {}  # pod uid -> issued

    def prune(self, pods: list[client.V1Pod]) -> None:
        now = time.monotonic()
        names = {p.metadata.name for p in pods}
        live = {p.metadata.uid for p in pods if decisions.is_live(p)}
        self.created = {n: (key, t) for n, (key, t) in self.created.items()
                        if n not in names and now - t < IN_FLIGHT_TIMEOUT}
        self.deleted = {u: t for u, t in self.deleted.items()
                        if u in live and now - t < IN_FLIGHT_TIMEOUT}

    def creating(self, key: str) -> int:
        return sum(1 for k, _ in self.created.values() if k == key)

    def visible(self, pods: list[client.V1Pod]) -> list[client.V1Pod]:
        return [p for p in pods if p.metadata.uid not in self.deleted]


def _synced(informer: SharedInformer) -> bool:
    # SharedInformer has no has_synced(): its resource version is set once the first list is cached.
    return informer._resource_version is not None


class Controller:
    def __init__(self, api: client.ApiClient, namespace: str, variant: str):
        self.core = client.CoreV1Api(api)
        self.objects = client.CustomObjectsApi(api)
        self.namespace, self.variant = namespace, variant
        self.pods = SharedInformer(self.core.list_namespaced_pod, namespace=namespace,
                                   label_selector=GANG_LABEL)
        self.in_flight = InFlight()
        self.terminated: set[tuple[str, int, str]] = set()  # (gang uid, index, breach since)
        self.wake = threading.Event()

    def start(self) -> None:
        for kind in ("ADDED", "MODIFIED", "DELETED"):
            self.pods.add_event_handler(kind, lambda _pod: self.wake.set())
        self.pods.start()
        threading.Thread(target=self._watch_gangs, name="watch-gangs", daemon=True).start()
        while not _synced(self.pods):
            time.sleep(0.05)

    def _watch_gangs(self) -> None:
        """Wakes the loop on any change of a Gang (read fresh from the API when reconciled)."""
        while True:
            try:
                for _event in Watch().stream(self.objects.list_namespaced_custom_object, GROUP,
                                             VERSION, self.namespace, PLURAL,
                                             timeout_seconds=WATCH_SECONDS):
                    self.wake.set()
            except Exception as exc:  # connection dropped: watch again
                log.warning("watch of gangs failed: %s", exc)
                time.sleep(1)

    def run(self) -> None:
        while True:
            wait = POLL
            try:
                gangs = self.objects.list_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL)["items"]
                pods = self.pods.cache.list()
                self.in_flight.prune(pods)
                for gang in gangs:
                    wait = min(wait, self.reconcile(gang, pods))
            except Exception as exc:  # the API server away: next round
                log.warning("reconcile failed: %s", getattr(exc, "reason", None) or exc)
            self.wake.wait(max(wait, 0.05))
            self.wake.clear()

    def _ref(self, kind: str, name: str) -> str:
        return f"{kind}/{self.namespace}/{name}"

    def reconcile(self, gang: dict[str, Any], pods: list[client.V1Pod]) -> float:
        """One round for one gang; returns the seconds until its next termination is due."""
        name, spec = gang["metadata"]["name"], gang.get("spec") or {}
        groups, size = int(spec.get("groups", 1)), int(spec.get("size", 0))
        min_available = int(spec.get("minAvailable", size))
        delay = float(spec.get("terminationDelaySeconds", 30))
        own = [p for p in pods if (p.metadata.labels or {}).get(GANG_LABEL) == name]
        members, strays = decisions.by_group(self.in_flight.visible(own), groups)
        now = datetime.now(UTC)
        previous = decisions.previous_groups(gang.get("status"))
        statuses = [decisions.group_status(g, members[g], previous.get(g), min_available,
                                           self.variant, now) for g in range(groups)]
        for g, group in enumerate(statuses):
            if self._due(gang, group, delay, now):
                self._terminate(gang, group, members[g], now)
                members[g], statuses[g] = [], decisions.after_termination(group, now)
        self._status(gang, previous, statuses)
        for group in statuses:
            if decisions.scheduled_zero(previous.get(group["index"]), group):
                self._event(gang, ZERO_REASON,
                            f"gang replica {group['index']}: no pod scheduled (was "
                            f"{previous[group['index']]['scheduled']})")
        self._replace(gang, members, strays, size)
        return min((delay - decisions.breached_for(g, now) for g in statuses
                    if decisions.breach_condition(g)["status"] == "True"), default=POLL)

    def _due(self, gang: dict[str, Any], group: Status, delay: float, now: datetime) -> bool:
        if not decisions.terminate_due(group, delay, now):
            return False
        key = f"{gang['metadata']['name']}/{group['index']}"
        if self.in_flight.creating(key):
            return False  # a pod created and not yet seen would survive the termination
        since = decisions.breach_condition(group)["lastTransitionTime"]
        return (gang["metadata"]["uid"], group["index"], since) not in self.terminated

    def _terminate(self, gang: dict[str, Any], group: Status, pods: list[client.V1Pod],
                   now: datetime) -> None:
        name, index = gang["metadata"]["name"], group["index"]
        since = decisions.breach_condition(group)["lastTransitionTime"]
        log.info("terminating replica %d of %s: %s since %s (%.1fs), %d scheduled", index,
                 self._ref("gang", name), decisions.BREACH, since,
                 decisions.breached_for(group, now), group["scheduled"])
        for pod in pods:
            self._delete(pod)
        self.terminated.add((gang["metadata"]["uid"], index, since))
        self._event(gang, TERMINATED_REASON,
                    f"gang replica {index} terminated: {decisions.BREACH} since {since} "
                    f"({group['scheduled']} scheduled); deleted {len(pods)} pods")

    def _replace(self, gang: dict[str, Any], members: dict[int, list], strays: list,
                 size: int) -> None:
        name = gang["metadata"]["name"]
        for pod in strays:
            self._delete(pod)
        for index, live in members.items():
            key = f"{name}/{index}"
            create, delete = decisions.plan_pods(live, size, self.in_flight.creating(key))
            for pod in delete:
                self._delete(pod)
            for _ in range(create):
                self._create(gang, index)

    def _create(self, gang: dict[str, Any], index: int) -> None:
        name, spec = gang["metadata"]["name"], gang.get("spec") or {}
        owner = {"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND, "name": name,
                 "uid": gang["metadata"]["uid"], "controller": True}
        labels = {GANG_LABEL: name, GROUP_LABEL: str(index), "app.kubernetes.io/name": name}
        memory = spec.get("memory") or "80Mi"
        pod = {"metadata": {"generateName": f"{name}-{index}-", "labels": labels,
                            "ownerReferences": [owner]},
               "spec": {"terminationGracePeriodSeconds": 0,
                        "containers": [{"name": "main", "image": PAUSE_IMAGE,
                                        "resources": {"requests": {"memory": memory}}}]}}
        created = self.core.create_namespaced_pod(self.namespace, pod)
        self.in_flight.created[created.metadata.name] = (f"{name}/{index}", time.monotonic())
        log.info("created %s (replica %d)", self._ref("pod", created.metadata.name), index)

    def _delete(self, pod: client.V1Pod) -> None:
        try:
            self.core.delete_namespaced_pod(pod.metadata.name, self.namespace,
                                            grace_period_seconds=0)
        except ApiException as exc:
            if exc.status != 404:
                raise
        self.in_flight.deleted[pod.metadata.uid] = time.monotonic()
        log.info("deleted %s", self._ref("pod", pod.metadata.name))

    def _status(self, gang: dict[str, Any], previous: dict[int, Status],
                statuses: list[Status]) -> None:
        name = gang["metadata"]["name"]
        if (gang.get("status") or {}).get("groups") == statuses:
            return
        for group in statuses:
            self._log_transition(name, previous.get(group["index"]), group)
        try:
            self.objects.patch_namespaced_custom_object_status(
                GROUP, VERSION, self.namespace, PLURAL, name, {"status": {"groups": statuses}})
        except ApiException as exc:
            if exc.status != 404:
                raise

    def _log_transition(self, name: str, before: Status | None, group: Status) -> None:
        old = decisions.breach_condition(before) or {}
        new = decisions.breach_condition(group) or {}
        if (old.get("status"), old.get("reason")) != (new["status"], new["reason"]):
            log.info("%s replica %d: %s %s/%s -> %s/%s (%d scheduled, %d ready)",
                     self._ref("gang", name), group["index"], decisions.BREACH,
                     old.get("status"), old.get("reason"), new["status"], new["reason"],
                     group["scheduled"], group["ready"])

    def _event(self, gang: dict[str, Any], reason: str, message: str) -> None:
        name, now = gang["metadata"]["name"], datetime.now(UTC)
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name=f"{name}.", namespace=self.namespace),
            involved_object=client.V1ObjectReference(
                api_version=f"{GROUP}/{VERSION}", kind=KIND, name=name,
                namespace=self.namespace, uid=gang["metadata"]["uid"]),
            reason=reason, type="Warning", message=message, count=1,
            first_timestamp=now, last_timestamp=now, event_time=now, action=reason,
            source=client.V1EventSource(component=COMPONENT),
            reporting_component=COMPONENT, reporting_instance=socket.gethostname()[:128])
        self.core.create_namespaced_event(self.namespace, event)
        log.info("event %s on %s: %s", reason, self._ref("gang", name), message)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=decisions.VARIANTS, required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    configuration = load_config(args.kubeconfig)
    controller = Controller(client.ApiClient(configuration), args.namespace, args.variant)
    controller.start()
    log.info("started gang (%s) in namespace %s", args.variant, args.namespace)
    controller.run()


if __name__ == "__main__":
    main()
