"""``aftershock toolchain build|status``: the control-plane binaries, built here from Go modules."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from aftershock.cli.say import say


def cmd_toolchain_build(args: argparse.Namespace) -> int:
    from aftershock.go import toolchain

    began = time.monotonic()
    binaries = toolchain.build(args.kubernetes_version, force=args.force)
    say(f"toolchain ready in {time.monotonic() - began:.0f}s: {binaries.directory}")
    return 0


def cmd_toolchain_status(args: argparse.Namespace) -> int:
    from aftershock.go import toolchain

    wanted = toolchain.Versions.resolve(args.kubernetes_version)
    built = toolchain.status()
    if args.json:
        print(json.dumps({"wanted": wanted.key, "built": built}, indent=2))
        return 0
    print(f"wanted: {wanted.key}")
    if not built:
        print("built:  nothing yet (run 'aftershock toolchain build')")
    for entry in built:
        mark = "*" if Path(str(entry["directory"])).name == wanted.key else " "
        print(f"{mark} {entry['directory']}\n    {', '.join(entry['binaries'])}")
    return 0 if any(Path(str(e["directory"])).name == wanted.key for e in built) else 1


def add_parser(sub) -> None:
    tool = sub.add_parser("toolchain", help="build or inspect the control-plane binaries")
    tool_sub = tool.add_subparsers(dest="action", required=True)
    build = tool_sub.add_parser("build")
    build.add_argument("--kubernetes-version", help="e.g. 1.35.4 (default: the pinned one, 1.37.2)")
    build.add_argument("--force", action="store_true", help="rebuild even if cached")
    build.set_defaults(func=cmd_toolchain_build)
    stat = tool_sub.add_parser("status")
    stat.add_argument("--kubernetes-version")
    stat.add_argument("--json", action="store_true")
    stat.set_defaults(func=cmd_toolchain_status)
