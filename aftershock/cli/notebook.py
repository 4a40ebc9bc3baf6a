"""``aftershock notebook``: JupyterLab on the project, from the pinned extra."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from aftershock.cli.say import say
from aftershock.errors import UserError


def cmd_notebook(args: argparse.Namespace, extra: list[str]) -> int:
    """JupyterLab on the project (the nearest folder up whose pyproject.toml names
    aftershock), from the pinned dependency; any other option goes to `jupyter lab`."""
    import importlib.util

    from aftershock.machine.shape import find_root

    if importlib.util.find_spec("jupyterlab") is None:
        raise UserError("JupyterLab is not installed here: pip install -c constraints.txt "
                        "'aftershock[notebook]' (make notebook does)")
    root = find_root(Path.cwd().resolve()) or Path.cwd().resolve()
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}",
               f"--port={args.port}", f"--ip={args.ip}", *extra]
    if args.no_browser:
        command.append("--no-browser")
    if os.geteuid() == 0:  # a container's root, as here: jupyter refuses it unless told
        command.append("--allow-root")
    say(f"aftershock: JupyterLab on {root} (notebooks/ holds the examples); Ctrl-C twice ends "
         "it, and every cluster a notebook started goes with its kernel")
    sys.stdout.flush()
    os.execv(sys.executable, command)  # jupyter's own Ctrl-C and shutdown from here on
    return 0  # not reached


def add_parser(sub) -> None:
    lab = sub.add_parser("notebook", help="JupyterLab on this project, its notebooks' paths "
                         "resolving against it (any other option goes to jupyter lab)")
    lab.add_argument("--port", type=int, default=8888, help="(default: 8888)")
    lab.add_argument("--ip", default="127.0.0.1", help="where it listens (default: 127.0.0.1)")
    lab.add_argument("--no-browser", action="store_true", help="print its address only")
    lab.set_defaults(func=cmd_notebook, takes_extra=True)
