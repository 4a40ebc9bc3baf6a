"""kubectl's drain rules, judged before anything is evicted (pure: no cluster)."""

import datetime as dt

import pytest
from kubernetes import client

from aftershock.faults.drain import DrainOptions, plan


def _pod(name, *, owner=None, volumes=(), annotations=None, deleting=False, phase="Running"):
    refs = [client.V1OwnerReference(api_version="apps/v1", kind=owner, name="o", uid="u",
                                    controller=True)] if owner else None
    meta = client.V1ObjectMeta(name=name, namespace="ns", owner_references=refs,
                               annotations=annotations,
                               deletion_timestamp=dt.datetime.now(dt.UTC) if deleting else None)
    spec = client.V1PodSpec(containers=[client.V1Container(name="c")], volumes=list(volumes))
    return client.V1Pod(metadata=meta, spec=spec, status=client.V1PodStatus(phase=phase))


EMPTYDIR = client.V1Volume(name="scratch", empty_dir=client.V1EmptyDirVolumeSource())


def _names(pods):
    return [p.metadata.name if not isinstance(p, tuple) else p[0].metadata.name for p in pods]


def _deleting_since(name: str, seconds: float):
    pod = _pod(name, owner="ReplicaSet", deleting=True)
    pod.metadata.deletion_timestamp -= dt.timedelta(seconds=seconds)
    return pod


def test_kubectl_defaults_refuse_daemonset_pods_and_wait_for_terminating_ones():
    """`kubectl drain NODE`: a DaemonSet pod fails the drain; a terminating pod is evicted and
    waited for like any other; mirror pods are skipped."""
    pods = [_pod("web", owner="ReplicaSet"), _pod("agent", owner="DaemonSet"),
            _pod("static", annotations={"kubernetes.io/config.mirror": "x"}),
            _deleting_since("leaving", 60)]
    result = plan(pods, DrainOptions(), daemonsets={("ns", "o")})
    assert _names(result.evict) == ["web", "leaving"]
    assert [(p.metadata.name, why) for p, why in result.refused] == [
        ("agent", "is managed by a DaemonSet (allow with ignore-daemonsets)")]
    assert [(p.metadata.name, why) for p, why in result.skipped] == [("static", "a mirror pod")]


def test_the_options_spelled_out_skip_daemonset_pods_and_long_terminating_ones():
    pods = [_pod("agent", owner="DaemonSet"), _deleting_since("leaving", 60),
            _deleting_since("fresh", 1)]
    result = plan(pods, DrainOptions(ignore_daemonsets=True, skip_wait_for_delete_timeout=30),
                  daemonsets={("ns", "o")})
    assert _names(result.evict) == ["fresh"] and result.refused == []
    assert _names(result.skipped) == ["agent", "leaving"]


def test_a_pod_of_a_daemonset_that_is_gone_goes_only_with_force():
    orphan = _pod("agent", owner="DaemonSet")
    assert "which is gone" in plan([orphan], DrainOptions(ignore_daemonsets=True)).refused[0][1]
    assert _names(plan([orphan], DrainOptions(force=True)).evict) == ["agent"]


@pytest.mark.parametrize(("pod", "allowed_by", "reason"), [
    (_pod("cache", owner="ReplicaSet", volumes=[EMPTYDIR]), DrainOptions(delete_emptydir_data=True),
     "has emptyDir data"),
    (_pod("bare"), DrainOptions(force=True), "declares no controller"),
])
def test_refused_pods_fail_the_whole_node_unless_allowed(pod, allowed_by, reason):
    refused = plan([_pod("web", owner="ReplicaSet"), pod], DrainOptions())
    assert [(p.metadata.name, why.split(" (")[0]) for p, why in refused.refused] == [
        (pod.metadata.name, reason)]
    allowed = plan([_pod("web", owner="ReplicaSet"), pod], allowed_by)
    assert allowed.refused == [] and _names(allowed.evict) == ["web", pod.metadata.name]


def test_finished_pods_are_evicted_even_without_a_controller():
    result = plan([_pod("done", phase="Succeeded", volumes=[EMPTYDIR])], DrainOptions())
    assert _names(result.evict) == ["done"] and result.refused == []
