"""Steps about per-node bookkeeping (the node records concept): N1-N5."""

from __future__ import annotations

from aftershock import checks
from aftershock.scenario import Scenario, StepFailed, then, when
from aftershock.sut.records import NodeRecords, never_reclaimed_early, node_names
from steps.nodes import delete_undrained

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


@then("within the staleness window that node record is released or reused")
def released_in_time(scenario: Scenario) -> None:
    if "reclaimed record" not in scenario.facts:
        raise StepFailed("no earlier step deleted the node holding a node record")
    index, node, since = scenario.facts["reclaimed record"]
    records = NodeRecords.of(scenario)
    bound = records.reclaim_bound(RECLAIM_LATENCY)

    def released(state) -> bool:
        return records.holder(state, index) != node

    description = f"index {index} no longer held by node/{node}"
    scenario.wait_until(released, max(0.0, since + bound - scenario.now))
    scenario.judge(checks.eventually(scenario.history(), released, description, start=since,
                                     within=bound, now=scenario.now,
                                     resources=[records.resource]))


@then("no node record was reclaimed early")
def not_reclaimed_early(scenario: Scenario) -> None:
    scenario.judge(never_reclaimed_early(scenario.history(), NodeRecords.of(scenario)))


@then("at no point were there more node records than nodes plus {extra:d}")
def records_bounded(scenario: Scenario, extra: int) -> None:
    records = NodeRecords.of(scenario)
    scenario.judge(checks.always(
        scenario.history(),
        lambda state: len(records.all(state)) <= len(node_names(state)) + extra,
        f"node records ≤ nodes + {extra}"))
