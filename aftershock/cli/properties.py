"""``aftershock properties``: the catalogue of properties a step may name (docs/properties.md
is its ``--markdown``)."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
from pathlib import Path

from aftershock.errors import UserError


def cmd_properties(args: argparse.Namespace) -> int:
    from aftershock.cli import catalogue

    features = Path(args.features) if args.features else None
    if features is not None and not features.is_dir():
        raise UserError("no such directory", path=args.features)
    if args.markdown:
        print(catalogue.markdown(features), end="")
    else:
        for line in catalogue.text(features):
            print(line)
    return 0


def add_parser(sub) -> None:
    props = sub.add_parser("properties", help="the catalogue of properties a step may name")
    props.add_argument("--features", default="features",
                       help="where to look for the features that use each (default: features)")
    props.add_argument("--markdown", action="store_true", help="as docs/properties.md")
    props.set_defaults(func=cmd_properties)
