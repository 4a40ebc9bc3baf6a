"""Drain on the real cluster: every kubectl rule, against the real Eviction API and PDBs."""

from __future__ import annotations

import itertools
import threading

import pytest
from kubernetes import client

from aftershock.faults import drain
from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.timeline.entry import AUDIT

pytestmark = pytest.mark.cluster
NODE = "node-1"


def _pinned(manifest: dict, node: str = NODE) -> dict:
    manifest["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    return manifest


def _deploy(scenario, manifest: dict) -> None:
    kube.apps(scenario.api).create_namespaced_deployment(scenario.namespace, manifest)


def _running(scenario, count: int, name: str) -> None:
    def holds(state):
        pods = state.live_pods(scenario.namespace, workloads.selector_labels(name))
        return sum((p.get("status") or {}).get("phase") == "Running" for p in pods) == count
    assert scenario.wait_until(holds, 60)[0], f"{count} pods of {name} never Running"


def _evictions(scenario) -> list:
    assert scenario.recorder.sync_audit(timeout=30), "the audit log never caught up"
    return [e for e in scenario.timeline.entries if e.kind == AUDIT and
            e.subresource == "eviction" and e.namespace == scenario.namespace]


def test_daemonset_pods_refuse_a_default_drain_and_are_skipped_when_ignored(
        aftershock_scenario):
    """kubectl's defaults: a drain of a node with a DaemonSet pod is refused unless
    --ignore-daemonsets; mirror pods are skipped either way."""
    scenario = aftershock_scenario
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                 "metadata": {"name": "agent"},
                 "spec": {"selector": {"matchLabels": workloads.selector_labels("agent")},
                          "template": workloads.pod_template("agent")}}
    kube.apps(scenario.api).create_namespaced_daemon_set(scenario.namespace, daemonset)
    _deploy(scenario, _pinned(workloads.deployment("web", 2)))
    mirror = workloads.pod("static")
    mirror["metadata"]["annotations"] = {drain.MIRROR_ANNOTATION: "checksum"}
    mirror["spec"]["nodeName"] = NODE
    kube.core(scenario.api).create_namespaced_pod(scenario.namespace, mirror)
    _running(scenario, 3, "agent")
    _running(scenario, 2, "web")
    _running(scenario, 1, "static")
    with pytest.raises(drain.DrainRefused, match="managed by a DaemonSet"):
        drain.drain_node(scenario.api, NODE)
    assert not _evictions(scenario), "a refused drain evicts nothing"
    report = drain.drain_node(scenario.api, NODE, drain.DrainOptions(ignore_daemonsets=True))
    assert len(report.evicted) == 2 and all("/web-" in ref for ref in report.evicted)
    assert sorted(ref.split("/")[2].split("-")[0] for ref in report.skipped) == [
        "agent", "static"]
    left = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, field_selector=f"spec.nodeName={NODE}").items
    assert sorted(p.metadata.name.split("-")[0] for p in left) == ["agent", "static"]
    assert kube.core(scenario.api).read_node(NODE).spec.unschedulable is True


@pytest.mark.parametrize(("make", "allow"), [
    ("emptydir", drain.DrainOptions(delete_emptydir_data=True)),
    ("bare", drain.DrainOptions(force=True)),
])
def test_a_refused_pod_fails_the_node_before_any_eviction(aftershock_scenario, make, allow):
    scenario = aftershock_scenario
    corev1 = kube.core(scenario.api)
    _deploy(scenario, _pinned(workloads.deployment("web", 1)))
    if make == "emptydir":
        cache = _pinned(workloads.deployment("cache", 1))
        cache["spec"]["template"]["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        _deploy(scenario, cache)
        _running(scenario, 1, "cache")
    else:
        bare = workloads.pod("bare")
        bare["spec"]["nodeName"] = NODE
        corev1.create_namespaced_pod(scenario.namespace, bare)
        _running(scenario, 1, "bare")
    _running(scenario, 1, "web")
    with pytest.raises(drain.DrainRefused, match=make.replace("emptydir", "emptyDir data")
                       .replace("bare", "declares no controller")):
        drain.drain_node(scenario.api, NODE)
    assert _evictions(scenario) == [], "a refusal must come before any eviction"
    assert corev1.read_node(NODE).spec.unschedulable is True, "drain cordons first"
    report = drain.drain_node(scenario.api, NODE, allow)
    assert len(report.evicted) == 2


def test_a_blocking_budget_is_retried_every_5s_until_it_unblocks(aftershock_scenario):
    scenario = aftershock_scenario
    _deploy(scenario, _pinned(workloads.deployment("guarded", 2)))
    _running(scenario, 2, "guarded")
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "guarded"},
              "spec": {"minAvailable": 2,
                       "selector": {"matchLabels": workloads.selector_labels("guarded")}}}
    policy = client.PolicyV1Api(scenario.api)
    policy.create_namespaced_pod_disruption_budget(scenario.namespace, budget)
    result: dict = {}
    thread = threading.Thread(target=lambda: result.update(report=drain.drain_node(
        scenario.api, NODE, drain.DrainOptions(timeout=60),
        log=lambda line: scenario.timeline.mark(f"drain: {line}"))))
    thread.start()
    refused = scenario.wait_until(lambda s: len([e for e in scenario.timeline.since(0)
                                                 if "will retry after 5s" in e.detail]) >= 2, 30)
    assert refused[0], "the budget should refuse the evictions"
    policy.delete_namespaced_pod_disruption_budget("guarded", scenario.namespace)
    thread.join(60)
    report = result["report"]
    assert len(report.evicted) == 2 and report.retries_429 >= 2
    tries = _evictions(scenario)
    assert sum(e.code == 429 for e in tries) >= 2 and sum(e.code == 201 for e in tries) == 2
    by_pod: dict[str, list[float]] = {}
    for entry in tries:
        by_pod.setdefault(entry.name, []).append(entry.wall)
    gaps = [b - a for times in by_pod.values() for a, b in itertools.pairwise(times)]
    assert gaps and all(4.9 <= gap <= 8.0 for gap in gaps), gaps  # never sooner than 5 s


@pytest.mark.parametrize("grace", [None, 7])
def test_the_grace_period_comes_from_the_pod_unless_given(aftershock_scenario, grace):
    scenario = aftershock_scenario
    manifest = _pinned(workloads.deployment("slow", 1))
    manifest["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30
    _deploy(scenario, manifest)
    _running(scenario, 1, "slow")
    drain.drain_node(scenario.api, NODE, drain.DrainOptions(grace_period=grace))
    assert scenario.recorder.catch_up() == []  # the pod watch has delivered what drain did
    deleting = [e for e in scenario.timeline.entries if e.resource == "pods" and e.object and
                e.namespace == scenario.namespace and
                e.object["metadata"].get("deletionGracePeriodSeconds") is not None]
    assert deleting, "the eviction should have started a graceful deletion"
    assert deleting[0].object["metadata"]["deletionGracePeriodSeconds"] == (grace or 30)


def test_a_pod_recreated_under_the_same_name_counts_as_gone(aftershock_scenario):
    scenario = aftershock_scenario
    manifest = workloads.statefulset("db", 1)
    del manifest["spec"]["volumeClaimTemplates"]
    del manifest["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    kube.apps(scenario.api).create_namespaced_stateful_set(scenario.namespace, manifest)
    _running(scenario, 1, "db")
    node = kube.core(scenario.api).read_namespaced_pod("db-0", scenario.namespace).spec.node_name
    old_uid = kube.core(scenario.api).read_namespaced_pod("db-0", scenario.namespace).metadata.uid
    report = drain.drain_node(scenario.api, node, drain.DrainOptions(timeout=60))
    assert report.evicted == [f"pod/{scenario.namespace}/db-0"]
    _running(scenario, 1, "db")
    new = kube.core(scenario.api).read_namespaced_pod("db-0", scenario.namespace)
    assert new.metadata.uid != old_uid and new.spec.node_name != node
