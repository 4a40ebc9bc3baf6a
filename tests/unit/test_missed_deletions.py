"""A deletion the recorder's watch never delivered (issue 43): the catch-up before a judgement
finds a recorded object a list lacks, at a revision below the list's, and closes it as a
re-list closes a gap. On 86c0d82 the object stayed live in the history for ever."""

from __future__ import annotations

from tests.unit.test_earned_violations import NS, pod
from tests.verdict_corpus import keep


class _Lists:
    """What the API server answers a catch-up's list with (its items and revision)."""

    def __init__(self, items: list[dict], version: int):
        self.items, self.version = items, version

    def get(self, path: str, **params) -> dict:
        return {"items": self.items, "metadata": {"resourceVersion": str(self.version)}}


def _recorder(tmp_path, listed: _Lists):
    from aftershock.timeline.recorder import Recorder
    from aftershock.timeline.resources import Resource
    from aftershock.timeline.store import Timeline

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: "
        "{server: 'https://127.0.0.1:9'}}]\nusers: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    timeline = Timeline()
    recorder = Recorder(timeline, kubeconfig, resources=[])
    recorder.api = listed
    recorder._served["pods"] = Resource("pods", "v1")
    return recorder, timeline


def _pod_at(name: str, revision: int) -> dict:
    obj = pod(name, "n1")
    obj["metadata"]["resourceVersion"] = str(revision)
    return obj


def test_a_deletion_the_watch_missed_is_closed_by_the_catch_up_as_a_gap(tmp_path):
    """web-0 recorded at revision 5, its DELETE never delivered, the watch past it (revision
    10); a list at 12 lacks it. On 86c0d82 the catch-up found the watch level (every listed
    object at its revision) and web-0 stayed live in the recorded state for ever: a false
    VIOLATED on 'is gone', never_more_than and G8."""
    from aftershock.timeline.entry import GAP_END, GAP_START, WATCH

    recorder, timeline = _recorder(tmp_path, _Lists([_pod_at("web-1", 9)], 12))
    for obj in (_pod_at("web-0", 5), _pod_at("web-1", 9)):
        timeline.append(WATCH, resource="pods", namespace=NS, name=obj["metadata"]["name"],
                        rv=obj["metadata"]["resourceVersion"], type="ADDED", object=obj)
    recorder._last_rv["pods"] = 10
    recorder.catch_up(timeout=0.2)
    assert timeline.state().get("pods", NS, "web-0") is None, "still live in the history"
    assert timeline.state().get("pods", NS, "web-1") is not None
    began, closed = timeline.entries[-2:]
    assert began.kind == GAP_START and "did not deliver the deletion of pods ns/web-0" in \
        began.detail, began.detail
    assert began.extra["since"] == timeline.entries[0].mono  # from web-0's last change
    assert closed.kind == GAP_END and closed.extra["changes"][0]["type"] == "DELETED"
    before = len(timeline.entries)
    recorder.catch_up(timeout=0.2)
    assert len(timeline.entries) == before, "closed once"
    # As recorded now, 'at no point more than 1 live pod of web' cannot tell: web-0 went some
    # time after its last change, perhaps before web-1 came. It used to be VIOLATED (2 live).
    from aftershock import properties
    from aftershock.properties import Judgement

    judgement = Judgement("never_more_than", {"namespace": NS, "selector": {"app": "web"},
                                              "limit": 1})
    verdict = properties.judge(["R1"], judgement, timeline.entries)
    assert verdict.status == "unknown", verdict.explain()
    keep("a-deletion-the-watch-missed", _steady(timeline.entries), judgement, ["R1"],
         {"R1": "unknown"}, "violated", "the review of issue 43, item 3")


def test_an_object_made_after_the_list_is_no_missed_deletion(tmp_path):
    from aftershock.timeline.entry import WATCH

    recorder, timeline = _recorder(tmp_path, _Lists([], 12))
    obj = _pod_at("web-2", 13)  # created after the list was made
    timeline.append(WATCH, resource="pods", namespace=NS, name="web-2", rv="13", type="ADDED",
                    object=obj)
    recorder._last_rv["pods"] = 13
    recorder.catch_up(timeout=0.2)
    assert timeline.state().get("pods", NS, "web-2") is not None
    assert len(timeline.entries) == 1


def _steady(entries: list) -> list:
    """The recorded entries with the recorder's clock made the test's own (0.1 s apart), so the
    saved run is the same every time the test runs."""
    from dataclasses import replace

    return [replace(e, mono=0.1 * i, wall=1e9 + 0.1 * i,
                    extra={**e.extra, **({"since": 0.0} if "since" in e.extra else {})})
            for i, e in enumerate(entries)]


def test_the_gap_of_a_missed_deletion_begins_at_its_last_change_not_its_last_request(tmp_path):
    """Issue 64, item 8: the gap began at the pod's last entry of any kind, an audited request
    about it included, so the stretch from its last change to that request counted it live."""
    from aftershock.timeline.entry import AUDIT, GAP_START, WATCH

    recorder, timeline = _recorder(tmp_path, _Lists([], 12))
    obj = _pod_at("web-0", 5)
    changed = timeline.append(WATCH, resource="pods", namespace=NS, name="web-0", rv="5",
                              type="ADDED", object=obj)
    timeline.append(AUDIT, resource="pods", namespace=NS, name="web-0", verb="patch",
                    subresource="status", actor="kwok-controller", code=404)
    recorder._last_rv["pods"] = 10
    recorder.catch_up(timeout=0.2)
    began = next(e for e in timeline.entries if e.kind == GAP_START)
    assert began.extra["since"] == changed.mono


class _Failing(_Lists):
    def __init__(self) -> None:
        super().__init__([], 12)
        self.fail = True

    def get(self, path: str, **params) -> dict:
        if self.fail:
            raise RuntimeError("GET /api/v1/pods: HTTP 503")
        return super().get(path, **params)


def test_a_list_that_fails_at_the_catch_up_opens_a_gap_a_later_one_closes(tmp_path):
    """Issue 64, item 11: a catch-up whose list failed left that watch's stretch as seen,
    though nothing showed it had delivered what happened."""
    from aftershock.timeline.entry import GAP_END, GAP_START, WATCH

    api = _Failing()
    recorder, timeline = _recorder(tmp_path, api)
    timeline.append(WATCH, resource="pods", namespace=NS, name="web-1", rv="9", type="ADDED",
                    object=_pod_at("web-1", 9))
    recorder._last_rv["pods"] = 9
    assert recorder.catch_up(timeout=0.2) == ["pods"]
    began = timeline.entries[-1]
    assert began.kind == GAP_START and "HTTP 503" in began.detail
    api.fail, api.items = False, [_pod_at("web-1", 9)]
    assert recorder.catch_up(timeout=0.2) == []
    assert timeline.entries[-1].kind == GAP_END
