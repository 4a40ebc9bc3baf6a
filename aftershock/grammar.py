"""The words of steps: the one step registry both runners dispatch from, and how a step's
text is matched, checked and labelled with the properties it judges.

A step is a plain function of a Scenario plus parsed parameters, declared once with
``@given/@when/@then`` below. pytest-bdd (``aftershock/bdd/runner.py``) and the notebook magic
read the same registry, so one definition serves two runners. This module knows no Scenario:
it sits under it, beside the property registry it asks which ids a step may name.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import pkgutil
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import parse
import yaml

from aftershock import phrases, properties
from aftershock.checks import attribution
from aftershock.errors import UserError
from aftershock.kube.comparison import Comparison, ComparisonError
from aftershock.machine import limits
from aftershock.phrases.types import EXTRA_TYPES

StepKind = Literal["given", "when", "then"]


@dataclass(frozen=True)
class StepDefinition:
    kind: StepKind
    pattern: str  # a `parse` format string: "a Deployment {name} with {replicas:d} replicas"
    func: Callable[..., Any]
    phrases: dict[str, str] = field(default_factory=dict)  # argument → "condition" | "event"
    check: str | None = None  # the check a Then step judges by (it may name property ids)

    @property
    def arguments(self) -> list[str]:
        return re.findall(r"{(\w+)(?::[^}]*)?}", self.pattern)

    @property
    def takes_block(self) -> bool:
        """Whether the step takes a YAML block under it (its function's ``docstring``)."""
        return BLOCK in inspect.signature(self.func).parameters

    @property
    def example(self) -> str:
        """The pattern with placeholders shown as <name>, for suggestions."""
        return re.sub(r"{(\w+)(?::[^}]*)?}", r"<\1>", self.pattern)


REGISTRY: list[StepDefinition] = []
# The argument a step takes the text block under it by, between lines of """ (Gherkin's doc
# string): pytest-bdd's name for it.
BLOCK = "docstring"


def _register(kind: StepKind, pattern: str, phrases: dict[str, str] | None,
              check: str | None = None):
    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(StepDefinition(kind, pattern, func, phrases or {}, check))
        return func

    return decorate


def given(pattern: str, phrases: dict[str, str] | None = None):
    return _register("given", pattern, phrases)


def when(pattern: str, phrases: dict[str, str] | None = None):
    return _register("when", pattern, phrases)


def then(pattern: str, phrases: dict[str, str] | None = None, check: str | None = None):
    """A Then step; ``check`` names the check it judges by, which lets it carry property ids
    ("… (R1)") that the registry accepts for that check."""
    return _register("then", pattern, phrases, check)


def _compiled(definition: StepDefinition):
    return _compile(definition.pattern)


@functools.cache
def _compile(pattern: str):
    return parse.compile(pattern, extra_types=EXTRA_TYPES)


# A Then step may end with the property it judges, e.g. "... more than 3 live pods (R1)".
_ONE_LABEL = r"[A-Z][A-Za-z0-9_.:-]*"
LABEL = re.compile(rf"\s+\(({_ONE_LABEL}(?:,\s*{_ONE_LABEL})*)\)\s*$")  # "(R1)", "(N1, N5)"


def labels_of(property: str) -> set[str]:
    return {part.strip() for part in property.split(",")}


def label_ids(property: str) -> list[str]:
    """'G2, G3' → ['G2', 'G3'], in the order written."""
    return [part.strip() for part in property.split(",") if part.strip()]


def split_label(text: str) -> tuple[str, str | None]:
    found = LABEL.search(text)
    return (text[:found.start()], found.group(1)) if found else (text, None)


def step_problem(text: str, definition: StepDefinition, arguments: dict[str, Any]) -> str | None:
    """Why a step cannot run as written: more than one step matches its words, a property it
    may not name, or a number beyond what this machine can hold or wait for."""
    return ambiguity(text) or label_problem(text, definition) or comparison_problem(
        definition, arguments) or actor_problem(definition, arguments) or \
        limits.step_problem(definition.func.__name__, arguments)


def actor_problem(definition: StepDefinition, arguments: dict[str, Any]) -> str | None:
    """Why an actor a step names (``... was deleted by {actor}``) is no one the run knows."""
    if "{actor}" not in definition.pattern or "actor" not in arguments:
        return None
    return attribution.actor_problem(str(arguments["actor"]))


def comparison_problem(definition: StepDefinition, arguments: dict[str, Any]) -> str | None:
    """Why a field comparison a step names (``status.readyReplicas >= 1``) cannot be read."""
    for name in re.findall(r"{(\w+):Comparison}", definition.pattern):
        try:
            Comparison.parse(str(arguments[name]))
        except ComparisonError as exc:
            return str(exc)
    return None


def block_problem(definition: StepDefinition, block: str | None) -> tuple[str, int] | None:
    """Why the text block under a step is not what its definition takes, with the line of the
    block it is on (1 its first line; 0 the step itself). A block holds YAML: one map, or
    several documents of maps (manifests, or parts of them)."""
    if definition.takes_block and block is None:
        return (f"this step takes a YAML block under it, between lines of \"\"\" (as in: "
                f"{definition.example} then the block)", 0)
    if not definition.takes_block and block is not None:
        return "this step takes no text block: remove the \"\"\" lines under it", 0
    if block is None:
        return None
    try:
        documents = [d for d in yaml.safe_load_all(block) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return (f"the YAML block does not parse: {why}"
                + (f" (column {mark.column + 1})" if mark else ""), mark.line + 1 if mark else 1)
    if not documents or not all(isinstance(d, dict) for d in documents):
        return "the YAML block must hold a map: a manifest, or the part of one to match", 1
    return None


def ambiguity(text: str) -> str | None:
    """Two definitions matching one text is refused, as Cucumber refuses it: which one runs
    would depend on the order steps were registered in (and pytest-bdd's order is not ours)."""
    found = matching(split_label(text)[0])
    if len(found) < 2:
        return None
    listed = "; ".join(f"{d.kind.capitalize()} {d.example} ({_where(d)})" for d in found)
    return f"ambiguous step {text!r}: it matches {len(found)} definitions: {listed}"


def _where(definition: StepDefinition) -> str:
    func = inspect.unwrap(definition.func)
    return f"{func.__module__}:{func.__code__.co_firstlineno}"


def label_problem(text: str, definition: StepDefinition) -> str | None:
    """Why the property ids a step's text ends with ("… (R1)") cannot be judged by it."""
    label = split_label(text)[1]
    return None if label is None else properties.problem(label_ids(label), definition.check)


def match_step(text: str) -> tuple[StepDefinition, dict[str, Any]] | None:
    """The definition whose whole pattern matches ``text``, with its parsed arguments."""
    text = split_label(text)[0]
    for definition in matching(text)[:1]:  # the only one: ``ambiguity`` refuses two
        return definition, dict(_compiled(definition).parse(text).named)
    return None


def matching(text: str) -> list[StepDefinition]:
    """The definitions whose pattern matches ``text``. Where several do, one whose free words
    are a condition or an event ("within 30 seconds <condition>") yields to the others when
    its words are no known phrase ("within 30 seconds raycluster/web matches:")."""
    found = [d for d in REGISTRY if _compiled(d).parse(text) is not None]
    if len(found) < 2:
        return found
    fitting = [d for d in found if _phrases_known(d, text)]
    return fitting if fitting else found


def _phrases_known(definition: StepDefinition, text: str) -> bool:
    arguments = _compiled(definition).parse(text).named
    known = {"condition": phrases.CONDITIONS, "event": phrases.EVENTS}
    return all(phrases.match(known[what], str(arguments[argument])) is not None
               for argument, what in definition.phrases.items())


def load_step_modules(package: str) -> list[str]:
    """Import every module of a step package (in name order), which registers its steps: a
    new step module is one file. The order does not decide a match (see ``ambiguity``)."""
    names = sorted(info.name for info in pkgutil.iter_modules(
        importlib.import_module(package).__path__) if not info.name.startswith("_"))
    for name in names:
        importlib.import_module(f"{package}.{name}")
    return names


def closest_steps(text: str, count: int = 3) -> list[str]:
    """The known steps most like ``text``: by its characters, or word by word with each
    <placeholder> taking the words it would match ("whithin 60 seconds 2 pods of web are
    Running" is most like "within <seconds> seconds <condition>", not like a longer step that
    shares more letters)."""
    examples = list(dict.fromkeys(definition.example for definition in REGISTRY))
    scored = sorted(((max(difflib.SequenceMatcher(None, text, example).ratio(),
                          _word_likeness(text.split(), example.split())), example)
                     for example in examples), key=lambda pair: -pair[0])
    return [example for score, example in scored[:count] if score >= 0.3]


def _word_likeness(words: list[str], example: list[str]) -> float:
    """1 less the word edit distance between ``words`` and ``example`` (a <placeholder> takes
    one or more words at no cost, a misspelt word costs little), over the longer one."""
    if not words or not example:
        return 0.0
    inf = float("inf")
    cost = [[inf] * (len(example) + 1) for _ in range(len(words) + 1)]
    cost[0][0] = 0.0
    for i in range(len(words) + 1):
        for j in range(len(example) + 1):
            here = cost[i][j]
            if here == inf:
                continue
            if i < len(words):
                cost[i + 1][j] = min(cost[i + 1][j], here + 1)  # a word the example lacks
            if j < len(example):
                cost[i][j + 1] = min(cost[i][j + 1], here + 1)  # a word the text lacks
            if i < len(words) and j < len(example):
                word, wanted = words[i].lower(), example[j].lower()
                if wanted.startswith("<") and wanted.endswith(">"):
                    for end in range(i + 1, len(words) + 1):  # it takes words i..end
                        cost[end][j + 1] = min(cost[end][j + 1], here)
                    continue
                near = difflib.SequenceMatcher(None, word, wanted).ratio()
                step = 0.0 if word == wanted else 0.2 if near >= 0.8 else 1.0
                cost[i + 1][j + 1] = min(cost[i + 1][j + 1], here + step)
    return 1 - cost[len(words)][len(example)] / max(len(words), len(example))


KEYWORDS = ("Given", "When", "Then", "And", "But", "*")
DELIMITERS = ('"""', "```")


def steps_with_blocks(text: str) -> list[tuple[str, str | None]]:
    """A cell's or script's steps, one per line (blank lines and # comments skipped), each
    with the block under it between two delimiter lines (\"\"\" or ```), dedented as Gherkin
    dedents a doc string. A block left open is a UserError naming its first line."""
    found: list[tuple[str, str | None]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped in DELIMITERS:
            if not found or found[-1][1] is not None:
                raise UserError(f"line {index + 1}: a {stripped} block with no step above it")
            end = next((i for i in range(index + 1, len(lines))
                        if lines[i].strip() == stripped), None)
            if end is None:
                raise UserError(f"line {index + 1}: the {stripped} block is never closed")
            found[-1] = (found[-1][0], textwrap.dedent("\n".join(lines[index + 1:end])) + "\n")
            index = end + 1
            continue
        if stripped and not stripped.startswith("#"):
            found.append((lines[index], None))
        index += 1
    return found


def split_keyword(line: str) -> tuple[str, str]:
    """'When I drain node node-1' -> ('When', 'I drain node node-1'); no keyword -> '*'."""
    first, _, rest = line.strip().partition(" ")
    if first in KEYWORDS:
        return first, rest.strip()
    return "*", line.strip()
