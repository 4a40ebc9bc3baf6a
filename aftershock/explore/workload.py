"""The workload `aftershock explore` perturbs: one scenario of a feature file (its Background
included, the first row of an Outline's examples), or a plain list of steps, one per line. Every
step is checked against the step registry before anything starts."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

import aftershock.bdd.steps  # noqa: F401  (the step registry)
from aftershock.errors import UserError
from aftershock.features import check_steps, parse_feature, unknown_step
from aftershock.grammar import match_step, split_keyword, step_problem
from aftershock.timeline.resources import named

RUNNING = "the implementation under test is running"


FENCE = '"""'


@dataclass(frozen=True)
class Step:
    keyword: str  # Given | When | Then (an And takes the keyword before it)
    text: str
    line: int
    block: str | None = None  # the YAML block under it, between FENCE lines

    @property
    def words(self) -> str:
        """The step as a line, its block (if any) after it between fences (`with_block`)."""
        said = f"{self.keyword} {self.text}"
        return said if self.block is None else f"{said}\n{FENCE}\n{self.block}\n{FENCE}"


def with_block(words: str) -> tuple[str, str | None]:
    """A step's line and the block under it, from `Step.words`."""
    line, newline, rest = words.partition("\n")
    if not newline:
        return words, None
    return line, rest.removeprefix(FENCE + "\n").removesuffix("\n" + FENCE)


@dataclass
class Workload:
    path: Path
    title: str
    steps: list[Step]
    tags: set[str] = field(default_factory=set)

    @property
    def shape(self) -> str | None:
        return next((t.split(":", 1)[1] for t in sorted(self.tags) if t.startswith("shape:")),
                    None)

    @property
    def records(self) -> list[tuple[str, str]]:
        """More kinds to record, from a `@records:` tag (a finding explored again)."""
        return [named(kind) for tag in sorted(self.tags) if tag.startswith("records:")
                for kind in tag.split(":", 1)[1].split(",") if kind]

    @property
    def started(self) -> int:
        """The index of the step that starts the implementation."""
        return next(i for i, step in enumerate(self.steps) if step.text == RUNNING)

    def actions(self) -> list[int]:
        """Indexes of the steps after the implementation started that act (not a Then)."""
        return [i for i, step in enumerate(self.steps)
                if i > self.started and step.keyword != "Then"]


def load(path: Path, scenario: str | None = None) -> Workload:
    if not path.is_file():
        raise UserError("no such workload file", path=str(path))
    workload = _feature(path, scenario) if path.suffix == ".feature" else _plain(path)
    if not workload.steps:
        raise UserError("the workload has no steps", path=str(path), line=1)
    _check(workload)
    if all(step.text != RUNNING for step in workload.steps):
        at = next((i for i, s in enumerate(workload.steps) if s.keyword != "Given"
                   or not s.text.startswith("a cluster with")), 0)
        workload.steps.insert(at, Step("Given", RUNNING, 0))
    return workload


def _feature(path: Path, wanted: str | None) -> Workload:
    check_steps(path)
    feature = parse_feature(path)
    templates = list(feature.scenarios.values())
    if not templates:
        raise UserError("the feature has no scenario", path=str(path))
    chosen = templates[0]
    if wanted is not None:
        chosen = next((t for t in templates if t.name == wanted), None)
        if chosen is None:
            names = "; ".join(t.name for t in templates)
            raise UserError(f"no scenario '{wanted}' (scenarios: {names})", path=str(path))
    contexts = [c for examples in chosen.examples for c in examples.as_contexts()]
    rendered = chosen.render(contexts[0] if contexts else {})
    steps = [Step(_keyword(s.keyword), s.name, s.line_number, getattr(s, "docstring", None))
             for s in rendered.steps]
    return Workload(path, rendered.name, _chain(steps), {*feature.tags, *chosen.tags})


def _plain(path: Path) -> Workload:
    """Steps one per line, a YAML block under one between fences (FENCE lines) as in a
    feature; a line of @tags (as a feature's, e.g. @shape:ten-small-nodes) tags the workload."""
    steps, tags = [], set()
    lines = iter(enumerate(path.read_text().splitlines(), start=1))
    for number, raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            tags |= {word.lstrip("@") for word in line.split()}
            continue
        if line == FENCE and steps:
            steps[-1] = replace(steps[-1], block=_block(path, number, lines))
            continue
        keyword, text = split_keyword(line)
        steps.append(Step(keyword, text, number))
    return Workload(path, path.stem, _chain(steps), tags)


def _block(path: Path, opened: int, lines) -> str:
    """The lines up to the closing fence, dedented as Gherkin dedents a docstring."""
    held = []
    for _, raw in lines:
        if raw.strip() == FENCE:
            return textwrap.dedent("\n".join(held))
        held.append(raw)
    raise UserError(f"the block opened here has no closing {FENCE}", path=str(path),
                    line=opened)


def _keyword(word: str) -> str:
    return word.strip().capitalize()


def _chain(steps: list[Step]) -> list[Step]:
    """And, But and * take the keyword before them (a plain list starts with Given)."""
    out, last = [], "Given"
    for step in steps:
        keyword = last if step.keyword in ("And", "But", "*") else step.keyword
        out.append(replace(step, keyword=keyword))
        last = keyword
    return out


def _check(workload: Workload) -> None:
    for step in workload.steps:
        found = match_step(step.text)
        if found is None:
            raise unknown_step(workload.path, step.line, step.keyword, step.text)
        wrong = step_problem(step.text, *found)
        if wrong:
            raise UserError(wrong, path=str(workload.path), line=step.line)
