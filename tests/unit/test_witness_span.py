"""A witness's span is from its first recorded line to its last, whatever order a judge lists
them in (B3 lists the eviction before the binding that outlived it: the span once came out
negative)."""

from aftershock.checks.verdict import VIOLATED, Verdict
from aftershock.timeline.entry import MARK, Entry


def _entry(seq: int, at: float) -> Entry:
    return Entry(seq=seq, mono=at, wall=1e9 + at, kind=MARK, detail=f"line {seq}")


def test_a_witness_listed_out_of_time_order_spans_its_first_to_its_last_line():
    verdict = Verdict("B3", VIOLATED, "evicted in part",
                      [_entry(2, 47.392), _entry(1, 46.394), _entry(3, 46.9)])
    assert "(3 events over 0.998s)" in verdict.explain()


def test_a_witness_of_one_line_spans_nothing():
    assert "(1 events over 0.000s)" in Verdict("B3", VIOLATED, "x", [_entry(1, 5.0)]).explain()
