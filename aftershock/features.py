"""Reading feature files: Gherkin syntax and every step's text checked against the registry
before anything runs, so a typo is one message with file:line and the closest known steps."""

from __future__ import annotations

import os
from pathlib import Path

from aftershock.errors import UserError
from aftershock.scenario import closest_steps, match_step


def parse_feature(path: Path):
    from pytest_bdd.exceptions import GherkinParseError
    from pytest_bdd.parser import FeatureParser

    try:
        return FeatureParser(str(path.parent), path.name).parse()
    except GherkinParseError as exc:
        raise UserError(f"malformed feature: {exc.message} (line: {exc.line_content.strip()!r})",
                        path=_shown(path), line=exc.line) from None


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def check_steps(path: Path) -> None:
    """Raise a UserError for the first step no definition matches."""
    feature = parse_feature(path)
    for template in feature.scenarios.values():
        contexts = [ctx for examples in template.examples for ctx in examples.as_contexts()]
        for context in contexts or [{}]:
            for step in template.render(context).steps:
                found = match_step(step.name)
                if found is None:
                    raise unknown_step(path, step.line_number, step.keyword, step.name)
                _check_phrases(path, step.line_number, *found)


def _check_phrases(path: Path, line: int, definition, arguments: dict) -> None:
    from aftershock import phrases

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
