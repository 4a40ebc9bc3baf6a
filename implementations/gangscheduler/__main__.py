"""python -m implementations.gangscheduler --variant faulty|correct --kubeconfig K --namespace N"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from implementations import load_config
from implementations.gangscheduler import decisions
from implementations.gangscheduler.decisions import GROUP_LABEL, SCHEDULER_NAME, Obj

GROUP, VERSION, PLURAL = "aftershock.io", "v1", "podgroups"
DRA = ("resource.k8s.io", "v1")
POLL = 0.2
log = logging.getLogger("gang-scheduler")


def _items(response: Any) -> list[Obj]:
    return json.loads(response.data)["items"]


def _allocated(claim: Obj) -> bool:
    return bool((claim.get("status") or {}).get("allocation"))


class Scheduler:
    def __init__(self, api: client.ApiClient, namespace: str, variant: str):
        self.core = client.CoreV1Api(api)
        self.objects = client.CustomObjectsApi(api)
        self.namespace, self.variant = namespace, variant
        self.whole: set[str] = set()  # groups that have had their minimum since last evicted
        self.below: dict[str, float] = {}  # group uid -> when it fell below its minimum

    def run(self) -> None:
        while True:
            try:
                self.once()
            except ApiException as exc:
                log.warning("pass failed: %s %s %s", exc.status, exc.reason,
                            (exc.body or "")[:500] if exc.status == 422 else "")
            time.sleep(POLL)  # a polling scheduler: each pass reads everything afresh

    def once(self) -> None:
        nodes = _items(self.core.list_node(_preload_content=False))
        pods = _items(self.core.list_pod_for_all_namespaces(_preload_content=False))
        groups = self.objects.list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL)["items"]
        queues = {decisions.name(q): q for q in self.objects.list_cluster_custom_object(
            GROUP, VERSION, "queues")["items"]}
        claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c
                  for c in self._list(DRA, "resourceclaims")}
        free = decisions.free_devices(self._list(DRA, "resourceslices"), list(claims.values()))
        left = decisions.room(nodes, pods, free)

        def claimed(pod: Obj) -> list[Obj] | None:
            """The pod's ResourceClaims, or None while one is not made yet."""
            made = {s["name"]: s.get("resourceClaimName")
                    for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
            found = [claims.get((self.namespace, made.get(c) or "")) for c in
                     decisions.claims_of(pod)]
            return None if None in found else found

        def members(group: Obj) -> list[Obj]:
            return [p for p in pods if p["metadata"].get("namespace") == self.namespace
                    and (p["metadata"].get("labels") or {}).get(GROUP_LABEL)
                    == decisions.name(group)
                    and p["spec"].get("schedulerName") == SCHEDULER_NAME
                    and (p["spec"].get("nodeName") or claimed(p) is not None)]

        singles = [p for p in pods if p["metadata"].get("namespace") == self.namespace
                   and p["spec"].get("schedulerName") == SCHEDULER_NAME
                   and GROUP_LABEL not in (p["metadata"].get("labels") or {})
                   and not decisions.node_of(p) and not decisions.deleting(p)]
        ours = [p for p in pods if p["metadata"].get("namespace") == self.namespace]
        if self.variant == "passes-over":  # the B6 bug: pods of no group first, whenever made
            self._preempt(singles, ours, nodes, left)
        for group in sorted(groups, key=decisions.name):
            room = decisions.headroom(queues.get(decisions.queue_of(group)), groups, members)
            bound = decisions.bindings(group, members(group), nodes, left, self.variant, room)
            for pod, node in bound:
                self._bind_claimed(pod, node, claimed(pod) or [], free)
                pod["spec"]["nodeName"] = node  # counted in its queue from now on
            if not bound and self.variant == "holds-devices":
                self._hold_devices(members(group), decisions.minimum(group), nodes, left,
                                   claimed, free)
            self._stale(group, members(group))
        if self.variant != "passes-over":  # pods of no group after the groups of the pass
            self._preempt(singles, ours, nodes, left)

    def _preempt(self, preemptors: list[Obj], pods: list[Obj], nodes: list[Obj],
                 left: dict) -> None:
        """A pod of no group, by priority: bound where it fits; else the groups of a lower
        priority in its way evicted whole, and it bound once their room is free (the
        preempts-in-vain variant never binds it)."""
        for pod in sorted(preemptors, key=lambda p: (-decisions.priority(p), decisions.name(p))):
            placed = decisions.place([pod], nodes, left, self.variant)
            if placed:
                if self.variant != "preempts-in-vain":
                    self._bind(pod, placed[0][1])
                continue
            for victim in decisions.victims(pod, pods, nodes, left, self.variant):
                log.info("preempting for pod/%s/%s", self.namespace, decisions.name(pod))
                self._evict(victim)

    def _hold_devices(self, pods: list[Obj], minimum: int, nodes: list[Obj], left: dict,
                      claimed, free: dict[str, list[tuple[str, str, str]]]) -> None:
        """The B7 bug: the claims of a group it could not bind, allocated where its pods
        would go all the same, and left allocated while the group waits."""
        if len(pods) < minimum:  # a group still being made is not one it could not bind
            return
        waiting = [p for p in pods if not decisions.node_of(p) and decisions.claims_of(p)
                   and not any(_allocated(c) for c in claimed(p) or [])]
        trial = {node: dict(have) for node, have in left.items()}
        for pod, node in decisions.place(waiting, nodes, trial, self.variant):
            for claim in claimed(pod) or []:
                self._allocate(claim, pod, node, free.get(node, []).pop(0))

    def _list(self, api: tuple[str, str], plural: str) -> list[Obj]:
        """Every object of a kind the cluster may not serve (DRA's): none where it does not."""
        try:
            return self.objects.list_cluster_custom_object(*api, plural)["items"]
        except ApiException as exc:
            if exc.status == 404:
                return []
            raise

    def _bind_claimed(self, pod: Obj, node: str, claims: list[Obj],
                      free: dict[str, list[tuple[str, str, str]]]) -> None:
        """Its claims allocated on the node, then the binding (the faulty variant binds
        first: a pod bound before its claims are allocated)."""
        if self.variant == "faulty":
            self._bind(pod, node)
        for claim in claims:
            if not _allocated(claim):  # an allocation is not changed once made
                self._allocate(claim, pod, node, free.get(node, []).pop(0))
        if self.variant != "faulty":
            self._bind(pod, node)

    def _allocate(self, claim: Obj, pod: Obj, node: str,
                  device: tuple[str, str, str]) -> None:
        driver, pool, name = device
        request = claim["spec"]["devices"]["requests"][0]["name"]
        status = {"allocation": {"devices": {"results": [
            {"request": request, "driver": driver, "pool": pool, "device": name}]},
            # a node's own device: usable there only, as kube-scheduler's allocations say
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": decisions.name(pod),
                             "uid": pod["metadata"]["uid"]}]}
        self.objects.patch_namespaced_custom_object_status(
            *DRA, self.namespace, "resourceclaims", decisions.name(claim), {"status": status})
        log.info("allocated resourceclaim/%s/%s: device %s of pool %s", self.namespace,
                 decisions.name(claim), name, pool)

    def _stale(self, group: Obj, members: list[Obj]) -> None:
        uid, now = group["metadata"]["uid"], time.monotonic()
        if decisions.kept(members, self.variant) >= decisions.minimum(group):
            self.whole.add(uid)
            self.below.pop(uid, None)
            return
        if uid not in self.whole:
            return
        since = self.below.setdefault(uid, now)
        if now - since < float(group["spec"].get("staleSeconds", 5)):
            return
        log.info("podgroup/%s/%s is stale: below minMember %d for %.1fs", self.namespace,
                 decisions.name(group), decisions.minimum(group), now - since)
        for pod in decisions.evictions(members, self.variant):
            self._evict(pod)
        self.whole.discard(uid)
        self.below.pop(uid, None)

    def _bind(self, pod: Obj, node: str) -> None:
        body = client.V1Binding(metadata=client.V1ObjectMeta(name=decisions.name(pod)),
                                target=client.V1ObjectReference(api_version="v1", kind="Node",
                                                                name=node))
        try:
            self.core.create_namespaced_pod_binding(decisions.name(pod), self.namespace, body,
                                                    _preload_content=False)
            log.info("bound pod/%s/%s to node/%s", self.namespace, decisions.name(pod), node)
        except ApiException as exc:
            log.warning("binding pod/%s/%s to node/%s failed: %s", self.namespace,
                        decisions.name(pod), node, exc.reason)

    def _evict(self, pod: Obj) -> None:
        try:
            self.core.delete_namespaced_pod(decisions.name(pod), self.namespace)
            log.info("evicted pod/%s/%s", self.namespace, decisions.name(pod))
        except ApiException as exc:
            if exc.status != 404:
                raise


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=decisions.VARIANTS, required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    scheduler = Scheduler(client.ApiClient(load_config(args.kubeconfig)), args.namespace,
                          args.variant)
    scheduler.once()
    log.info("started gang-scheduler (%s) in namespace %s", args.variant, args.namespace)
    threading.Thread(target=scheduler.run, name="schedule", daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
