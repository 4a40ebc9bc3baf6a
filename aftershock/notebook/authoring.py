"""Saving what a notebook ran as a feature file that pytest runs unchanged."""

from __future__ import annotations

from pathlib import Path

from aftershock.errors import UserError
from aftershock.features import check_steps
from aftershock.grammar import match_step, split_keyword

INDENT = "    "


def _keyword(line: str, previous: str | None) -> tuple[str, str]:
    keyword, text = split_keyword(line)
    if keyword != "*":
        return keyword, text
    found = match_step(text)
    kind = found[0].kind.capitalize() if found else "Given"
    return ("And" if kind == previous else kind), text


Step = str | tuple[str, str | None]  # a step's line, with the YAML block under it


def scenario_block(name: str, lines: list[Step]) -> str:
    if not lines:
        raise UserError(f"nothing to save for scenario '{name}': no step has run yet")
    out, previous = [f"  Scenario: {name}"], None
    for step in lines:
        line, block = (step, None) if isinstance(step, str) else step
        keyword, text = _keyword(line, previous)
        if keyword not in ("And", "But"):
            previous = keyword
        out.append(f"{INDENT}{keyword} {text}")
        if block is not None:
            out += [f'{INDENT}  """', *(f"{INDENT}  {row}".rstrip()
                                        for row in block.rstrip("\n").splitlines()),
                    f'{INDENT}  """']
    return "\n".join(out) + "\n"


def write_feature(path: Path, scenario: str, lines: list[Step],
                  feature: str | None = None) -> Path:
    """Create the feature file, or add the scenario to it; then check it the way pytest will
    (Gherkin syntax, every step known), so a saved file is a runnable one."""
    block = scenario_block(scenario, lines)
    if path.exists():
        existing = path.read_text()
        if f"Scenario: {scenario}\n" in existing:
            raise UserError(f"scenario '{scenario}' is already in the file", path=str(path))
        text = existing.rstrip("\n") + "\n\n" + block
    else:
        title = feature or path.stem.replace("_", " ").capitalize()
        text = f"Feature: {title}\n  Written from a notebook with %scenario save.\n\n{block}"
    path.parent.mkdir(parents=True, exist_ok=True)
    previous = path.read_text() if path.exists() else None
    path.write_text(text)
    try:
        check_steps(path)
    except UserError:
        if previous is None:
            path.unlink()
        else:
            path.write_text(previous)
        raise
    return path
