"""`aftershock explore`: reference runs, then one plan after another on one cluster (a fresh
namespace each, the implementation restarted), each judged by the oracles; a plan that breaks
a property the references kept is a finding, written as a scenario and replayed to tell a bug
from a flake."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aftershock.bdd.steps.implementation import implementation_actor
from aftershock.checks.attribution import DENIED
from aftershock.checks.verdict import UNKNOWN, VIOLATED
from aftershock.errors import UserError
from aftershock.explore import oracles, plans, trace
from aftershock.explore.finding import picture, scenario_lines, write
from aftershock.explore.plans import Plan
from aftershock.explore.workload import Workload, with_block
from aftershock.properties import get
from aftershock.runs.shards import Shard
from aftershock.sut.observed import PROXY_LOG
from aftershock.timeline.entry import MARK, SINGULAR, WATCH, Entry, singular_of
from aftershock.timeline.resources import spelled

OBSERVED = "Given the implementation's watches and writes are observed"
PLANNED = "planned.json"  # an exploration's plans, for its shards (--from)
REPRODUCED = 0.8  # a finding that replays less often than this is flaky
MIN_REPLAYS = 3  # fewer replays tell no bug from a flake (1 of 1 is no bug): --replays' floor
WAIT_FLOOR = 15  # seconds: the least a workload's wait is given after a node fault
WITHIN = re.compile(r"(Given|When|Then) within (\d+) seconds ")


@dataclass
class Settings:
    budget: float = 1800.0
    seed: int = 0
    references: int = 3
    replays: int = 10
    max_plans: int | None = None
    stall: tuple[float, ...] = (4.0,)
    miss: tuple[float, ...] = (3.0,)
    exitfirst: bool = False  # stop at the first finding that reproduces as a bug
    shard: Shard | None = None  # run only the plans of this shard (a hash of each plan's name)
    kinds: tuple[str, ...] = plans.KINDS  # run only plans of these kinds (--kinds)


@dataclass
class Outcome:
    name: str
    lines: list[str]
    seconds: float
    violated: dict[str, str] = field(default_factory=dict)  # property → what its verdict said
    new: dict[str, str] = field(default_factory=dict)  # of those, what makes it a finding
    unknown: dict[str, str] = field(default_factory=dict)
    # property → the objects its violation's witness named, as any run would name them
    # (`named_objects`): what tells two plans breaking one property on other objects apart
    objects: dict[str, list[str]] = field(default_factory=dict)
    failed: str = ""
    # whether an anchored fault fired in it (the timeline's "fired:" marks): a plan's stall,
    # miss or kill waits for an event or write that may never come (a node plan's fault is a
    # step, and runs as the others do)
    fired: bool = False
    report_dir: Path | None = None
    trace: trace.Trace | None = None
    step_seconds: dict[str, float] = field(default_factory=dict)  # line → seconds it took

    def named(self, labels: Iterable[str]) -> list[str]:
        """The objects the violations of these properties named."""
        return sorted({name for label in labels for name in self.objects.get(label, ())})


@dataclass
class Finding:
    number: int
    plan: Plan | None  # None: the reference runs themselves broke it
    outcome: Outcome
    feature: Path | None = None
    reproduced: int = 0
    replayed: int = 0
    same: list[str] = field(default_factory=list)  # later plans that found the same
    wanted: int = 0  # the replays it needs before it is called a bug or flaky
    # A flaky finding's control runs: the workload with no fault, as many times as it was
    # replayed, and how many of them broke what it broke.
    controls: int = 0
    controlled: int = 0
    # Replays whose own anchored fault never fired: runs with no fault, counted for nothing.
    unfired: int = 0

    @property
    def kind(self) -> str:
        """The plan's fault kind; NO_FAULT for the reference runs' own finding, and NOT_FIRED
        for a plan whose anchored fault never fired (the run had no fault: what it broke is
        not that fault's doing)."""
        if self.plan is None:
            return NO_FAULT
        return NOT_FIRED if self.plan.kind != "node" and not self.outcome.fired \
            else self.plan.kind

    @property
    def objects(self) -> list[str]:
        return self.outcome.named(self.outcome.violated)

    @property
    def signature(self) -> tuple[str, frozenset[str], frozenset[str]]:
        """What a later plan must match to be this bug again: the fault kind, the properties
        broken and the objects their violations named."""
        return (self.kind, frozenset(self.outcome.violated), frozenset(self.objects))

    @property
    def verdict(self) -> str:
        """A bug only when its replays reproduce it and its control runs (the workload with
        no fault) do not break the same."""
        if not self.replayed:
            return "not replayed"
        if self.replayed < max(self.wanted, MIN_REPLAYS):
            return "not enough replays"  # the budget ran out first: 1 of 1 is no bug
        if self.reproduced >= REPRODUCED * self.replayed:
            return AS_WITH_NO_FAULT if self.controlled else "bug"
        return UNPERTURBED if self.controlled else "flaky"


# A flaky finding that its control runs, with no fault at all, break too: the implementation's
# own nondeterminism (a race the references happened to miss), not the plan's doing. Reported
# as such; a later plan breaking the same is a finding of its own, replayed (it may be a bug
# on that property that no race explains).
UNPERTURBED = "flaky without a fault"
# A finding its replays reproduce, whose control runs break the same with no fault: what the
# workload does anyway (a property the reference runs break too), never the fault's bug.
AS_WITH_NO_FAULT = "broken as with no fault"
# The kind of the finding the reference runs make when one of them breaks a property: no plan,
# reported in its own right and replayed, and no later plan is folded into it.
NO_FAULT = "broken with no fault"
FIRED = "fired: "  # the timeline mark of an anchored fault when it fires (bdd/steps/anchored)
# The kind of a finding whose plan's anchored fault never fired (the event it waited for never
# came): a run with no fault after all, reported as such and never credited to the fault.
NOT_FIRED = "its fault never fired"


def lines_for(workload: Workload, plan: Plan | None, judged: list[str],
              wait_cap: int | None = None) -> list[str]:
    """The scenario a run plays: the workload, the plan's step where it goes, the wait for
    quiet, then what it is judged by. After a node fault the workload's waits are no oracle
    (the fault changes what they can reach): each is cut to ``wait_cap`` seconds."""
    out = []
    for index, step in enumerate(workload.steps):
        node_fault_before = plan is not None and plan.kind == "node" and index > plan.after
        out.append(bounded(step.words, wait_cap) if node_fault_before and wait_cap
                   else step.words)
        if index == workload.started:
            anchored = plan is not None and plan.kind != "node"
            out.append(plan.step if anchored else OBSERVED)
        if plan is not None and plan.kind == "node" and index == plan.after:
            out.append(plan.step)
    return [*out, oracles.QUIET, *judged]


def bounded(line: str, cap: int) -> str:
    """'Then within 60 seconds X' as 'Then within {cap} seconds X' when cap is less."""
    found = WITHIN.match(line)
    if found and int(found[2]) > cap:
        return f"{found[1]} within {cap} seconds {line[found.end():]}"
    return line


def wait_cap_of(references: list[Outcome]) -> int:
    """Twice the longest any wait of the workload took in the reference runs, at least
    WAIT_FLOOR."""
    took = [s for o in references for line, s in o.step_seconds.items() if WITHIN.match(line)]
    return max(WAIT_FLOOR, math.ceil(2 * max(took, default=0)))


class Explorer:
    def __init__(self, session, workload: Workload, settings: Settings, out: Path,
                 say: Callable[[str], None]):
        self.session, self.workload, self.settings = session, workload, settings
        self.out, self.say = out, say
        self.began = time.monotonic()
        self.findings: list[Finding] = []
        self.outcomes: list[tuple[Plan, Outcome]] = []
        self.references: list[Outcome] = []
        self.generated: plans.Plans | None = None
        self.reference: oracles.Reference | None = None
        self.reference_violations: set[str] = set()
        self.wait_cap: int | None = None
        self.first_bug_after: float | None = None  # seconds from the start to the first bug
        # The last run's scenario and its history as judged (kept for one run only: a long
        # exploration must not hold every history).
        self.last_scenario = None
        self.last_history: tuple = ([], "", "")

    # --- running one scenario ---------------------------------------------------------------

    def play(self, name: str, lines: list[str], feature: Path | None = None) -> Outcome:
        """One run of ``lines``: the workload's, or a finding's ``feature``'s, whose manifests
        are named relative to that file, as a feature's are."""
        began = time.monotonic()
        self.session.manifests_dir = (feature or self.workload.path).resolve().parent
        scenario = self.session.new_scenario(name, records=[
            *self.workload.records, *(self.reference.records if self.reference else ())])
        outcome = Outcome(name, lines, 0.0, report_dir=scenario.report_dir)
        for line in lines:
            try:
                text, block = with_block(line)
                result = self.session.step(text, raise_on_failure=False, block=block)
            except UserError:
                raise
            except Exception as exc:  # one plan's error, not the whole exploration's
                outcome.failed = f"{line.strip()}: {exc!r}"[:300]
                break
            outcome.step_seconds[line] = result.seconds
            if result.status in ("failed", "skipped"):
                if not DENIED.search(result.message):
                    outcome.failed = f"{result.line}: {result.message.splitlines()[0][:300]}"
                break  # a write a webhook denied ends the run too, and is judged
        if not outcome.failed:
            self.session.step(oracles.ADMITTED, raise_on_failure=False)
        # The history as the judgements saw it: the teardown's deletions are no end state.
        history = scenario.history()
        outcome.fired = any(e.kind == MARK and e.detail.startswith(FIRED) for e in history)
        broken = [v for v in scenario.verdicts if v.status == VIOLATED]
        generated = generated_names(history) if broken else {}
        for verdict in broken:
            named = named_objects(verdict.witness, generated)
            for label in verdict.property.split(", "):
                outcome.violated.setdefault(label, verdict.summary)
                outcome.objects[label] = sorted({*outcome.objects.get(label, ()), *named})
        for verdict in scenario.verdicts:
            if verdict.status == UNKNOWN:
                for label in verdict.property.split(", "):
                    outcome.unknown.setdefault(label, verdict.summary)
        namespace = scenario.namespace
        self.last_history = (history, namespace, _actor(scenario))
        self.last_scenario = scenario
        self.session.end_scenario()
        log = next(iter(sorted((scenario.report_dir or Path()).rglob(PROXY_LOG))), None)
        outcome.trace = trace.read(log, namespace) if log else trace.Trace()
        outcome.seconds = time.monotonic() - began
        return outcome

    # --- the phases -------------------------------------------------------------------------

    def learn(self) -> None:
        """Reference runs: the workload with nothing perturbed, judged by its labelled
        properties; what they agree on becomes the differential oracles."""
        judged = self.labelled(None)
        runs, traces, outcomes = [], [], []
        for index in range(1, self.settings.references + 1):
            outcome = self.play(f"reference-{index}", lines_for(self.workload, None, judged))
            self.say(f"reference {index}/{self.settings.references}: {outcome.seconds:.1f}s, "
                     f"{len(outcome.trace.events)} events seen, {len(outcome.trace.writes)} "
                     f"writes{_status(outcome)}")
            if outcome.failed:
                raise ExploreError(f"reference run {index} failed: {outcome.failed}")
            runs.append(self.last_history)
            traces.append(outcome.trace)
            outcomes.append(outcome)
            self.references.append(outcome)
            if outcome.violated and not self.findings:
                self.findings.append(Finding(1, None, outcome))
                broken = self.last_scenario
            self.reference_violations |= set(outcome.violated)
        self.reference = oracles.learn(runs, self.session.unordered_lists)
        if self.reference.records:
            self.say("the implementation wrote kinds the references did not record; every "
                     "later run records them: " + ", ".join(
                         spelled(*kind) for kind in self.reference.records))
        self.wait_cap = wait_cap_of(outcomes)
        if self.findings:  # NO_FAULT: the references' own, replayed as any finding is
            self._write_and_replay(self.findings[0], broken)
        self.reference.save(self.out / "reference.json")
        self.generated = plans.generate(
            self.workload, traces, self._nodes(), self._kinds(traces), self.settings.stall,
            self.settings.miss, self.settings.seed)
        self.save_plans()

    def save_plans(self) -> None:
        """Every plan in order, with what judging them needs: the shards of one exploration
        (--from) run the same plans against the same reference."""
        assert self.generated is not None and self.reference is not None
        (self.out / PLANNED).write_text(json.dumps({
            "profile": self.session.profile.name, "workload": str(self.workload.path),
            "seed": self.settings.seed, "wait_cap": self.wait_cap,
            "reference_violations": sorted(self.reference_violations),
            "pruned": self.generated.pruned,
            "plans": [dataclasses.asdict(plan) for plan in self.generated.plans]}, indent=1))

    def adopt(self, directory: Path) -> None:
        """The plans and reference an earlier exploration of the same profile and workload
        learned (`--plan-only`), instead of learning them again."""
        path = directory / PLANNED
        if not path.is_file():
            raise UserError(f"--from {directory}: no {PLANNED} (made by aftershock explore "
                            "--plan-only, or any exploration)")
        raw = json.loads(path.read_text())
        mine = (self.session.profile.name, str(self.workload.path))
        if (raw["profile"], raw["workload"]) != mine:
            raise UserError(f"--from {directory}: its plans are for profile {raw['profile']} "
                            f"and workload {raw['workload']}, not {mine[0]} and {mine[1]}")
        self.generated = plans.Plans([Plan(**plan) for plan in raw["plans"]], raw["pruned"])
        self.reference = oracles.Reference.load(directory / "reference.json")
        self.wait_cap = raw["wait_cap"]
        self.reference_violations = set(raw["reference_violations"])

    def explore(self) -> None:
        assert self.generated is not None and self.reference is not None
        todo = self.todo()
        for number, plan in enumerate(todo, start=1):
            if self.settings.exitfirst and self.bugs():
                self.say(f"stopped at the first bug (-x), after {number - 1} of {len(todo)} "
                         "plans")
                break
            if self.left() <= 0:
                self.say(f"budget spent after {number - 1} of {len(todo)} plans")
                break
            lines = lines_for(self.workload, plan,
                              self.labelled(plan) + self.reference.steps(plan.differential),
                              self.wait_cap)
            outcome = self.play(f"plan-{number:03d}-{plan.slug}", lines)
            self.outcomes.append((plan, outcome))
            outcome.new = self.new_violations(plan, outcome)
            self.say(f"plan {number}/{len(todo)} {plan.kind} {plan.anchor}: "
                     f"{outcome.seconds:.1f}s{_status(outcome, outcome.new)}")
            if outcome.new:
                self._found(plan, outcome, outcome.new)

    def todo(self) -> list[Plan]:
        """The plans to run: the first --max-plans of those of the kinds asked for, then this
        shard's share, so the shards of one exploration together run what it would run
        alone."""
        assert self.generated is not None
        first = [plan for plan in self.generated.plans
                 if plan.kind in self.settings.kinds][:self.settings.max_plans]
        shard = self.settings.shard
        return [p for p in first if shard is None or shard.holds(p.slug)]

    def order(self, plan: Plan | None) -> int:
        """Where a plan comes among all the plans (-1: the reference runs)."""
        return -1 if plan is None or self.generated is None else \
            self.generated.plans.index(plan)

    def _found(self, plan: Plan, outcome: Outcome, new: dict[str, str]) -> None:
        if self.same_bug(plan, new, outcome.named(new), outcome.fired):
            return
        outcome.violated = new
        finding = Finding(len(self.findings) + 1, plan, outcome)
        self.findings.append(finding)
        self._write_and_replay(finding, self.last_scenario)

    def new_violations(self, plan: Plan, outcome: Outcome) -> dict[str, str]:
        """What a plan broke that makes it a finding. A property a reference run broke is
        judged all the same: on a correct implementation that is a false positive to count,
        not a property to hide from every later plan."""
        return {p: s for p, s in outcome.violated.items() if _counts(plan, p)}

    def same_bug(self, plan: Plan, new: dict[str, str], objects: Iterable[str],
                 fired: bool = True) -> bool:
        """A plan is a bug already found, again (noted on it, not replayed), only when it is
        the same fault kind breaking the same properties as that bug, its violations naming
        the same objects (`named_objects`). Nothing else takes a plan in: not a flaky finding
        or one not replayed enough (the plan may be the bug the first one could not show), not
        one its control runs broke with no fault (a race there does not explain a plan that
        breaks the same every time), not the reference runs' own finding, not one whose fault
        never fired; and a plan whose fault never fired is no fault's bug again."""
        kind = NOT_FIRED if plan.kind != "node" and not fired else plan.kind
        signature = (kind, frozenset(new), frozenset(objects))
        for finding in self.findings:
            if finding.kind not in (NO_FAULT, NOT_FIRED) and finding.verdict == "bug" and \
                    finding.signature == signature:
                finding.same.append(plan.anchor)
                return True
        return False

    def _write_and_replay(self, finding: Finding, scenario) -> None:
        finding.feature = write(finding, self.workload, self.out / "findings",
                                self.session.profile, self.settings.seed,
                                self.reference.records if self.reference else ())
        picture(scenario, finding.feature.with_suffix(".png"),
                f"explore finding {finding.number}: {finding.feature.stem}")
        self.replay(finding)

    def replay(self, finding: Finding) -> None:
        """The finding's scenario, played again: a bug reproduces in ≥ 80% of the replays. A
        replay reproduces it when it breaks the same properties (those that count for the
        plan's kind), not when it breaks one of them."""
        lines = scenario_lines(finding.feature)
        finding.wanted = self.settings.replays
        anchored = finding.plan is not None and finding.plan.kind != "node"
        for index in range(1, self.settings.replays + 1):
            if self.left() <= 0 and index > 1:
                break
            outcome = self.play(f"finding-{finding.number}-replay-{index}", lines,
                                finding.feature)
            if anchored and not outcome.fired:  # a run with no fault shows nothing of it
                finding.unfired += 1
                continue
            finding.replayed += 1
            if counted(finding.plan, outcome) == set(finding.outcome.violated):
                finding.reproduced += 1
        if finding.plan is not None and (
                finding.verdict == "flaky" or (finding.verdict == "bug" and set(
                    finding.outcome.violated) & self.broken_with_no_fault())):
            self.control(finding)
        if finding.verdict == "bug" and self.first_bug_after is None:
            self.first_bug_after = _round(time.monotonic() - self.began)
        controlled = (f"; with no fault {finding.controlled}/{finding.controls}"
                      if finding.controls else "")
        if finding.unfired:
            controlled += f"; {finding.unfired} replays whose fault never fired not counted"
        where = f" ({NO_FAULT})" if finding.plan is None else ""
        self.say(f"finding {finding.number}{where}: "
                 f"{', '.join(sorted(finding.outcome.violated))} reproduced "
                 f"{finding.reproduced}/{finding.replayed}{controlled}: "
                 f"{finding.verdict} ({finding.feature})")

    def control(self, finding: Finding) -> None:
        """A flaky finding's control: the workload with no fault, judged by what the finding
        broke, as many times as it was replayed. A control run that breaks the same properties
        makes it the implementation's own nondeterminism (UNPERTURBED), reported as such."""
        planned = finding.plan.step.split(" ", 1)[1]
        instead = [] if finding.plan.kind == "node" else [OBSERVED]  # as the references ran
        lines = [kept for line in scenario_lines(finding.feature)
                 for kept in (instead if line.split(" ", 1)[1] == planned else [line])]
        for index in range(1, finding.replayed + 1):
            if self.left() <= 0:
                break
            outcome = self.play(f"finding-{finding.number}-control-{index}", lines,
                                finding.feature)
            finding.controls += 1
            if counted(finding.plan, outcome) == set(finding.outcome.violated):
                finding.controlled += 1

    def bugs(self) -> int:
        return sum(1 for f in self.findings if f.verdict == "bug")

    def broken_with_no_fault(self) -> set[str]:
        """The properties a run with no fault broke: a reference run, or the reference runs'
        own finding's replays."""
        return set(self.reference_violations) | {
            p for f in self.findings if f.plan is None and f.reproduced
            for p in f.outcome.violated}

    def labelled(self, plan: Plan | None) -> list[str]:
        said = [s.text for s in self.workload.steps]
        if plan is not None:
            said.append(plan.step.split(" ", 1)[1])
        return oracles.labelled(said, (self.session.profile.concepts or {}).keys())

    def left(self) -> float:
        return self.settings.budget - (time.monotonic() - self.began)

    def _nodes(self) -> list[str]:
        return list(self.session.cluster.shape.node_names) if getattr(
            self.session.cluster, "shape", None) else []

    def _kinds(self, traces: list[trace.Trace]) -> dict[str, str]:
        """The word a step names each traced resource by: a concept's kind, else the kind the
        cluster serves it as (a CertificateRequest no step of the workload names)."""
        profile = self.session.profile
        kinds = {m["resource"]["plural"]: m["resource"]["kind"].lower()
                 for m in (profile.concepts or {}).values()
                 if isinstance(m, dict) and m.get("resource")}
        traced = {key[0] for t in traces for key in [*t.counts(), *t.write_counts()]}
        unnamed = sorted(r for r in traced if plans.words(r, kinds) is None)
        return {**self.session.kind_words(unnamed), **kinds} if unnamed else kinds

    # --- the end ----------------------------------------------------------------------------

    def summary(self) -> dict:
        times = [o.seconds for _, o in self.outcomes]
        kinds = {}
        for kind in plans.KINDS:
            ran = [o for p, o in self.outcomes if p.kind == kind]
            kinds[kind] = {"run": len(ran),
                           "findings": sum(1 for f in self.findings if f.kind == kind),
                           "bugs": sum(1 for f in self.findings
                                       if f.kind == kind and f.verdict == "bug"),
                           "errors": sum(1 for o in ran if o.failed)}
        generated = self.generated
        return {
            "plans_generated": len(generated.plans) if generated else 0,
            "plans_run": len(self.outcomes),
            "pruned": sum(generated.pruned.values()) if generated else 0,
            "pruned_by_reason": dict(generated.pruned) if generated else {},
            "findings": len(self.findings),
            "bugs": self.bugs(),
            "first_bug_after": self.first_bug_after,
            "flaky": sum(1 for f in self.findings if f.verdict == "flaky"),
            "unperturbed": sum(1 for f in self.findings if f.verdict == UNPERTURBED),
            "as_with_no_fault": sum(1 for f in self.findings if f.verdict == AS_WITH_NO_FAULT),
            "unfired_replays": sum(f.unfired for f in self.findings),
            "no_fault": sum(1 for f in self.findings if f.plan is None),
            "not_fired": sum(1 for f in self.findings if f.kind == NOT_FIRED),
            "not_enough_replays": sum(1 for f in self.findings
                                      if f.verdict == "not enough replays"),
            "reference_violations": sorted(self.reference_violations),
            "plans_with_violations": sum(1 for _, o in self.outcomes if o.new),
            "errors": sum(1 for _, o in self.outcomes if o.failed),
            "seconds_per_plan": {"mean": _round(statistics.mean(times)) if times else None,
                                 "p50": _round(statistics.median(times)) if times else None,
                                 "max": _round(max(times)) if times else None},
            "plans_per_minute": _round(60 * len(times) / sum(times)) if times else None,
            "elapsed": _round(time.monotonic() - self.began),
            "by_kind": kinds,
            "shard": str(self.settings.shard) if self.settings.shard else None,
            "list": [{"number": f.number, "plan": f.plan.step if f.plan else None,
                      "plan_kind": f.plan.kind if f.plan else None, "kind": f.kind,
                      "anchor": f.plan.anchor if f.plan else None,
                      "order": self.order(f.plan),
                      "violated": f.outcome.violated, "objects": f.objects,
                      "verdict": f.verdict,
                      "reproduced": f.reproduced, "replayed": f.replayed,
                      "controlled": f.controlled, "controls": f.controls,
                      "unfired": f.unfired,
                      "feature": str(f.feature) if f.feature else None,
                      "same": f.same} for f in self.findings],
        }

    def save(self) -> dict:
        summary = self.summary()
        (self.out / "summary.json").write_text(json.dumps(summary, indent=1))
        with (self.out / "plans.jsonl").open("w") as out:
            for outcome in self.references:  # an unperturbed run that broke: counted too
                out.write(json.dumps({"kind": "reference", "anchor": outcome.name, "step": "",
                                      "seconds": _round(outcome.seconds),
                                      "violated": outcome.violated, "new": outcome.violated,
                                      "objects": outcome.objects,
                                      "unknown": outcome.unknown,
                                      "failed": outcome.failed}) + "\n")
            for plan, outcome in self.outcomes:
                out.write(json.dumps({"kind": plan.kind, "anchor": plan.anchor,
                                      "order": self.order(plan),
                                      "step": plan.step, "seconds": _round(outcome.seconds),
                                      "violated": outcome.violated,
                                      "new": outcome.new,
                                      "objects": outcome.objects,
                                      "unknown": outcome.unknown,
                                      "failed": outcome.failed}) + "\n")
        return summary


class ExploreError(Exception):
    pass


def _actor(scenario) -> str:
    try:
        return implementation_actor(scenario)
    except Exception:
        return ""


def _counts(plan: Plan | None, label: str) -> bool:
    """A node plan changes what the workload can reach by design: only the properties it
    names (R1, S2, ...) judge it, not the workload's own waits. Everything judges the
    reference runs (no plan)."""
    return plan is None or plan.kind != "node" or get(label).family != "harness"


def counted(plan: Plan | None, outcome: Outcome) -> set[str]:
    """The properties a run of a finding (a replay, a control run) broke that count for its
    plan: the same filter `Explorer.new_violations` applies to the plan's own run."""
    return {label for label in outcome.violated if _counts(plan, label)}


def generated_names(history: Iterable[Entry]) -> dict[tuple[str, str], str]:
    """(kind, name) → metadata.generateName of every object the history shows made from one
    (a controller's pods): an audit entry names such an object with no object beside it."""
    out = {}
    for entry in history:
        if entry.kind == WATCH and entry.object:
            prefix = (entry.object.get("metadata") or {}).get("generateName")
            if prefix:
                out[(_singular(entry.resource), entry.name)] = prefix
    return out


def named_objects(witness: Iterable[Entry],
                  generated: dict[tuple[str, str], str]) -> set[str]:
    """The objects a violation's witness names, as another run of the same plan would name
    them: kind/name without the namespace (each run has a fresh one), and a name the API
    server generated (metadata.generateName, on the entry's object or anywhere in the run's
    history) as its prefix and `*`: pod/web-7xk2q and pod/web-p9z4m are both pod/web-*. An
    Event stands for the object it is about (involvedObject; its kind lowercased, as the
    Event says it). Entries that name no object (marks, gaps, a refused create with no name)
    name none. A name generated some other way (a random suffix the implementation picks
    itself) is not recognised, and differs from run to run."""
    out = set()
    for entry in witness:
        kind, name = _singular(entry.resource), entry.name
        obj = entry.object or {}
        if entry.resource == "events" and entry.kind == WATCH:
            about = obj.get("involvedObject") or obj.get("regarding") or {}
            kind, name, obj = str(about.get("kind", "")).lower(), about.get("name", ""), {}
        if not (kind and name):
            continue
        prefix = (obj.get("metadata") or {}).get("generateName") or generated.get((kind, name))
        if prefix and name.startswith(prefix) and len(name) > len(prefix):
            name = f"{prefix}*"
        out.add(f"{kind}/{name}")
    return out


def _singular(resource: str) -> str:
    if not resource:
        return ""
    return SINGULAR.get(resource) or singular_of(resource)


def _status(outcome: Outcome, new: dict[str, str] | None = None) -> str:
    if outcome.failed:
        return f"  ERROR {outcome.failed}"
    shown = outcome.violated if new is None else new
    if shown:
        return "  FINDING " + "; ".join(f"{p}: {s[:160]}" for p, s in sorted(shown.items()))
    if outcome.unknown:
        return "  ok (unknown: " + ", ".join(sorted(outcome.unknown)) + ")"
    return "  ok"


def _round(value: float) -> float:
    return round(value, 2)
