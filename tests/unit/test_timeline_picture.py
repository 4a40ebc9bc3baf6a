"""The timeline picture: pod lanes by node and phase, fault spans, condition ticks, witness."""

from aftershock.report import picture as picturing
from aftershock.report import plot
from aftershock.report.picture import PENDING, RUNNING, TERMINATING, UNSCHEDULED
from aftershock.timeline.entry import MARK, WATCH, Entry

T0 = 1000.0


def _pod(seq, at, name, node=None, phase="Pending", kind="MODIFIED", deleting=False):
    meta = {"name": name, "namespace": "ns"}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-22T08:00:00Z"
    return Entry(seq, T0 + at, 0.0, WATCH, "pods", "ns", name, type=kind,
                 object={"metadata": meta, "spec": {"nodeName": node} if node else {},
                         "status": {"phase": phase}})


def _history():
    gang = {"status": {"conditions": [{"type": "MinAvailableBreached", "status": "False"}]}}
    breached = {"status": {"conditions": [{"type": "MinAvailableBreached", "status": "True"}]}}
    return [
        _pod(0, 0.0, "web-a", kind="ADDED"),
        _pod(1, 0.5, "web-a", node="node-2"),
        _pod(2, 1.0, "web-a", node="node-2", phase="Running"),
        _pod(3, 1.2, "web-b", node="node-1", phase="Running", kind="ADDED"),
        Entry(4, T0 + 2.0, 0.0, MARK, detail="fault start: cordon node/node-1",
              extra={"fault": "cordon node/node-1"}),
        Entry(5, T0 + 2.1, 0.0, WATCH, "gangs", "ns", "g", type="ADDED", object=gang),
        Entry(6, T0 + 3.0, 0.0, WATCH, "gangs", "ns", "g", type="MODIFIED", object=breached),
        _pod(7, 3.5, "web-b", node="node-1", phase="Running", deleting=True),
        _pod(8, 4.0, "web-b", node="node-1", kind="DELETED"),
        Entry(9, T0 + 5.0, 0.0, MARK, detail="fault end: cordon node/node-1",
              extra={"fault": "cordon node/node-1"}),
        Entry(10, T0 + 6.0, 0.0, MARK, detail="scale gang/ns/g to 2"),
    ]


def test_lanes_are_grouped_by_node_and_coloured_by_phase():
    entries = _history()
    drawing = picturing.build(entries, witness=[entries[7]])
    assert drawing.lanes == [("node-1", "pod/ns/web-b"), ("node-2", "pod/ns/web-a")]
    web_a = [(s.state, s.start, s.end) for s in drawing.segments if s.lane == 1]
    assert web_a == [(UNSCHEDULED, 0.0, 0.5), (PENDING, 0.5, 1.0), (RUNNING, 1.0, 6.0)]
    web_b = [(s.state, round(s.start, 1), round(s.end, 1)) for s in drawing.segments
             if s.lane == 0]
    assert web_b == [(RUNNING, 1.2, 3.5), (TERMINATING, 3.5, 4.0)]  # gone after its DELETED
    assert [(f.label, f.start, f.end) for f in drawing.faults] == [("cordon node/node-1", 2.0, 5.0)]
    labels = [t.label for t in drawing.ticks if not t.witness]
    assert "gang/ns/g MinAvailableBreached=True" in labels
    assert "scale gang/ns/g to 2" in labels
    assert [t.at for t in drawing.ticks if t.witness] == [3.5]


def test_the_html_page_shows_lanes_faults_and_witness_and_the_png_is_an_image(tmp_path):
    entries = _history()
    drawing = picturing.build(entries, witness=[entries[7]])
    page = plot.page(drawing, "a scenario", witness="R1: VIOLATED: too many pods")
    assert "pod/ns/web-b" in page and "fault: cordon node/node-1" in page
    assert 'class="witness"' in page and "R1: VIOLATED: too many pods" in page
    png = plot.write_png(drawing, tmp_path / "timeline.png", "a scenario")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_an_empty_history_still_draws():
    drawing = picturing.build([])
    assert drawing.lanes == [] and drawing.duration == 0.0
    assert "<svg" in plot.page(drawing, "nothing happened")
