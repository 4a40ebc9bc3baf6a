"""Node failure on its own cluster whose shape sets a short toleration: NotReady within 10 s,
then the real taint-based eviction deletes the node's pods once their toleration expires."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.machine.shape import default_shape
from aftershock.providers.local import LocalProvider
from aftershock.timeline import Recorder, Timeline
from aftershock.timeline.entry import AUDIT
from aftershock.timeline.state import is_live, node_of

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.cluster
TOLERATION = 3


@pytest.fixture
def fast_eviction_cluster():
    shape = dataclasses.replace(default_shape(REPO), name="fast-eviction",
                                not_ready_toleration_seconds=TOLERATION,
                                unreachable_toleration_seconds=TOLERATION)
    cluster = LocalProvider().up(shape)
    yield cluster
    cluster.down()


def _placed_now(timeline: Timeline, labels: dict) -> list[tuple[str, str]]:
    return [(node_of(obj), name) for (res, ns, name), obj in timeline.snapshot().items()
            if res == "pods" and ns == "default" and is_live(obj)
            and all((obj["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())]


def _ready(node: dict | None) -> bool:
    conditions = ((node or {}).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_pods_of_a_failed_node_are_evicted_after_their_toleration(fast_eviction_cluster):
    cluster = fast_eviction_cluster
    api = kube.api_client(cluster.info.kubeconfig)
    timeline = Timeline()
    recorder = Recorder(timeline, cluster.info.kubeconfig, audit_log=cluster.audit_log).start()
    try:
        kube.wait_for_service_account(api, "default")
        kube.apps(api).create_namespaced_deployment("default", workloads.deployment("web", 3))
        labels = workloads.selector_labels("web")

        def running(state) -> list[dict]:
            return [p for p in state.live_pods("default", labels)
                    if (p.get("status") or {}).get("phase") == "Running"]

        held, _ = timeline.wait_until(lambda s: len(running(s)) == 3, 120)
        assert held, _placed_now(timeline, labels)
        victim_node, victim_pod = sorted(_placed_now(timeline, labels))[0]
        failed_at = timeline.mark("kubelet of node-2 stops").mono
        cluster.stop_kubelet(victim_node)

        not_ready, entry = timeline.wait_until(
            lambda s: not _ready(s.get("nodes", "", victim_node)), 15)
        assert not_ready and entry.mono - failed_at <= 10, "NotReady within 10 s"

        def gone_or_terminating(state) -> bool:
            pod = state.get("pods", "default", victim_pod)
            return pod is None or not is_live(pod)

        evicted, entry = timeline.wait_until(gone_or_terminating, 90)
        assert evicted, "the pod of the failed node was never evicted"
        assert entry.mono - failed_at >= TOLERATION, "evicted before its toleration expired"
        # A loaded machine's API server may write its audit log seconds late (a CI run found
        # no delete here after the 3 s a judgement waits, which would have made it UNKNOWN),
        # and a request's line after a later one's (one found none after reading past now,
        # before the read waited for the line of every deletion a watch delivered)
        assert recorder.sync_audit(timeout=30), "the audit log never caught up"
        deleters = {e.actor for e in timeline.entries if e.kind == AUDIT and
                    e.verb == "delete" and e.name == victim_pod and e.code == 200}
        assert deleters and all(actor.startswith("system:serviceaccount:kube-system:")
                                for actor in deleters), deleters
        taints = timeline.snapshot()[("nodes", "", victim_node)]["spec"]["taints"]
        assert {"node.kubernetes.io/unreachable"} <= {t["key"] for t in taints}
    finally:
        recorder.stop()
        api.close()
