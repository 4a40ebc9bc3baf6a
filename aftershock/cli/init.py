"""`aftershock init DIR`: a conformance project with aftershock's own layout (features/,
steps/, fixtures/, clusters/, profiles/, reports/, conftest.py, pyproject.toml), its example
feature using a built-in step and one of its own; and `aftershock steps`: the step catalogue,
built-in and the project's own."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
import json
from importlib import metadata
from pathlib import Path

from aftershock.cli.say import say
from aftershock.errors import UserError
from aftershock.profile.placeholders import fill

TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "project"


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


def cmd_init(args: argparse.Namespace) -> int:
    target = Path(args.directory)
    written = init(target)
    say(f"made {len(written)} files in {target}: features/, steps/, fixtures/, clusters/, "
         "profiles/, reports/, conftest.py, pyproject.toml")
    say(f"next: cd {target} && aftershock run features")
    return 0


def add_parser(sub) -> None:
    start = sub.add_parser("init", help="a new conformance project with aftershock's layout")
    start.add_argument("directory", help="where (absent or empty)")
    start.set_defaults(func=cmd_init)
