"""`aftershock.notebook.Session`: the features' steps, one at a time, from a notebook or a script.

    session = Session(shape="clusters/three-nodes.yaml")
    session.step("Given a Deployment web with 3 replicas")
    session.step("When I drain the node running a pod of web")
    session.timeline          # pandas DataFrame of the recorded history
    session.plot()            # matplotlib Figure: pods by node, faults, the witness
    session.save("features/x/drain.feature", "Draining moves web")
    session.close()

The cluster is started by the session (or attached with `cluster=`) and owned by this process:
if the kernel dies, the next session's start (or `aftershock cluster gc`) removes it."""

from __future__ import annotations

import atexit
import contextlib
import io
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas
from kubernetes.client.exceptions import ApiException

import aftershock.bdd.steps  # noqa: F401  (the features' step library fills the registry)
from aftershock import world
from aftershock.bdd.steps import objects
from aftershock.checks.verdict import NOT_APPLICABLE, PASS
from aftershock.errors import StepFailed, UserError
from aftershock.grammar import (
    BLOCK,
    block_problem,
    closest_steps,
    match_step,
    split_keyword,
    split_label,
    step_problem,
    steps_with_blocks,
)
from aftershock.kube import door
from aftershock.kube.api import Discovery, api_client
from aftershock.kube.discovery import Catalog, unordered_lists_of
from aftershock.machine import yamlsrc
from aftershock.machine.capabilities import MissingCapability
from aftershock.notebook.authoring import write_feature
from aftershock.profile.load import load_profile
from aftershock.providers import clusters
from aftershock.providers.base import ClusterRequest
from aftershock.providers.clusters import open_cluster
from aftershock.report import picture, plot
from aftershock.report.evidence import witness_entries, witness_text
from aftershock.scenario import PropertyViolated, Scenario

SAVED = ("passed", "violated", "promised")  # the statuses of the steps `Session.save` writes
PROMISED = "judged at the scenario's end (here: `%scenario judge`)"


@dataclass
class StepResult:
    keyword: str
    text: str
    status: str  # "passed" | "violated" | "failed" | "skipped" | "interrupted"
    seconds: float
    message: str = ""
    block: str | None = None  # the YAML block under the step

    @property
    def line(self) -> str:
        return f"{self.keyword} {self.text}"


class TimelinePlot:
    """A drawn timeline that IPython shows as an image, with or without %matplotlib."""

    def __init__(self, figure: Any):
        self.figure = figure

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()


class Session:
    def __init__(self, shape: str | Path | None = None, profile: str | Path | None = None,
                 kubernetes_version: str | None = None, cluster: Any = None,
                 report_dir: str | Path | None = None, name: str = "notebook",
                 provider: str = "local"):
        self.profile = load_profile(profile) if profile else None
        self.report_root = Path(report_dir) if report_dir else None
        self._owned = cluster is None
        self.cluster = cluster or self._start(shape, kubernetes_version, provider)
        if self._owned:  # a kernel shut down cleanly takes its cluster with it
            atexit.register(self._at_exit)
        self.results: list[StepResult] = []
        self.scenario: Scenario | None = None
        self.manifests_dir: Path | None = None  # what manifest paths are relative to: the cwd
        self.new_scenario(name)

    # --- the cluster ---------------------------------------------------------------------

    @staticmethod
    def _start(shape: str | Path | None, kubernetes_version: str | None,
               provider: str = "local"):
        clusters.gc()  # what a dead kernel left behind
        return open_cluster(ClusterRequest(provider, shape=shape,
                                           kubernetes_version=kubernetes_version), Path.cwd())

    def status(self) -> dict[str, Any]:
        info = self.cluster.info
        return {"cluster": info.name, "provider": info.provider,
                "kubeconfig": str(info.kubeconfig),
                "namespace": self.scenario.namespace if self.scenario else None,
                "active_faults": self.scenario.active_faults() if self.scenario else [],
                "steps_run": len(self.results)}

    # --- scenarios -----------------------------------------------------------------------

    def unordered_lists(self, resources: list[str]) -> dict[str, list[str]]:
        """The lists of ``resources`` (plurals) whose order means nothing by the schemas the
        cluster publishes (list-maps and sets: a Service's ports); explore's E1 compares them
        sorted."""
        return unordered_lists_of(self._served(), resources)

    def _served(self) -> Catalog:
        """What the session's cluster serves, by discovery now."""
        info = self.cluster.info
        return Catalog.from_api(Discovery(api_client(info.kubeconfig, info.context)))

    def kind_words(self, resources: Iterable[str]) -> dict[str, str]:
        """The word a step names each of ``resources`` (plurals) by, its kind in lower case
        ('certificaterequest'), as discovery and the profile's CRDs know it; a plural two API
        groups share is left out (a step would have to say which)."""
        served = self._served()
        for manifest in getattr(self.profile, "manifests", ()):
            served.add_crds(yamlsrc.manifests(self.profile.resolve(manifest)))
        words = {}
        for plural in resources:
            kinds = [k for k in served.kinds if k.plural == plural]
            core = [k for k in kinds if k.group == ""]
            if core or len(kinds) == 1:
                words[plural] = (core or kinds)[0].kind.lower()
        return words

    def new_scenario(self, name: str = "notebook",
                     records: Iterable[tuple[str, str]] = ()) -> Scenario:
        """End the current scenario (undoing all it did) and begin a fresh one; ``records``:
        more kinds to record ((API group, plural))."""
        self.end_scenario()
        report_dir = None
        if self.report_root is not None:
            report_dir = self.report_root / re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        self.scenario = world.begin(self.cluster, name, report_dir=report_dir,
                                    profile=self.profile, records=records)
        self.results = []
        return self.scenario

    def end_scenario(self) -> list[str]:
        if self.scenario is None:
            return []
        scenario, self.scenario = self.scenario, None
        return world.end(scenario)

    def close(self) -> None:
        """End the scenario and, if this session started the cluster, remove it."""
        try:
            self.end_scenario()
        finally:
            if self._owned:
                self.cluster.down()
                atexit.unregister(self._at_exit)

    def _at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- steps ---------------------------------------------------------------------------

    @staticmethod
    def check(line: str, block: str | None = None) -> tuple[str, str, Any, dict]:
        """A step's words matched and checked as pytest checks them at collection, running
        nothing: (keyword, text, its definition, its arguments); a `UserError` naming the
        closest known steps otherwise."""
        keyword, text = split_keyword(line)
        found = match_step(text)
        if found is None:
            close = closest_steps(text)
            hint = ("; closest known steps: " + " | ".join(f"'{c}'" for c in close)) if close \
                else ""
            raise UserError(f"unknown step '{line.strip()}'{hint}")
        definition, arguments = found
        wrong = step_problem(text, definition, arguments)
        if wrong:
            raise UserError(wrong)
        problem = block_problem(definition, block)
        if problem:
            raise UserError(f"'{line.strip()}': {problem[0]}"
                            + (f" (line {problem[1]} of its block)" if problem[1] else ""))
        if block is not None:
            arguments = {**arguments, BLOCK: block}
        return keyword, text, definition, arguments

    def step(self, line: str, raise_on_failure: bool = True,
             block: str | None = None) -> StepResult:
        """Run one step of the features' vocabulary, with the YAML block under it for a step
        that takes one (``I apply:``). A violated or failed step raises (unless told not to);
        an interrupt (Ctrl-C, a kernel interrupt) reverts every active fault."""
        if self.scenario is None:
            raise UserError("no scenario: call new_scenario()")
        keyword, text, definition, arguments = self.check(line, block)
        # The kinds it names, found by discovery and recorded from now (a feature's are found
        # before its first step); manifests are named relative to the working directory.
        objects.prepare(self.scenario, None, [(line, block, 1)], self.manifests_dir)
        began, promised = time.monotonic(), self.scenario.promised
        self.scenario.property_label = split_label(text)[1]
        self.scenario.begin_step(keyword, text)
        try:
            definition.func(self.scenario, **arguments)
            result = StepResult(keyword, text, "passed", time.monotonic() - began)
            if self.scenario.promised > promised:
                result.status, result.message = "promised", PROMISED
        except KeyboardInterrupt:
            self.results.append(StepResult(keyword, text, "interrupted",
                                           time.monotonic() - began,
                                           "; ".join(self.interrupted())))
            raise
        except MissingCapability as exc:
            result = StepResult(keyword, text, "skipped", time.monotonic() - began, str(exc))
        except PropertyViolated as exc:
            result = StepResult(keyword, text, "violated", time.monotonic() - began,
                                self.scenario.redactor.text(str(exc)))
        except StepFailed as exc:
            result = StepResult(keyword, text, "failed", time.monotonic() - began,
                                self.scenario.redactor.text(str(exc)))
        except ApiException as exc:  # a write the API refused: a conflict with an earlier run
            result = StepResult(keyword, text, "failed", time.monotonic() - began,
                                self.scenario.redactor.text(str(door.refused("it", exc))))
        finally:
            self.scenario.property_label = None
        result.block = block
        self.results.append(result)
        if raise_on_failure and result.status in ("violated", "failed"):
            raise StepFailed(f"{result.line}: {result.message}")
        return result

    def judge_promises(self) -> list[StepResult]:
        """Judge now what steps promised for the scenario's end ("from now on ..."): a
        notebook's scenario ends when the user says so (under pytest, after its last step)."""
        if self.scenario is None:
            return []
        try:
            verdicts = self.scenario.keep_promises()
        except PropertyViolated as exc:
            verdicts = [(self.scenario.step, exc.verdict)]
        self.scenario.violations.clear()  # shown here, as a step's are
        judged = []
        for step, verdict in verdicts:
            keyword, text = split_keyword(step or f"Then {verdict.property}")
            status = {PASS: "passed", NOT_APPLICABLE: "skipped"}.get(verdict.status, "violated")
            judged.append(StepResult(keyword, text, status, 0.0, "" if status == "passed" else
                                     self.scenario.redactor.text(verdict.explain())))
        return judged

    def interrupted(self) -> list[str]:
        """Ctrl-C or a kernel interrupt: revert every active fault (idempotent); returns what
        could not be reverted."""
        return self.scenario.revert_faults() if self.scenario is not None else []

    def run(self, text: str, raise_on_failure: bool = False) -> list[StepResult]:
        """Several steps, one per line (blank lines and # comments skipped), each with the
        block under it between \"\"\" lines. As under pytest, a violated property does not
        stop the others being judged; a failed step stops."""
        done = []
        try:
            for line, block in steps_with_blocks(text):
                result = self.step(line, raise_on_failure=raise_on_failure, block=block)
                done.append(result)
                if result.status == "failed":
                    break
        except KeyboardInterrupt:
            self.interrupted()
            raise
        return done

    # --- what happened -------------------------------------------------------------------

    @property
    def timeline(self):
        """The recorded history as a pandas DataFrame, one row per entry."""
        entries = self.scenario.history() if self.scenario else []
        origin = entries[0].mono if entries else 0.0
        return pandas.DataFrame([{
            "t": round(entry.mono - origin, 3), "kind": entry.kind, "type": entry.type,
            "object": entry.ref if entry.name else "", "rv": entry.rv, "actor": entry.actor,
            "verb": entry.verb, "detail": entry.detail,
        } for entry in entries])

    def witness(self) -> str:
        return witness_text(self.scenario.verdicts) if self.scenario else ""

    def plot(self, title: str | None = None) -> TimelinePlot:
        """The timeline drawn: one lane per pod grouped by node, faults shaded, witness marked.
        Shows itself in a notebook; `.figure` is the matplotlib Figure."""
        scenario = self.scenario
        drawing = picture.build(scenario.history(), witness_entries(scenario.verdicts))
        return TimelinePlot(plot.figure(drawing, title or scenario.name))

    def save(self, path: str | Path, scenario_name: str, feature_name: str | None = None) -> Path:
        """The steps run so far in this scenario that passed or judged (a violated Then is a
        step of the feature), as a feature file pytest runs unchanged; a step that failed, was
        skipped or interrupted is left out (`left_out` names them)."""
        return write_feature(Path(path), scenario_name, [(r.line, r.block) for r in self.results
                                                         if r.status in SAVED], feature_name)

    def left_out(self) -> list[StepResult]:
        """The steps `save` leaves out: those that failed, were skipped or interrupted."""
        return [r for r in self.results if r.status not in SAVED]

    def drop(self, numbers: Iterable[int]) -> list[StepResult]:
        """Forget steps by their number in `results` (from 1), for what `save` writes; what
        they did to the cluster stays (`new_scenario` starts clean)."""
        wanted = set(numbers)
        bad = sorted(n for n in wanted if not 1 <= n <= len(self.results))
        if bad:
            raise UserError(f"no step {', '.join(map(str, bad))}: this scenario has run "
                            f"{len(self.results)} steps (%scenario steps lists them)")
        dropped = [r for i, r in enumerate(self.results, 1) if i in wanted]
        self.results = [r for i, r in enumerate(self.results, 1) if i not in wanted]
        return dropped
