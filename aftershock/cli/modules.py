"""``aftershock modules serve MODULE@VERSION``: a Go module the module proxy refuses, served from
a folder."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
from pathlib import Path

from aftershock.cli.say import say
from aftershock.errors import UserError


def cmd_modules_serve(args: argparse.Namespace) -> int:
    from aftershock.go import modproxy

    module, at, version = args.module.partition("@")
    if not at or not module or not version:
        raise UserError(f"'{args.module}': expected <module>@<version>, as go.sum names it "
                        "(github.com/kai-scheduler/KAI-scheduler@v0.14.0)")
    served = modproxy.serve(module, version, Path(args.source), Path(args.go_sum), args.rev,
                            args.subdir, Path(args.into) if args.into else None)
    say(f"served {module}@{version} ({served.files} files) from {args.source}: {served.zip_hash}"
         f" and go.mod {served.mod_hash}, the lines of {args.go_sum}")
    print(served.goproxy)
    return 0


def add_parser(sub) -> None:
    modules = sub.add_parser("modules", help="Go modules the module proxy refuses")
    modules_sub = modules.add_subparsers(dest="modules_command", required=True)
    serve = modules_sub.add_parser(
        "serve", help="lay out MODULE@VERSION in a folder GOPROXY=file://... reads, made from a "
        "git repository by the Go module zip rules and checked against a go.sum; prints the "
        "GOPROXY to use")
    serve.add_argument("module", metavar="MODULE@VERSION",
                       help="as go.sum names it, e.g. "
                       "github.com/kai-scheduler/KAI-scheduler@v0.14.0")
    serve.add_argument("--from", dest="source", required=True, metavar="GIT_DIR",
                       help="a clone or mirror of the module's repository (bare or not)")
    serve.add_argument("--go-sum", required=True, metavar="FILE_OR_DIR",
                       help="the go.sum of the module that needs it (or that module's folder): "
                       "its two lines for MODULE@VERSION must be what the zip hashes to")
    serve.add_argument("--rev", help="the revision to take (default: the tag VERSION, or "
                       "SUBDIR/VERSION)")
    serve.add_argument("--subdir", default="", help="the module's folder in the repository")
    serve.add_argument("--into", help="the proxy folder (default: ~/.cache/aftershock/goproxy)")
    serve.set_defaults(func=cmd_modules_serve)
