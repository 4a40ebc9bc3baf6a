"""'3 pods of web are Ready' / 'no pod of web is Ready', and the pods that are Ready only while
they answer on a port (what a NetworkChaos cut takes away)."""

from __future__ import annotations

from aftershock import phrases
from aftershock.kube import workloads
from aftershock.properties.context import Context
from aftershock.timeline.entry import WATCH, Entry
from aftershock.timeline.state import State

NS = "ns"


def _pod(seq: int, name: str, ready: bool, deleting: bool = False) -> Entry:
    meta = {"name": name, "namespace": NS, "uid": f"uid-{name}",
            "labels": workloads.selector_labels("web")}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    obj = {"metadata": meta, "status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}}
    return Entry(seq=seq, mono=float(seq), wall=1e9 + seq, kind=WATCH, resource="pods",
                 namespace=NS, name=name, uid=meta["uid"], rv=str(seq + 1), type="ADDED",
                 object=obj)


def _condition(text: str):
    found = phrases.match(phrases.CONDITIONS, text)
    assert found, text
    phrase, values = found
    return phrase.build(Context(NS), **values)


def test_ready_counts_live_pods_whose_ready_condition_is_true():
    three, none = _condition("3 pods of web are Ready"), _condition("no pod of web is Ready")
    state = State()
    assert three.about(state) == 0 and none.about(state) == 0  # nothing to judge yet
    for seq, name in enumerate(("a", "b", "c")):
        state.apply(_pod(seq, name, ready=True))
    assert three.holds(state) and not none.holds(state) and none.about(state) == 3
    state.apply(_pod(3, "b", ready=False))
    assert not three.holds(state) and not none.holds(state)
    state.apply(_pod(4, "a", ready=False))
    state.apply(_pod(5, "c", ready=True, deleting=True))  # terminating: not Ready
    assert none.holds(state) and not three.holds(state)


def test_a_listening_pod_is_ready_only_while_it_answers_on_its_port():
    template = workloads.deployment("web", 3, spread_across_nodes=True, port=8080)
    spec = template["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["image"] == workloads.LISTENER_IMAGE
    assert container["imagePullPolicy"] == "Never" and container["args"] == ["8080"]
    assert container["readinessProbe"]["tcpSocket"] == {"port": 8080}
    assert container["readinessProbe"]["failureThreshold"] == 1
    assert spec["topologySpreadConstraints"]
    plain = workloads.deployment("web", 3)["spec"]["template"]["spec"]["containers"][0]
    assert plain["image"] == workloads.PAUSE_IMAGE and "readinessProbe" not in plain


def test_the_listener_image_is_the_one_the_node_image_preloads():
    from aftershock.containers.images import preloaded as images

    assert workloads.LISTENER_IMAGE == images.LISTENER_TAG
