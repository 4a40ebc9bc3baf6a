"""The recorder's history is complete: after a burst, its state equals a fresh list."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from aftershock.kube import api as kube
from aftershock.kube import workloads
from aftershock.timeline.state import phase

pytestmark = pytest.mark.cluster
BURST = 600  # bench_scale.py counts events lost over 10,000 pods: the scale run


def _scheduled_or_refused(pod: dict) -> bool:
    """Settled: Running on a node, or refused by the scheduler (no room left)."""
    if phase(pod) == "Running":
        return True
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               for c in conditions)


def test_after_a_burst_of_creations_and_deletions_the_record_equals_a_fresh_list(
        aftershock_scenario):
    scenario, namespace = aftershock_scenario, aftershock_scenario.namespace
    corev1 = kube.core(scenario.api)
    names = [f"burst-{i:04d}" for i in range(BURST)]

    def create(name: str) -> None:
        corev1.create_namespaced_pod(namespace, workloads.pod(name, {"burst": "yes"}))

    def delete(name: str) -> None:
        corev1.delete_namespaced_pod(name, namespace, grace_period_seconds=0)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, names))
        list(pool.map(delete, names[::2]))
    kept = set(names[1::2])

    def settled(state) -> bool:
        pods = {p["metadata"]["name"]: p for p in state.select("pods", namespace)}
        return set(pods) == kept and all(_scheduled_or_refused(p) for p in pods.values())

    held, _ = scenario.wait_until(settled, 120)
    assert held, "the recorded state did not settle on the kept pods"

    for _attempt in range(3):  # a pod may still change between the list and the comparison
        listing = corev1.list_namespaced_pod(namespace)
        fresh = {p.metadata.name: p.metadata.resource_version for p in listing.items
                 if not p.metadata.name.startswith("sentinel")}  # an earlier attempt's
        sentinel = f"sentinel-{_attempt}"
        create(sentinel)
        scenario.wait_until(lambda s, n=sentinel: s.get("pods", namespace, n) is not None, 30)
        recorded = {obj["metadata"]["name"]: obj["metadata"]["resourceVersion"]
                    for (res, ns, _), obj in scenario.timeline.snapshot().items()
                    if res == "pods" and ns == namespace and not _.startswith("sentinel")}
        if recorded == fresh:
            break
    assert set(recorded) == set(fresh) == kept
    assert recorded == fresh, {k: (recorded[k], fresh[k]) for k in fresh
                               if recorded.get(k) != fresh[k]}
    assert not scenario.recorder.anomalies
    assert not scenario.recorder.errors
    events = [e for e in scenario.timeline.entries if e.resource == "pods" and
              e.namespace == namespace]
    assert sum(e.type == "ADDED" for e in events) == BURST + _attempt + 1
    assert sum(e.type == "DELETED" for e in events) == BURST // 2


def _etcd(cluster, call: str, body: dict) -> dict:
    import json
    import urllib.request

    url = f"http://127.0.0.1:{cluster.state.ports['etcd-client']}/v3/{call}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_a_watch_that_cannot_resume_is_recorded_as_a_gap_and_makes_checks_unknown(
        aftershock_scenario, aftershock_cluster):
    """Restart the apiserver after compacting etcd past the recorder's last version: the pods
    watch gets 410 Gone on resume, so the recorder must record a gap and re-list."""
    from aftershock import properties
    from aftershock.properties import Judgement
    from aftershock.providers.local import LocalCluster
    from aftershock.timeline.entry import GAP_END, GAP_START

    if not isinstance(aftershock_cluster, LocalCluster):
        pytest.skip("needs the local provider")
    scenario = aftershock_scenario
    corev1 = kube.core(scenario.api)
    corev1.create_namespaced_pod(scenario.namespace, workloads.pod("before", {"app": "x"}))
    assert scenario.wait_until(lambda s: s.get("pods", scenario.namespace, "before"), 30)[0]

    aftershock_cluster.stop_component("kube-apiserver")
    # A write past the recorder's last pod event (a key outside the apiserver's prefix): the
    # compaction then removes the revision its pod watch resumes from.
    written = _etcd(aftershock_cluster, "kv/put", {"key": "YWZ0ZXJzaG9jaw==", "value": "eA=="})
    revision = int(written["header"]["revision"])
    _etcd(aftershock_cluster, "kv/compaction", {"revision": str(revision), "physical": True})
    aftershock_cluster.start_component("kube-apiserver")

    held, _ = scenario.wait_until(lambda s: "pods" not in s.gaps and any(
        e.kind == GAP_END and e.resource == "pods" for e in scenario.timeline.since(0)), 60)
    assert held, f"no gap recorded; recorder errors: {scenario.recorder.errors[-3:]}"
    gaps = [e for e in scenario.timeline.entries if e.kind in (GAP_START, GAP_END)
            and e.resource == "pods"]
    assert gaps[0].kind == GAP_START and "410" in gaps[0].detail
    verdict = properties.judge(["R1"], Judgement("never_more_than", {
        "namespace": scenario.namespace, "selector": {"app": "x"}, "limit": 5}),
        scenario.timeline.entries)
    assert verdict.status == "unknown", verdict.explain()  # the broken watch, then the gap
    corev1.create_namespaced_pod(scenario.namespace, workloads.pod("after", {"app": "x"}))
    assert scenario.wait_until(lambda s: s.get("pods", scenario.namespace, "after"), 30)[0], \
        "the recorder must keep watching after the gap"


# --- the recorder's own soundness, through the watch-delay proxy (a real apiserver behind it):
# the proxy holds the recorder's pod watch while the cluster changes, then answers 410 or cuts
# the stream, which is what a compacted etcd or a lost connection does to it.


@pytest.fixture
def proxied_recorder(aftershock_scenario, tmp_path):
    from aftershock.faults.watchdelay import Upstream, WatchDelay
    from aftershock.timeline import Recorder, Timeline
    from aftershock.timeline.resources import Resource

    upstream = Upstream.from_kubeconfig(aftershock_scenario.cluster.info.kubeconfig)
    proxy = WatchDelay(upstream, tmp_path / "proxy.jsonl", "recorder").start()
    timeline = Timeline()
    recorder = Recorder(timeline, proxy.write_kubeconfig(tmp_path / "recorder.kubeconfig"),
                        resources=[Resource("pods", "v1")]).start()
    yield proxy, recorder, timeline
    recorder.stop()
    proxy.stop()


def _first_watch_gone(scenario, tmp_path, while_held=lambda: None):
    """A recorder of pod templates (a kind nothing else here writes) whose first watch is
    answered 410 before it delivered anything, ``while_held`` done between its list and then;
    returns its timeline, once it re-listed and watches again."""
    from aftershock.faults.watchdelay import Upstream, WatchDelay
    from aftershock.timeline import Recorder, Timeline
    from aftershock.timeline.resources import Resource

    upstream = Upstream.from_kubeconfig(scenario.cluster.info.kubeconfig)
    proxy = WatchDelay(upstream, tmp_path / "proxy.jsonl", "recorder").start()
    proxy.pause()
    timeline = Timeline()
    recorder = Recorder(timeline, proxy.write_kubeconfig(tmp_path / "recorder.kubeconfig"),
                        resources=[Resource("podtemplates", "v1")]).start()
    try:
        deadline = time.monotonic() + 30
        while proxy.watching == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # the proxy has no event for a stream that opened
        assert proxy.watching == 1, "the recorder's watch never reached the proxy"
        while_held()
        proxy.expire_streams()
        while _watches_after_expiry(tmp_path / "proxy.jsonl") == 0:
            assert time.monotonic() < deadline, "the recorder never watched again"
            time.sleep(0.05)
        proxy.resume()
        corev1 = kube.core(scenario.api)
        corev1.create_namespaced_pod_template(scenario.namespace, {
            "metadata": {"name": "after"},
            "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}})
        assert timeline.wait_until(
            lambda s: s.get("podtemplates", scenario.namespace, "after"), 30)[0], \
            "the recorder must keep watching after the 410"
    finally:
        recorder.stop()
        proxy.stop()
    return timeline


def _watches_after_expiry(log: Path) -> int:
    """How many watches the proxy was asked for after it expired the open ones."""
    import json

    events = [json.loads(line) for line in log.read_text().splitlines()]
    expired = next((i for i, e in enumerate(events) if e["event"] == "expire-streams"), None)
    return 0 if expired is None else sum(
        e["event"] == "request" and e.get("watch") for e in events[expired:])


def test_a_first_watch_gone_before_any_event_is_a_gap_its_re_list_finds_empty(
        aftershock_scenario, tmp_path):
    """The API server's watch cache of a kind just installed can start after the version the
    recorder's first list was served at: its first watch is gone (410) before any event. That
    is a gap (an object made and gone in it would be missed), closed by a re-list that finds
    no difference; the audit log, where it is read, says whether anything was written in it
    (tests/unit/test_one_history.py)."""
    from aftershock.timeline.entry import GAP_END, GAP_START

    timeline = _first_watch_gone(aftershock_scenario, tmp_path)
    began, ended = [e for e in timeline.entries if e.kind in (GAP_START, GAP_END)]
    assert began.kind == GAP_START and "410" in began.detail
    assert ended.extra["changes"] == []


def test_a_first_watch_gone_after_a_change_it_missed_is_a_gap(aftershock_scenario, tmp_path):
    from aftershock.timeline.entry import GAP_END, GAP_START

    def made_while_held() -> None:
        kube.core(aftershock_scenario.api).create_namespaced_pod_template(
            aftershock_scenario.namespace, {"metadata": {"name": "unseen"}, "template": {
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}})
    timeline = _first_watch_gone(aftershock_scenario, tmp_path, made_while_held)
    began, ended = [e for e in timeline.entries if e.kind in (GAP_START, GAP_END)]
    assert began.kind == GAP_START and "410" in began.detail
    assert [c["object"]["metadata"]["name"] for c in ended.extra["changes"]] == ["unseen"]


def _seen(timeline, namespace: str, name: str, present: bool = True) -> bool:
    held, _ = timeline.wait_until(
        lambda s: (s.get("pods", namespace, name) is not None) == present, 30)
    return held


def test_churn_during_a_gap_is_unknown_never_a_false_violation(aftershock_scenario,
                                                                proxied_recorder):
    """Five pods; while the recorder's watch is held, three are deleted and three others
    created; then the watch answers 410 and the recorder re-lists. Recorded one by one with
    the additions first, eight pods were 'live at once': a false R1 violation."""
    from aftershock import properties
    from aftershock.properties import Judgement
    from aftershock.timeline.entry import GAP_END
    from aftershock.timeline.state import replay

    proxy, _recorder, timeline = proxied_recorder
    namespace, corev1 = aftershock_scenario.namespace, kube.core(aftershock_scenario.api)
    for i in range(5):
        corev1.create_namespaced_pod(namespace, workloads.pod(f"old-{i}", {"app": "web"}))
    assert _seen(timeline, namespace, "old-4")
    proxy.pause()
    for i in range(3):
        corev1.delete_namespaced_pod(f"old-{i}", namespace, grace_period_seconds=0)
        corev1.create_namespaced_pod(namespace, workloads.pod(f"new-{i}", {"app": "web"}))
    assert aftershock_scenario.wait_until(
        lambda s: s.get("pods", namespace, "new-2") and not s.get("pods", namespace, "old-0"),
        30)[0], "the scenario's own recorder (not held) sees the churn"
    proxy.expire_streams()
    proxy.resume()
    assert timeline.wait_until(lambda s: any(e.kind == GAP_END for e in timeline.since(0)),
                               30)[0], "no re-list after 410"
    most = max(len(state.live_pods(namespace, {"app": "web"}))
               for _, state in replay(timeline.entries))
    assert most == 5, f"{most} pods live at once in the recorded history"
    verdict = properties.judge(["R1"], Judgement("never_more_than", {
        "namespace": namespace, "selector": {"app": "web"}, "limit": 5}), timeline.entries)
    assert verdict.status == "unknown" and "gap" in verdict.summary, verdict.explain()


def test_a_watch_cut_mid_stream_resumes_where_it_stopped(aftershock_scenario,
                                                         proxied_recorder):
    """A connection lost mid-stream used to resume from where that watch began: its events
    came twice, and a replayed ADDED brought a deleted pod back."""
    from aftershock.timeline.entry import ANOMALY, ERROR

    proxy, recorder, timeline = proxied_recorder
    namespace, corev1 = aftershock_scenario.namespace, kube.core(aftershock_scenario.api)
    corev1.create_namespaced_pod(namespace, workloads.pod("gone", {"app": "web"}))
    assert _seen(timeline, namespace, "gone")
    corev1.delete_namespaced_pod("gone", namespace, grace_period_seconds=0)
    assert _seen(timeline, namespace, "gone", present=False)
    corev1.create_namespaced_pod(namespace, workloads.pod("kept", {"app": "web"}))
    assert _seen(timeline, namespace, "kept")
    proxy.cut_streams()
    corev1.create_namespaced_pod(namespace, workloads.pod("after", {"app": "web"}))
    assert _seen(timeline, namespace, "after"), "the recorder resumed watching"
    added = [e.name for e in timeline.entries if e.resource == "pods" and e.type == "ADDED"
             and e.namespace == namespace]
    assert sorted(added) == ["after", "gone", "kept"], f"recorded twice: {added}"
    assert not any(e.kind == ANOMALY for e in timeline.entries), recorder.anomalies
    assert timeline.state().get("pods", namespace, "gone") is None
    assert any(e.kind == ERROR and e.resource == "pods" for e in timeline.entries), \
        "the broken watch is in the history, for the judges to see"


def test_a_watch_that_stalls_without_an_error_is_a_gap_when_judged(aftershock_scenario,
                                                                  proxied_recorder):
    """The proxy holds the recorder's pod watch (no error, no 410) while a pod is created:
    nothing in the history says anything is missing, and 'at most 1 pod of db' held over that
    stretch used to pass. Before a judgement the recorder lists and waits for every watch to
    deliver as much: this one does not, so its stretch since its last change is a gap, closed
    when it catches up."""
    from aftershock import properties
    from aftershock.properties import Judgement
    from aftershock.properties.context import Context
    from aftershock.timeline.entry import GAP_END, GAP_START

    proxy, recorder, timeline = proxied_recorder
    namespace, corev1 = aftershock_scenario.namespace, kube.core(aftershock_scenario.api)
    corev1.create_namespaced_pod(namespace, workloads.pod("first", {"app": "db"}))
    assert _seen(timeline, namespace, "first")
    assert recorder.catch_up(timeout=5) == []
    proxy.pause()
    corev1.create_namespaced_pod(namespace, workloads.pod("web-0", {"app": "web"}))
    assert aftershock_scenario.wait_until(lambda s: s.get("pods", namespace, "web-0"), 30)[0]
    assert recorder.catch_up(timeout=2) == ["pods"]
    (lag,) = [e for e in timeline.entries if e.kind == GAP_START]
    assert "had not caught up" in lag.detail
    context = Context(namespace, "t", {}, {}).to_json()
    verdict = properties.judge(["always"], Judgement("always", {
        "condition": "at most 1 pods of db are live", "context": context}), timeline.entries)
    assert verdict.status == "unknown" and "gap" in verdict.summary, verdict.explain()
    proxy.resume()
    assert recorder.catch_up(timeout=30) == []
    assert timeline.entries[-1].kind == GAP_END and "caught up" in timeline.entries[-1].detail


def test_a_kind_that_cannot_be_recorded_is_named_for_why(aftershock_scenario):
    """A create-only kind (selfsubjectreviews: served, with no list or watch) and a kind this
    cluster does not serve are both left unrecorded, each noted as what it is; a judge that
    reads one says which."""
    from aftershock.history import History

    scenario = aftershock_scenario
    left = scenario.recorder.record([("authentication.k8s.io", "selfsubjectreviews"),
                                     ("example.invalid", "widgets")])
    assert sorted(left) == ["selfsubjectreviews.authentication.k8s.io", "widgets.example.invalid"]
    history = History(scenario.timeline.entries)
    assert "selfsubjectreviews" in history.unlistable
    assert "selfsubjectreviews" not in history.unserved
    assert "widgets" in history.unserved and "widgets" not in history.unlistable


def test_a_wait_ends_only_on_a_state_the_cluster_still_has(aftershock_scenario,
                                                            proxied_recorder):
    """A step deleted a pod, and the recorder's watch has not delivered that yet: a wait for
    the pod to be there held at once on the record, and the judgement after it, which catches
    up first, found a stretch that had not begun (CI: `within 60 seconds 3 pods of web are
    Running` after a force-delete, UNKNOWN, "only 0.0s of the 60s were observed"). When the
    record says it holds, the wait catches the record up and asks again."""
    from types import SimpleNamespace

    from aftershock.scenario import Scenario

    proxy, recorder, timeline = proxied_recorder
    namespace, corev1 = aftershock_scenario.namespace, kube.core(aftershock_scenario.api)
    corev1.create_namespaced_pod(namespace, workloads.pod("gone", {"app": "web"}))
    assert _seen(timeline, namespace, "gone")
    proxy.pause()
    corev1.delete_namespaced_pod("gone", namespace, grace_period_seconds=0)
    waiting = SimpleNamespace(timeline=timeline, recorder=recorder)  # a scenario's two parts
    held, _ = Scenario.wait_until(waiting, lambda s: s.get("pods", namespace, "gone"), 3)
    proxy.resume()
    assert not held, "the wait ended on a pod the cluster no longer had"
    assert timeline.state().get("pods", namespace, "gone") is None
