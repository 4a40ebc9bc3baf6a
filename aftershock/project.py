"""`aftershock init DIR`: a conformance project with aftershock's own layout (features/,
steps/, fixtures/, clusters/, profiles/, reports/, conftest.py, pyproject.toml), its example
feature using a built-in step and one of its own; and `aftershock steps`: the step catalogue,
built-in and the project's own."""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from importlib import metadata
from pathlib import Path

import aftershock.bdd.steps  # noqa: F401  (the built-in steps)
from aftershock.errors import UserError
from aftershock.grammar import REGISTRY
from aftershock.sut.placeholders import fill

TEMPLATE = Path(__file__).resolve().parent / "templates" / "project"


def init(target: Path) -> list[Path]:
    """Write the project into ``target`` (absent or empty); returns the files written."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UserError("not an empty directory: aftershock init writes a new project",
                        path=str(target))
    values = {"project": target.resolve().name, "aftershock_version": metadata.version(
        "aftershock"), "aftershock_source": installed_from()}
    written = []
    for source in sorted(p for p in TEMPLATE.rglob("*") if p.is_file()):
        if "__pycache__" in source.parts:
            continue
        relative = source.relative_to(TEMPLATE)
        name, text = relative.name, source.read_text()
        if name.endswith(".in"):  # the project's name, aftershock's version and source go in
            name, text = name.removesuffix(".in"), fill(text, values)
        destination = target / relative.parent / name.replace("dot-", ".", 1)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text)
        written.append(destination)
    return written


def installed_from() -> str:
    """Where the aftershock installed here came from (PEP 610's direct_url.json: a source
    tree, a wheel file), as a path for the new project's README; else a stand-in."""
    found = [d.read_text("direct_url.json") for d in metadata.distributions(name="aftershock")]
    url = next((json.loads(text).get("url", "") for text in found if text), "")
    return url.removeprefix("file://") if url else "path/to/aftershock-checkout-or-wheel"


def load_project_steps(root: Path) -> None:
    """The project's own steps/ (as its conftest.py imports them), if it has any."""
    if (root / "steps" / "__init__.py").is_file():
        sys.path.insert(0, str(root))
        try:
            importlib.import_module("steps")
        finally:
            sys.path.remove(str(root))


def catalogue(root: Path, words: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Every step (or those that mention every one of ``words``, in their text, what they do
    or the module they come from): its words, the check it judges by, where it comes from,
    what it does."""
    load_project_steps(root)
    lines = []
    for definition in sorted(REGISTRY, key=lambda d: (_origin(d), d.example)):
        if not _mentions(definition, words):
            continue
        judged = f"  [judges by {definition.check}; may name properties]" if definition.check \
            else ""
        block = "  [with a YAML block under it, between \"\"\" lines]" \
            if definition.takes_block else ""
        lines.append(f"{definition.kind.capitalize()} {definition.example}{judged}{block}")
        doc = inspect.getdoc(definition.func)
        detail = _first_sentence(doc) if doc else ""
        lines.append(f"    {_origin(definition)}{': ' + detail if detail else ''}")
    return lines


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


def _mentions(definition, words: list[str] | tuple[str, ...]) -> bool:
    text = " ".join([definition.kind, definition.example, inspect.getdoc(definition.func) or "",
                     _origin(definition), definition.check or ""]).lower()
    return all(word.lower() in text for word in words)


def _origin(definition) -> str:
    module = definition.func.__module__
    return f"built-in ({module.rsplit('.', 1)[-1]})" if module.startswith("aftershock.") \
        else f"this project ({module})"
