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


def test_replicated_pods_are_evicted_and_special_pods_skipped():
    result = plan([
        _pod("web", owner="ReplicaSet"),
        _pod("agent", owner="DaemonSet"),
        _pod("static", annotations={"kubernetes.io/config.mirror": "x"}),
        _pod("leaving", owner="ReplicaSet", deleting=True),
    ], DrainOptions())
    assert _names(result.evict) == ["web"]
    assert dict((p.metadata.name, why) for p, why in result.skipped) == {
        "agent": "managed by a DaemonSet", "static": "a mirror pod",
        "leaving": "already terminating"}
    assert result.refused == []


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
