"""Reading feature files: Gherkin syntax and every step's text checked against the registry
before anything runs, so a typo is one message with file:line and the closest known steps."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_bdd.exceptions import GherkinParseError
from pytest_bdd.parser import FeatureParser

from aftershock import phrases
from aftershock.errors import UserError
from aftershock.grammar import block_problem, closest_steps, match_step, step_problem
from aftershock.properties import UnknownProperty, get, problem


def parse_feature(path: Path):
    try:
        return FeatureParser(str(path.parent), path.name).parse()
    except GherkinParseError as exc:
        said = " ".join(exc.message.replace("Unknown parsing error: Parser errors:", "").split())
        raise UserError(f"malformed feature: {said} (line: {exc.line_content.strip()!r})",
                        path=_shown(path), line=exc.line) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise UserError(f"not UTF-8 text ({exc.reason})", path=_shown(path), line=line) from None
    except KeyError:  # pytest-bdd's reading of a document with no feature in it
        raise UserError("no 'Feature:' line: a feature file holds one feature",
                        path=_shown(path), line=1) from None


def _shown(path: Path) -> str:
    """Relative to the working directory when under it (as pytest names files), else absolute:
    '../../tmp/x.feature' helps no one."""
    try:
        if path.resolve().is_relative_to(Path.cwd().resolve()):
            return os.path.relpath(path)
    except (OSError, ValueError):
        pass
    return str(path)


def check_steps(path: Path) -> None:
    """Raise a UserError for the first step no definition matches, the first phrase that is
    not known, and the first property id that is not registered or not judged by that step."""
    feature = parse_feature(path)
    for template in feature.scenarios.values():
        _check_expectations(path, template.line_number, {*feature.tags, *template.tags})
        contexts = [ctx for examples in template.examples for ctx in examples.as_contexts()]
        for context in contexts or [{}]:
            for step in template.render(context).steps:
                found = match_step(step.name)
                if found is None:
                    raise unknown_step(path, step.line_number, step.keyword, step.name)
                _check_phrases(path, step.line_number, *found)
                wrong = step_problem(step.name, *found)
                if wrong:
                    raise UserError(wrong, path=_shown(path), line=step.line_number)
                block = block_problem(found[0], step.docstring)
                if block:
                    # The block's first line is two below the step's (the \"\"\" line between)
                    line = step.line_number + (block[1] + 1 if block[1] else 0)
                    raise UserError(block[0], path=_shown(path), line=line)


def expected_violations(path: Path) -> list[tuple[int, str]]:
    """Each scenario's @expect-violation tags (its own and its feature's), with its line."""
    feature = parse_feature(path)
    return [(template.line_number, tag)
            for template in feature.scenarios.values()
            for tag in sorted({*feature.tags, *template.tags})
            if tag.startswith("expect-violation:")]


def _check_expectations(path: Path, line: int, tags: set[str]) -> None:
    """@expect-violation:<id> must name a registered property."""
    for tag in sorted(tags):
        if not tag.startswith("expect-violation:"):
            continue
        try:
            get(tag.split(":", 1)[1])
        except UnknownProperty:
            wrong = problem([tag.split(":", 1)[1]], None)
            raise UserError(f"@{tag}: {wrong}", path=_shown(path), line=line) from None


def _check_phrases(path: Path, line: int, definition, arguments: dict) -> None:
    known = {"condition": phrases.CONDITIONS, "event": phrases.EVENTS}
    for argument, what in definition.phrases.items():
        wrong = phrases.problem(known[what], str(arguments[argument]), what)
        if wrong:
            raise UserError(wrong, path=_shown(path), line=line)



def unknown_step(path: Path, line: int, keyword: str, text: str) -> UserError:
    close = closest_steps(text)
    hint = ("; closest known steps: " + " | ".join(f"'{c}'" for c in close)) if close else ""
    return UserError(f"unknown step '{keyword.strip()} {text}'{hint}", path=_shown(path),
                     line=line)
