"""What makes the model quick to read must not change what it says: a state that stops keeping
an index answers the question again from its objects, and lives read name by name are the
lives read change by change."""

from __future__ import annotations

from aftershock.history import History
from aftershock.history.lives import lives_of
from aftershock.history.state import Query, State, is_live
from aftershock.timeline.entry import WATCH, Entry

NS = "ns"


def _pod(name: str, uid: str, labels: dict[str, str] | None = None,
         deleting: bool = False) -> dict:
    meta = {"name": name, "namespace": NS, "uid": uid, "labels": labels or {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def test_a_forgotten_question_asked_again_is_answered_from_the_objects_then():
    state = State()
    live = Query("pods", NS, {"app": "web"}, is_live)
    state.put(("pods", NS, "a"), _pod("a", "1"))
    assert state.count(live) == 1
    kept = state.questions()
    every = Query("pods", NS, {"app": "web"})
    assert state.count(every) == 1
    state.forget(state.questions() - kept)
    assert state.questions() == kept
    state.put(("pods", NS, "b"), _pod("b", "2"))
    state.put(("pods", NS, "a"), _pod("a", "1", deleting=True))
    assert state.count(live) == 1  # kept up to date
    assert state.count(every) == 2  # not kept, and built again from what is there now


def _history(events: list[tuple[str, str, str, dict | None]]) -> History:
    entries = []
    for rv, (name, uid, kind, obj) in enumerate(events, start=100):
        entries.append(Entry(len(entries), rv / 100, 1e9 + rv / 100, WATCH, "pods", NS, name,
                             uid, str(rv), kind, obj, extra={}))
    return History(entries)


def _by_change(changes) -> list[tuple[str, list[int]]]:
    """The lives as the model once read them: change by change, in the cluster's order."""
    lives: dict[str, list[int]] = {}
    for change in changes:
        lives.setdefault(change.uid, []).append(change.rv)
    return sorted(lives.items())


def test_lives_read_name_by_name_are_the_lives_read_change_by_change():
    history = _history([
        ("web-0", "u1", "ADDED", _pod("web-0", "u1")),
        ("web-1", "u2", "ADDED", _pod("web-1", "u2")),
        ("web-0", "u1", "MODIFIED", _pod("web-0", "u1", deleting=True)),
        ("web-0", "u1", "DELETED", _pod("web-0", "u1", deleting=True)),
        ("web-1", "u2", "MODIFIED", _pod("web-1", "u2")),
        ("web-0", "u3", "ADDED", _pod("web-0", "u3")),
    ])
    changes = history.changes
    lives = lives_of(history._built.sequences.values())
    assert sorted((uid, [c.rv for c in life.changes]) for uid, life in lives.items()) == \
        _by_change(changes)
    assert list(lives) == ["u1", "u2", "u3"]  # first made first
    assert [life.uid for life in history.lives_of("pods", NS, "web-0")] == ["u1", "u3"]


def test_a_history_that_kept_no_uid_has_a_life_per_name_until_each_deletion():
    history = _history([
        ("web-0", "", "ADDED", {"metadata": {"name": "web-0", "namespace": NS}}),
        ("web-0", "", "DELETED", {"metadata": {"name": "web-0", "namespace": NS}}),
        ("web-0", "", "ADDED", {"metadata": {"name": "web-0", "namespace": NS}}),
        ("web-1", "", "ADDED", {"metadata": {"name": "web-1", "namespace": NS}}),
    ])
    web0 = history.lives_of("pods", NS, "web-0")
    assert [[c.type for c in life.changes] for life in web0] == [["ADDED", "DELETED"],
                                                                 ["ADDED"]]
    assert len(history.lives) == 3


def test_a_long_historys_model_is_kept_out_of_the_collector_until_it_goes(monkeypatch):
    import gc

    from aftershock.history import model
    from aftershock.timeline import collector

    monkeypatch.setattr(model, "KEEP_OUT_AT", 3)
    fences = collector._active
    history = _history([(f"web-{i}", f"u{i}", "ADDED", _pod(f"web-{i}", f"u{i}"))
                        for i in range(4)])
    assert len(history.changes) == 4
    assert collector._active == fences + 1 and gc.get_freeze_count() > 0
    del history  # nothing of the model holds it in a cycle: it goes, and lets go
    assert collector._active == fences
    if fences == 0:
        assert gc.get_freeze_count() == 0


def test_a_re_list_without_its_revision_places_a_deletion_at_the_streams_highest():
    """A re-list that kept no revision places what it found gone at the highest revision the
    pod stream had shown, even "0": the history stays in revision order (a reading that took
    "0" for none left it in arrival order, and a+ b+ a- c+ had one pod fewer at c)."""
    from aftershock.timeline.entry import GAP_END, GAP_START

    def listed(name: str) -> dict:
        return {"metadata": {"name": name, "namespace": NS, "uid": f"u{name}",
                             "resourceVersion": "0"}}

    entries = [Entry(0, 1.0, 1e9 + 1, WATCH, "pods", NS, "a", "ua", "0", "ADDED", listed("a")),
               Entry(1, 2.0, 1e9 + 2, WATCH, "pods", NS, "b", "ub", "0", "ADDED", listed("b")),
               Entry(2, 3.0, 1e9 + 3, GAP_START, "pods", detail="x"),
               Entry(3, 4.0, 1e9 + 4, GAP_END, "pods", rv="",
                     extra={"changes": [{"type": "DELETED", "object": listed("a")}]}),
               Entry(4, 5.0, 1e9 + 5, WATCH, "pods", NS, "c", "uc", "0", "ADDED", listed("c"))]
    history = History(entries)
    assert [(c.name, c.type) for c in history.changes] == [
        ("a", "ADDED"), ("b", "ADDED"), ("c", "ADDED"), ("a", "DELETED")]
