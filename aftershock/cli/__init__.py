"""The ``aftershock`` command: run | explore | judge | properties | steps | init | notebook |
cluster up/down/list/gc | engine up/down/status | kind build-image | toolchain build/status |
modules serve | merge | report | doctor. Each command is a module of this package, with its
``add_parser``; ``COMMANDS`` is the one list of them."""

# Imports inside functions: start-up time. `aftershock --help` imports in a tenth of a
# second; the engine a subcommand needs (the step library about a second, the notebook layer
# two) is imported by that subcommand alone.

from __future__ import annotations

import argparse
import os
import sys

from aftershock.cli import (
    cluster,
    doctor,
    engine,
    explore,
    init,
    judge,
    kind,
    merge,
    modules,
    notebook,
    properties,
    report,
    run,
    steps,
    toolchain,
)
from aftershock.cli.say import say
from aftershock.errors import ClusterError, UserError

DESCRIPTION = "Judge Kubernetes controllers, schedulers and drivers by their whole history."
COMMANDS = (run, explore, merge, judge, report, properties, steps, init, notebook, cluster,
            engine, kind, toolchain, modules, doctor)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="aftershock", description=DESCRIPTION)
    sub = top.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    top = parser()
    args, extra = top.parse_known_args(argv)
    takes_extra = getattr(args, "takes_extra", False)  # run and notebook pass the rest on
    if extra and not takes_extra:
        top.error(f"unrecognized arguments: {' '.join(extra)}")  # as parse_args says it
    args.argv = list(argv)
    try:
        if takes_extra:
            return args.func(args, extra)
        return args.func(args)
    except UserError as exc:
        say(f"aftershock: error: {exc}")
        return exc.exit_code
    except ClusterError as exc:
        say(f"aftershock: cluster error: {exc}")
        return 1
    except KeyboardInterrupt:
        say("aftershock: interrupted; everything started was removed")
        return 130
    except BrokenPipeError:  # e.g. `| head`: the reader has what it wanted, as with kubectl
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
