"""Judging again a run saved before judgements were recorded as data.

Such a run has each scenario's timeline and, in its allure results, every step's words with the
moments it started and stopped. Each Then step is replayed against a ``SavedScenario``: the
step's own code builds the judgement it made then, over the history recorded before it stopped,
with what earlier steps established read back from the timeline's marks and the files the
scenario left (the data probe's answers, the driver's prepare log). Nothing reaches a cluster.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aftershock.bdd.steps  # noqa: F401  (fills the step registry)
from aftershock.bdd.steps.nodes import bound_to_node
from aftershock.concepts import profile_concept
from aftershock.concepts.records import NodeRecords
from aftershock.grammar import label_ids, match_step, split_label
from aftershock.profile.load import load_profile
from aftershock.properties.base import Judgement
from aftershock.properties.context import Context, plain
from aftershock.timeline.entry import MARK, WATCH, Entry
from aftershock.timeline.state import State, node_of


class Captured(Exception):  # a signal: the step made its judgement
    def __init__(self, judgement: Judgement):
        self.judgement = judgement


@dataclass
class SavedStep:
    keyword: str
    text: str
    start: float  # recorder clock
    stop: float
    ran: bool = True  # allure lists the steps after a failure too, as skipped


@dataclass
class Record:
    ids: list[str]
    check: str
    params: dict[str, Any]
    entries: list[Entry]
    step: str
    error: str | None = None


@dataclass
class SavedImplementation:
    actor: str
    workdir: Path
    kubeconfig: Path


@dataclass
class SavedTimeline:
    scenario: SavedScenario

    @property
    def entries(self) -> list[Entry]:
        return self.scenario.history()

    def state(self) -> State:
        return state_at(self.scenario.entries, self.scenario.clock)


@dataclass(repr=False)
class SavedScenario:
    """What a Then step sees of a scenario of a saved run, at the moment it ran."""

    namespace: str
    entries: list[Entry]
    report_dir: Path
    facts: dict[str, Any] = field(default_factory=dict)
    clock: float = 0.0
    stop: float = 0.0
    property_label: str | None = None
    step: str | None = None
    recorder: None = None

    def __post_init__(self) -> None:
        self.timeline = SavedTimeline(self)

    @property
    def now(self) -> float:
        return self.clock

    def wait_until(self, holds, timeout: float):
        self.clock = self.stop  # the step waited until it stopped
        return True, None

    def history(self) -> list[Entry]:
        return [e for e in self.entries if e.mono <= self.clock]

    def judge(self, judgement: Judgement):
        raise Captured(judgement)

    def recall(self, key: str) -> Any:
        return self.context().recall(key)

    def concept(self, name: str) -> dict[str, Any]:
        return profile_concept(self.facts.get("profile"), name)

    def context(self) -> Context:
        return Context.of(self.namespace, self.facts.get("profile"), self.facts)

    def require(self, capability) -> None:
        """It ran then."""

    def observe(self, key: str, produce):
        """What the step read outside the timeline, as the scenario saved it."""
        path = self.report_dir / "implementation" / f"{key}.json"
        if not path.exists():
            raise LookupError(f"{path.name} was not saved by the run")
        return json.loads(path.read_text())


def state_at(entries: list[Entry], moment: float) -> State:
    state = State()
    for entry in entries:
        if entry.mono <= moment:
            state.apply(entry)
    return state


# --- what earlier steps established ---------------------------------------------------------

GANG = re.compile(r"create \w+/[^/]+/(?P<name>\S+): .* delay (?P<delay>\d+)s$")
SCALE = re.compile(r"scale storagecluster/[^/]+/(?P<name>\S+) from (?P<before>\d+) to "
                   r"(?P<size>\d+)$")
STORAGE = re.compile(r"create \w+/[^/]+/(?P<name>\S+) \((?P<size>\d+) members, (?P<mode>\w+)\)$")
DRAINED = re.compile(r"drain: node/(?P<node>\S+) cordoned$")
DELETED = re.compile(r"fault start: node/(?P<node>\S+) deleted without a drain$")
RUNNING_POD = re.compile(r"the node running pod (?P<pod>[a-z0-9][-a-z0-9.]*)")
HOLDING = re.compile(r"I delete the node holding the node record with (?P<which>.+)$")


def facts_before(scenario: SavedScenario, steps: list[SavedStep], moment: float) -> None:
    """Fill ``scenario.facts`` with what the steps before ``moment`` established."""
    entries, facts = scenario.entries, scenario.facts
    for mark in (e for e in entries if e.kind == MARK and e.mono <= moment):
        if found := DRAINED.match(mark.detail):
            facts["drained node"] = found["node"]
        elif found := DELETED.match(mark.detail):
            _deleted(scenario, found["node"], mark)
        elif found := GANG.match(mark.detail):
            facts[f"gang {found['name']} termination delay"] = int(found["delay"])
        elif found := SCALE.match(mark.detail):
            facts[f"storage {found['name']} removed"] = set(
                range(int(found["size"]), int(found["before"])))
        elif found := STORAGE.match(mark.detail):
            facts[f"storage {found['name']} mode"] = found["mode"]
    for step in (s for s in steps if s.stop <= moment):
        if found := RUNNING_POD.search(step.text):
            pod = state_at(entries, step.start).get("pods", scenario.namespace, found["pod"])
            if pod is not None:
                facts[f"node of pod {found['pod']}"] = node_of(pod)
        if (found := HOLDING.search(step.text)) and facts.get("profile") is not None:
            _reclaimed(scenario, found["which"], step, moment)
    for path in sorted((scenario.report_dir / "implementation").glob("ledger-*.json")):
        name = path.stem.removeprefix("ledger-")
        facts[f"storage {name} ledger"] = (path, json.loads(path.read_text()))


def _deleted(scenario: SavedScenario, node: str, mark: Entry) -> None:
    """The step deleted ``node`` right after this mark; what was bound to it, as recorded."""
    scenario.facts["deleted node"] = node
    scenario.facts["bound to the deleted node"] = bound_to_node(
        state_at([e for e in scenario.entries if e.seq < mark.seq], mark.mono), node)


def _reclaimed(scenario: SavedScenario, which: str, step: SavedStep, moment: float) -> None:
    records = NodeRecords.of(scenario)
    index = records.highest if which == "the highest index" else int(which.split()[-1])
    marks = [e for e in scenario.entries if e.kind == MARK and step.start <= e.mono <= moment
             and DELETED.match(e.detail)]
    if marks:
        node = DELETED.match(marks[0].detail)["node"]
        scenario.facts["reclaimed record"] = (index, node, step.start)


# --- the run's files --------------------------------------------------------------------------


def allure_tests(run_dir: Path) -> list[dict[str, Any]]:
    results = []
    for path in sorted((run_dir / "allure-results").glob("*-result.json")):
        try:
            results.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return results


def steps_of(test: dict[str, Any], offset: float) -> list[SavedStep]:
    """The test's steps on the recorder's clock (allure keeps wall milliseconds)."""
    steps = []
    for step in test.get("steps") or []:
        keyword, _, text = step.get("name", "").partition(" ")
        steps.append(SavedStep(keyword, text, step["start"] / 1000 + offset,
                               step.get("stop", step["start"]) / 1000 + offset,
                               step.get("status") != "skipped"))
    return steps


def matching_test(tests: list[dict[str, Any]], entries: list[Entry]) -> dict[str, Any] | None:
    """The allure test that ran while this timeline was recorded (scenarios run one at a
    time): the one overlapping it most."""
    walls = [e.wall for e in entries if e.kind != "audit"]
    if not walls:
        return None
    first, last = min(walls) * 1000, max(walls) * 1000

    def overlap(test: dict[str, Any]) -> float:
        return min(last, test.get("stop", 0)) - max(first, test.get("start", 0))
    best = max(tests, key=overlap, default=None)
    return best if best is not None and overlap(best) > 0 else None


def namespace_of(entries: list[Entry]) -> str | None:
    for entry in entries:
        labels = ((entry.object or {}).get("metadata") or {}).get("labels") or {}
        if entry.kind == WATCH and entry.resource == "namespaces" and entry.type == "ADDED" \
                and labels.get("aftershock.io/scenario") == "true":
            return entry.name
    return None


def find_profile(name: str, roots: list[Path]):
    for root in roots:
        for path in sorted(root.glob("**/*.yaml")):
            if path.stem == name:
                profile = load_profile(path)
                if profile.name == name:
                    return profile
    raise LookupError(f"profile {name} not found under {', '.join(map(str, roots))}")


def implementation_for(profile, namespace: str, report_dir: Path):
    if profile is None or (profile.start is None and profile.in_cluster is None):
        return None
    account = profile.start.service_account if profile.start else \
        profile.in_cluster.service_account
    workdir = report_dir / "implementation"
    return SavedImplementation(f"system:serviceaccount:{namespace}:{account}", workdir,
                               workdir / f"{profile.name}.kubeconfig")


def reconstruct(run_dir: Path, scenario_dir: Path, entries: list[Entry], profile_name: str,
                profile_roots: list[Path],
                tests: list[dict[str, Any]] | None = None) -> list[Record]:
    """Every judgement the scenario's Then steps made, rebuilt; an error names what is
    missing (the verdict is then unknown)."""
    test = matching_test(tests if tests is not None else allure_tests(run_dir), entries)
    namespace = namespace_of(entries)
    if test is None or namespace is None or not entries:
        why = "its allure result" if test is None else "its namespace"
        return [Record([], "", {}, [], "", f"the saved run does not show {why}")]
    offset = entries[0].mono - entries[0].wall
    saved = SavedScenario(namespace, entries, scenario_dir)
    profile = None
    if profile_name not in ("(none)", "(harness)", ""):
        profile = find_profile(profile_name, profile_roots)
    saved.facts["profile"] = profile
    saved.facts["implementation"] = implementation_for(profile, namespace, scenario_dir)
    all_steps = steps_of(test, offset)
    records = []
    for step in (s for s in all_steps if s.ran):
        found = match_step(step.text)
        if found is None or found[0].check is None:
            continue
        definition, arguments = found
        label = split_label(step.text)[1]
        ids = label_ids(label) if label else [definition.check]
        facts_before(saved, all_steps, step.start)
        saved.clock, saved.stop = step.start, step.stop
        text = f"{step.keyword} {step.text}"
        try:
            definition.func(saved, **arguments)
            error = "the step judged nothing"
        except Captured as captured:
            judgement = captured.judgement
            seen = [e for e in entries if e.mono <= step.stop]  # judged as the step ended
            records.append(Record(ids, judgement.check, plain(judgement.params), seen, text))
            continue
        except Exception as exc:
            error = f"cannot rebuild its judgement: {exc}"
        records.append(Record(ids, definition.check, {}, [], text, error))
    return records
