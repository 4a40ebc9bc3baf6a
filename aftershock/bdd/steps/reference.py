"""Then steps that judge a run against the unperturbed reference runs `aftershock explore`
learned (the E properties); a scenario it finds carries its reference in the words, or in the
JSON file next to it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aftershock.bdd.steps.implementation import implementation_actor
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, then

COUNT = re.compile(r"^(?P<key>[a-z0-9.]+ (?:create|delete)) (?P<low>\d+)(?:\.\.(?P<high>\d+))?$")


def parse_counts(text: str) -> dict[str, list[int]]:
    """'pods create 5, pods delete 0..1' → {'pods create': [5, 5], 'pods delete': [0, 1]}."""
    counts: dict[str, list[int]] = {}
    for part in (p.strip() for p in text.split(",")):
        found = COUNT.match(part)
        if part == "nothing":
            continue
        if found is None:
            raise StepFailed(f"'{part}': expected '<resource> create|delete <n>[..<m>]', e.g. "
                             "'pods create 5'")
        low = int(found["low"])
        counts[found["key"]] = [low, int(found["high"] or low)]
    return counts


def format_counts(counts: dict[str, list[int]]) -> str:
    return ", ".join(f"{key} {lo}" if lo == hi else f"{key} {lo}..{hi}"
                     for key, (lo, hi) in sorted(counts.items())) or "nothing"


@then("the implementation's creates and deletes are as in the reference: {counts}",
      check="writes_as_reference")
def writes_as_reference(scenario: Scenario, counts: str) -> None:
    scenario.judge(Judgement("writes_as_reference", {
        "actor": implementation_actor(scenario), "namespace": scenario.namespace,
        "expected": parse_counts(counts)}))


def reference_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise StepFailed(f"no reference file {text} (written by aftershock explore)")
    return path


@then("the objects the implementation owns end as in the reference {path}",
      check="end_state_as_reference")
def end_state_as_reference(scenario: Scenario, path: str) -> None:
    reference = json.loads(reference_file(path).read_text())
    scenario.judge(Judgement("end_state_as_reference", {
        "namespace": scenario.namespace, "reference": reference["objects"],
        "masks": reference["masks"], "actor": implementation_actor(scenario),
        "unordered": reference.get("unordered", {})}))


@then("the implementation had at most {limit:d} writes refused within 10 seconds",
      check="no_error_storm")
def no_error_storm(scenario: Scenario, limit: int) -> None:
    scenario.judge(Judgement("no_error_storm", {"actor": implementation_actor(scenario),
                                                "namespace": scenario.namespace,
                                                "limit": limit}))
