"""python -m implementations.storage --variant faulty|correct --kubeconfig K --namespace N
--data-root DIR"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.informer.informer import SharedInformer

from implementations import load_config
from implementations.storage import data, decisions, removal
from implementations.storage.data import Member

GROUP, VERSION, PLURAL, KIND = "aftershock.io", "v1", "storageclusters", "StorageCluster"
NAME_LABEL, CLUSTER_LABEL = "app.kubernetes.io/name", "aftershock.io/storage-cluster"
COMPONENT, PAUSE_IMAGE = "storage-operator", "registry.k8s.io/pause:3.10"
WIPE_DELAY = 3.0  # faulty: the wipe runs this long after the scale-down, once the pods are gone
log = logging.getLogger("storage")


NODE_DATA = "/var/lib/aftershock/node-data"


@dataclass
class PendingWipe:
    ordinals: set[int]
    nodes: set[str]
    due: float


def statefulset(sc: dict, size: int) -> dict:
    name = sc["metadata"]["name"]
    labels = {NAME_LABEL: name, CLUSTER_LABEL: name}
    anti = {"labelSelector": {"matchLabels": {CLUSTER_LABEL: name}},
            "topologyKey": "kubernetes.io/hostname"}
    owner = {"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND, "name": name,
             "uid": sc["metadata"]["uid"], "controller": True}
    # the members' data on their node's disk: where the node agent keeps it (a kind node
    # mounts the agent's <data-root>/<node> there; kwok's nodes mount nothing)
    data = {"name": "data", "hostPath": {
        "path": f"{NODE_DATA}/{sc['metadata'].get('namespace', '')}/{name}",
        "type": "DirectoryOrCreate"}}
    pod_spec = {"terminationGracePeriodSeconds": 0,
                "affinity": {"podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [anti]}},
                "volumes": [data],
                "containers": [{"name": "member", "image": PAUSE_IMAGE,
                                "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "labels": labels, "ownerReferences": [owner]},
            "spec": {"replicas": size, "serviceName": name, "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod_spec}}}


def _synced(informer: SharedInformer) -> bool:
    # SharedInformer has no has_synced(): its resource version is set once the first list is cached.
    return informer._resource_version is not None


class Controller:
    def __init__(self, api: client.ApiClient, namespace: str, variant: str, root: Path):
        self.core, self.apps = client.CoreV1Api(api), client.AppsV1Api(api)
        self.objects = client.CustomObjectsApi(api)
        self.namespace, self.variant, self.root = namespace, variant, root
        self.pods = SharedInformer(self.core.list_namespaced_pod, namespace=namespace,
                                   label_selector=CLUSTER_LABEL)
        self.nodes = SharedInformer(self.core.list_node)
        self.wipes: dict[str, PendingWipe] = {}
        self.waiting: set[str] = set()  # clusters already logged as waiting for a target
        self.wake = threading.Event()

    def start(self) -> None:
        for informer in (self.pods, self.nodes):
            for kind in ("ADDED", "MODIFIED", "DELETED"):
                informer.add_event_handler(kind, lambda _obj: self.wake.set())
            informer.start()
        while not (_synced(self.pods) and _synced(self.nodes)):
            time.sleep(0.05)

    def run(self) -> None:
        while True:
            try:
                clusters = self.objects.list_namespaced_custom_object(
                    GROUP, VERSION, self.namespace, PLURAL)["items"]
                for sc in clusters:
                    self.reconcile(sc)
            except (ApiException, OSError) as exc:
                log.warning("reconcile failed: %s", getattr(exc, "reason", None) or exc)
            self.wake.wait(0.5)
            self.wake.clear()

    def _ref(self, kind: str, name: str) -> str:
        return f"{kind}/{self.namespace}/{name}"

    def _member_pods(self, name: str) -> list:
        return [p for p in self.pods.cache.list()
                if (p.metadata.labels or {}).get(CLUSTER_LABEL) == name]

    def reconcile(self, sc: dict) -> None:
        name, status = sc["metadata"]["name"], sc.get("status") or {}
        size = self._size(sc)
        current = self._statefulset(sc, size).spec.replicas or 0
        pods = self._member_pods(name)
        self._agent(name, pods, size)
        done, replicas = set(status.get("decommissioned") or ()), current
        if size > current:
            self._scale(name, current, size)
            done, replicas = {o for o in done if o >= size}, size
            self.wipes.pop(name, None)
        elif size < current and self.variant == "correct":
            done, replicas = self._retire(sc, pods, current, size, done)
        elif size < current:
            replicas = self._scale_then_wipe(sc, pods, current, size)
        done |= self._due_wipe(name, pods)
        self._status(name, status, {"members": sorted(decisions.ready_members(pods, name)),
                                    "decommissioned": sorted(done), "observedSize": replicas})

    def _size(self, sc: dict) -> int:
        spec, name = sc.get("spec") or {}, sc["metadata"]["name"]
        size = int(spec.get("size", 0))
        if not spec.get("autoscale"):
            return size
        wanted = decisions.autoscale_size(self.nodes.cache.list(), self.variant)
        if wanted != size:
            self.objects.patch_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL, name, {"spec": {"size": wanted}})
            log.info("autoscaled %s size %d -> %d from the nodes",
                     self._ref("storagecluster", name), size, wanted)
        return wanted

    def _statefulset(self, sc: dict, size: int) -> client.V1StatefulSet:
        name = sc["metadata"]["name"]
        try:
            return self.apps.read_namespaced_stateful_set(name, self.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise
        created = self.apps.create_namespaced_stateful_set(self.namespace, statefulset(sc, size))
        log.info("created %s replicas=%d", self._ref("statefulset", name), size)
        return created

    def _scale(self, name: str, current: int, size: int) -> None:
        self.apps.patch_namespaced_stateful_set(name, self.namespace, {"spec": {"replicas": size}})
        log.info("scaled %s %d -> %d", self._ref("statefulset", name), current, size)

    def _agent(self, name: str, pods: list, size: int) -> None:
        """Each Ready member's node agent: its dir exists on its node (not for members leaving)."""
        for ordinal, node in decisions.ready_members(pods, name).items():
            path = data.member_dir(self.root, node, self.namespace, name, ordinal)
            if ordinal < size and data.ensure_member(path):
                log.info("node/%s: created member-%d for %s", node, ordinal,
                         self._ref("pod", f"{name}-{ordinal}"))

    def _retire(self, sc: dict, pods: list, current: int, size: int,
                done: set[int]) -> tuple[set[int], int]:
        """correct: each removed member per its mode, recorded, and only then the scale-down."""
        name, mode = sc["metadata"]["name"], (sc.get("spec") or {}).get("retention", "decommission")
        ready = decisions.ready_members(pods, name)
        dirs = data.members(self.root, self.namespace, name)
        todo = [o for o in decisions.removed_ordinals(current, size) if o not in done]
        plan = decisions.retire_plan(todo, ready, size, mode)
        if plan is None:
            if name not in self.waiting:
                log.info("%s: waiting for a Ready member to migrate into",
                         self._ref("storagecluster", name))
            self.waiting.add(name)
            return done, current
        self.waiting.discard(name)
        targets, replicas = plan
        where = decisions.hosts(targets, pods, dirs, name)
        for ordinal, target in targets.items():
            self._event(name, ordinal, "Decommissioning", "Normal",
                        f"decommissioning member-{ordinal} on {self._nodes(where[ordinal])} "
                        f"({mode})")
            for member in (d for d in dirs if d.ordinal == ordinal):
                for outcome in removal.retire(member, mode, self._target(name, target)):
                    self._announce(name, outcome)
            done.add(ordinal)
        self._patch_status(name, {"decommissioned": sorted(done)})
        self._scale(name, current, replicas)
        return done, replicas

    def _target(self, name: str, target: tuple[int, str] | None) -> Member | None:
        if target is None:
            return None
        ordinal, node = target
        return Member(node, ordinal, data.member_dir(self.root, node, self.namespace, name,
                                                     ordinal))

    def _scale_then_wipe(self, sc: dict, pods: list, current: int, size: int) -> int:
        """faulty (the incident): scale down at once; wipe the removed members' nodes later."""
        name, mode = sc["metadata"]["name"], (sc.get("spec") or {}).get("retention", "decommission")
        removed = decisions.removed_ordinals(current, size)
        where = decisions.hosts(removed, pods, data.members(self.root, self.namespace, name), name)
        for ordinal in removed:
            self._event(name, ordinal, "Decommissioning", "Normal",
                        f"decommissioning member-{ordinal} on {self._nodes(where[ordinal])} "
                        f"({mode})")
        self._scale(name, current, size)
        wipe = self.wipes.setdefault(name, PendingWipe(set(), set(), 0.0))
        wipe.ordinals |= set(removed)
        wipe.nodes |= set().union(*where.values())
        wipe.due = time.monotonic() + WIPE_DELAY
        return size

    def _due_wipe(self, name: str, pods: list) -> set[int]:
        wipe = self.wipes.get(name)
        if wipe is None or time.monotonic() < wipe.due:
            return set()
        if any(decisions.ordinal_of(p.metadata.name, name) in wipe.ordinals for p in pods):
            return set()  # the removed pods are not gone yet
        del self.wipes[name]
        for node in sorted(wipe.nodes):
            log.info("wiping node/%s of %s", node, self._ref("storagecluster", name))
            for outcome in removal.faulty_wipe(self.root, node, self.namespace, name):
                self._announce(name, outcome)
            log.warning("wipe of node/%s interrupted", node)
        return wipe.ordinals

    @staticmethod
    def _nodes(nodes: set[str]) -> str:
        return ", ".join(f"node/{n}" for n in sorted(nodes)) or "no node"

    def _announce(self, name: str, outcome: removal.Outcome) -> None:
        kind = "Warning" if outcome.reason == removal.DATA_WIPED else "Normal"
        self._event(name, outcome.member.ordinal, outcome.reason, kind, outcome.message)

    def _event(self, name: str, ordinal: int, reason: str, kind: str, message: str) -> None:
        pod_name = f"{name}-{ordinal}"
        pod = self.pods.cache.get_by_key(f"{self.namespace}/{pod_name}")
        now = dt.datetime.now(dt.UTC)
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name=f"{pod_name}.", namespace=self.namespace),
            involved_object=client.V1ObjectReference(
                api_version="v1", kind="Pod", name=pod_name, namespace=self.namespace,
                uid=pod.metadata.uid if pod else None),
            reason=reason, type=kind, message=message, count=1,
            first_timestamp=now, last_timestamp=now, event_time=now, action=reason,
            source=client.V1EventSource(component=COMPONENT),
            reporting_component=COMPONENT, reporting_instance=socket.gethostname()[:128])
        self.core.create_namespaced_event(self.namespace, event)
        log.info("event %s on %s: %s", reason, self._ref("pod", pod_name), message)

    def _status(self, name: str, status: dict, wanted: dict) -> None:
        changed = {k: v for k, v in wanted.items() if status.get(k) != v}
        if changed:
            self._patch_status(name, changed)

    def _patch_status(self, name: str, patch: dict) -> None:
        try:
            self.objects.patch_namespaced_custom_object_status(
                GROUP, VERSION, self.namespace, PLURAL, name, {"status": patch})
        except ApiException as exc:
            if exc.status != 404:
                raise


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("faulty", "correct"), required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--data-root", required=True, type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    configuration = load_config(args.kubeconfig)
    args.data_root.mkdir(parents=True, exist_ok=True)
    controller = Controller(client.ApiClient(configuration), args.namespace, args.variant,
                            args.data_root)
    controller.start()
    log.info("started storage (%s) in namespace %s", args.variant, args.namespace)
    controller.run()


if __name__ == "__main__":
    main()
