"""``aftershock steps [WORD...]``: every step a feature may use, built-in and the project's own."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
from pathlib import Path

from aftershock.errors import UserError


def cmd_steps(args: argparse.Namespace) -> int:
    from aftershock.cli.catalogue import steps as catalogue

    lines = catalogue(Path(args.project), args.words)
    if not lines:
        raise UserError(f"no step mentions {' and '.join(repr(w) for w in args.words)} (aftershock "
                        "steps with no word lists every step)")
    for line in lines:
        print(line)
    return 0


def add_parser(sub) -> None:
    vocabulary = sub.add_parser("steps", help="every step a feature may use (or those that "
                                "mention every WORD)")
    vocabulary.add_argument("words", nargs="*", metavar="WORD",
                            help="show only the steps whose text, description or module "
                            "mention this (case ignored), e.g. drain")
    vocabulary.add_argument("--project", default=".",
                            help="the project whose own steps/ join the built-in ones")
    vocabulary.set_defaults(func=cmd_steps)
