"""A saved timeline reads back as it was recorded, in today's format and in the one before."""

from __future__ import annotations

import json

from aftershock.timeline import Timeline, load
from aftershock.timeline.entry import GAP_END, WATCH


def test_a_saved_timeline_loads_back_entry_for_entry(tmp_path):
    timeline = Timeline()
    timeline.append(WATCH, resource="pods", namespace="ns", name="p", uid="u", rv="7",
                    type="ADDED", object={"metadata": {"name": "p"}})
    timeline.append(GAP_END, resource="pods", detail="re-listed", extra={"changes": []})
    timeline.mark("fault start: node/n1 cordoned", fault="node/n1 cordoned")
    path = timeline.save(tmp_path)
    assert json.loads(path.read_text().splitlines()[0])["timeline"] == 2
    assert load(tmp_path) == timeline.entries


def test_a_timeline_saved_one_object_per_line_still_loads(tmp_path):
    (tmp_path / "timeline.jsonl").write_text(
        '{"seq":0,"mono":1.5,"wall":2.5,"kind":"watch","resource":"pods","name":"p",'
        '"type":"ADDED","object":{"metadata":{"name":"p"}}}\n'
        '{"seq":1,"mono":1.6,"wall":2.6,"kind":"mark","detail":"recording","extra":{"a":1}}\n')
    first, second = load(tmp_path)
    assert (first.kind, first.name, first.namespace, first.object) == (
        WATCH, "p", "", {"metadata": {"name": "p"}})
    assert (second.detail, second.extra) == ("recording", {"a": 1})
