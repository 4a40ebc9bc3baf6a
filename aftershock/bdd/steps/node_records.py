"""Steps about per-node bookkeeping (the node records concept): N1-N5."""

from __future__ import annotations

from dataclasses import asdict

from aftershock.bdd.steps.history import always, eventually
from aftershock.bdd.steps.nodes import delete_undrained
from aftershock.concepts.records import NodeRecords
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, then, when

# What the implementation may take to act once a record is reclaimable (a scenario bound L).
RECLAIM_LATENCY = 3.0


def _index(records: NodeRecords, which: str) -> int:
    if which == "the highest index":
        return records.highest
    words = which.split()
    if len(words) == 2 and words[0] == "index" and words[1].isdigit():
        return int(words[1])
    raise StepFailed(f"'{which}': expected 'index N' or 'the highest index'")


@when("I delete the node holding the node record with {which}")
def delete_holder(scenario: Scenario, which: str) -> None:
    records = NodeRecords.of(scenario)
    index = _index(records, which)
    node = records.holder(scenario.timeline.state(), index)
    if node is None:
        raise StepFailed(f"no node record holds index {index} (of {records.slots})")
    scenario.remember("reclaimed record", (index, node, scenario.now))
    delete_undrained(scenario, node)


@then("within the staleness window that node record is released or reused",
      check="eventually")
def released_in_time(scenario: Scenario) -> None:
    if "reclaimed record" not in scenario.facts:
        raise StepFailed("no earlier step deleted the node holding a node record")
    index, node, since = scenario.facts["reclaimed record"]
    bound = NodeRecords.of(scenario).reclaim_bound(RECLAIM_LATENCY)
    eventually(scenario, f"the node record with index {index} is not held by node/{node}",
               bound, start=since)


@then("no node record was reclaimed early", check="never_reclaimed_early")
def not_reclaimed_early(scenario: Scenario) -> None:
    scenario.judge(Judgement("never_reclaimed_early",
                             {"records": asdict(NodeRecords.of(scenario))}))


@then("at no point were there more node records than nodes plus {extra:d}", check="always")
def records_bounded(scenario: Scenario, extra: int) -> None:
    always(scenario, f"there are no more node records than nodes plus {extra}")
