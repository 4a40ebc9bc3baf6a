"""The options of a run, in one list: the pytest plugin adds those that are aftershock's to
pytest, and `aftershock run --help` shows every one, aftershock's and the pytest options a
user of the harness reaches for, grouped as a user looks for them."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLUSTER, IMPLEMENTATION, SELECTION, REPEATS, OUTPUT = (
    "cluster", "implementation", "selection", "repeats", "output")
GROUPS = {
    CLUSTER: "where the scenarios run",
    IMPLEMENTATION: "the implementation under test",
    SELECTION: "which scenarios",
    REPEATS: "repeats and parallel runs",
    OUTPUT: "what the run prints and writes",
}


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    group: str
    help: str
    settings: dict[str, Any] = field(default_factory=dict)
    pytest_own: bool = False  # pytest's option, shown and passed on; the plugin adds the rest

    @property
    def dest(self) -> str:
        name = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return "aftershock_" + name.lstrip("-").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option(("--cluster",), CLUSTER,
           "the provider of the cluster scenarios run on: local (the default), kind (needs a "
           "container engine), existing, or one a project's module registers",
           {"default": "local", "metavar": "PROVIDER"}),
    Option(("--shape",), CLUSTER,
           "cluster shape file for the local and kind providers (default: three nodes)",
           {"default": None, "metavar": "FILE"}),
    Option(("--kubernetes-version",), CLUSTER,
           "Kubernetes version of the local cluster (built the first time) or of the kind node "
           "image (default 1.37.2); `aftershock run` takes a list, 1.35.4,1.36.3,1.37.2, and "
           "runs each", {"default": None, "metavar": "VERSION"}),
    Option(("--kubeconfig",), CLUSTER, "kubeconfig for --cluster=existing",
           {"default": None, "metavar": "FILE"}),
    Option(("--context",), CLUSTER, "context for --cluster=existing (default: current)",
           {"default": None, "metavar": "CONTEXT"}),
    Option(("--allow-faults-on",), CLUSTER, "allow destructive faults on this existing context",
           {"action": "append", "default": [], "metavar": "CONTEXT"}),
    Option(("--profile",), IMPLEMENTATION,
           "profile of the implementation under test (profiles/*.yaml); given more than once, "
           "each scenario runs against each profile",
           {"action": "append", "default": [], "metavar": "FILE"}),
    Option(("-k",), SELECTION, "only the scenarios whose names match this expression "
           "(pytest's -k: 'drain and not kind')", {"metavar": "EXPRESSION"}, pytest_own=True),
    Option(("-m",), SELECTION, "only the scenarios whose marks match ('explore', 'not cluster')",
           {"metavar": "MARKS"}, pytest_own=True),
    Option(("--shard",), SELECTION,
           "run only the K-th of N parts of the scenarios (a hash of each one's id decides; "
           "every machine agrees); join the run dirs with aftershock merge",
           {"default": None, "metavar": "K/N"}),
    Option(("--collect-only", "--co"), SELECTION,
           "list the scenarios (and check every step) without running any",
           {"action": "store_true"}, pytest_own=True),
    Option(("-x", "--exitfirst"), SELECTION, "stop at the first scenario that fails",
           {"action": "store_true"}, pytest_own=True),
    Option(("--repeat",), REPEATS, "run every scenario N times and print a flake table",
           {"type": int, "default": 1, "metavar": "N"}),
    Option(("--run-dir",), OUTPUT,
           "where the run's reports go (default: reports/run-<time>); several runs may share "
           "one, e.g. to build one matrix", {"default": None, "metavar": "DIR"}),
    Option(("--progress",), OUTPUT,
           "print each step as it starts, with the faults active and the time (the default of "
           "`aftershock run`)", {"action": "store_true"}),
    Option(("-q", "--quiet"), OUTPUT, "print less (no step-by-step progress)",
           {"action": "count"}, pytest_own=True),
    Option(("-v", "--verbose"), OUTPUT, "print more: one line per scenario",
           {"action": "count"}, pytest_own=True),
)


def add_to_pytest(group: Any) -> None:
    """aftershock's own options, into pytest's option group ``group``."""
    for option in OPTIONS:
        if not option.pytest_own:
            group.addoption(*option.flags, dest=option.dest, help=option.help,
                            **option.settings)


def add_to_argparse(parser: argparse.ArgumentParser) -> None:
    """Every option, grouped, into the `aftershock run` parser; absent ones stay absent from
    its namespace (so that what is passed on to pytest is what was given)."""
    for key, title in GROUPS.items():
        group = parser.add_argument_group(f"{key}: {title}")
        if key == REPEATS:
            group.add_argument("--workers", type=int, default=1, metavar="N",
                               help="run N shards at once here (--shard K/N each), each with "
                               "its own cluster and run dir, then merge them (default: 1)")
        for option in (o for o in OPTIONS if o.group == key):
            settings = {k: v for k, v in option.settings.items() if k != "default"}
            group.add_argument(*option.flags, dest=option.dest, help=option.help,
                               default=argparse.SUPPRESS, **settings)


def with_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """aftershock's options as pytest would hold them: each given value, else its default."""
    return argparse.Namespace(**{
        o.dest: getattr(args, o.dest, o.settings.get("default")) for o in OPTIONS
        if not o.pytest_own})


def passed_on(args: argparse.Namespace) -> list[str]:
    """The options given to `aftershock run`, as pytest's command line (the first flag of
    each)."""
    out: list[str] = []
    for option in OPTIONS:
        if not hasattr(args, option.dest):
            continue
        value, flag = getattr(args, option.dest), option.flags[0]
        action = option.settings.get("action")
        if action == "store_true":
            out += [flag] if value else []
        elif action == "count":
            out += [flag] * int(value or 0)
        elif action == "append":
            for item in value or []:
                out += [flag, str(item)]
        else:
            out += [flag, str(value)]
    return out


def fresh_run_dir(home: Path) -> Path:
    """A run dir of its own under ``home``/reports: its time, and a part of the clock's
    nanoseconds, so that two runs started in one second get two."""
    return home / "reports" / (time.strftime("run-%Y%m%d-%H%M%S")
                               + f"-{time.time_ns() % 100000:05d}")
