"""``aftershock engine up|down|status``: the container engine kind runs on.

``up`` starts the managed engine (Debian's docker.io, installed if missing, with its own data
root and socket) or, with ``--engine=existing``, checks that the engine already running answers.
It prints the ``DOCKER_HOST`` to use on stdout, as `cluster up` prints a kubeconfig path.
"""

# Imports inside functions: start-up time, as in the rest of the command line (a subcommand
# imports what it uses).

from __future__ import annotations

import argparse
import sys
import time

from aftershock.errors import UserError


def _say(message: str) -> None:
    print(f"aftershock: {message}", file=sys.stderr, flush=True)


def cmd_up(args: argparse.Namespace) -> int:
    from aftershock.containers import engine
    from aftershock.containers import managed as managed_engine

    if args.engine == "existing":
        answer = engine.ask()
        if not answer.ok:
            raise UserError(f"--engine=existing: {answer.problem}")
        _say(f"using the running {answer.engine} engine")
        return 0
    began = time.monotonic()
    record = managed_engine.up()
    _say(f"engine up in {time.monotonic() - began:.1f}s (dockerd pid "
         f"{record.processes['dockerd'].pid}); aftershock uses it by itself, other tools need:")
    print(f"export DOCKER_HOST={record.server}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from aftershock.containers import managed as managed_engine

    began = time.monotonic()
    if not managed_engine.down():
        _say("no managed engine")
        return 0
    _say(f"engine down in {time.monotonic() - began:.1f}s (its images stay in "
         f"{managed_engine.paths().data})")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from aftershock.containers import engine
    from aftershock.containers import managed as managed_engine

    record = managed_engine.running()
    if record:
        print(f"managed engine: running, dockerd pid {record.processes['dockerd'].pid}, "
              f"DOCKER_HOST={record.server}")
    elif managed_engine.state():
        print("managed engine: dead (its daemon is gone; `aftershock cluster gc` cleans up)")
    else:
        print("managed engine: not started")
    answer = engine.ask()
    print(f"kind would use: {answer.engine}" if answer.ok else f"kind: {answer.problem}")
    return 0 if answer.ok else 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    engine = sub.add_parser("engine", help="the container engine kind runs on")
    actions = engine.add_subparsers(dest="action", required=True)
    up = actions.add_parser("up", help="start one (Debian's docker.io) or check the running one")
    up.add_argument("--engine", choices=("managed", "existing"), default="managed",
                    help="managed: aftershock starts dockerd (default); existing: use the one "
                         "already running")
    up.set_defaults(func=cmd_up)
    actions.add_parser("down", help="stop the managed engine (its images stay)").set_defaults(
        func=cmd_down)
    actions.add_parser("status", help="which engine kind would use").set_defaults(
        func=cmd_status)
