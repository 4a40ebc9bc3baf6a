"""``aftershock judge RUN``: a saved run judged again with today's properties."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
from pathlib import Path

from aftershock.errors import UserError


def cmd_judge(args: argparse.Namespace) -> int:
    from aftershock import rejudge
    from aftershock.report import matrix

    run = Path(args.run_dir)
    if not (run / matrix.FILE).exists():
        raise UserError(f"not a run dir with a conformance matrix (no {matrix.FILE})",
                        path=args.run_dir)
    roots = [Path(p) for p in args.profiles] or [Path("profiles")]
    result = rejudge.rejudge(run, roots)
    for line in matrix.text(result.rows):
        print(line)
    changed = rejudge.differences(matrix.load(run), result.rows)
    rebuilt = f" ({result.legacy} scenarios saved before judgements were recorded: rebuilt " \
              "from their steps)" if result.legacy else ""
    print(f"judged again with today's properties: {len(result.rows)} scenarios{rebuilt}")
    if changed:
        print(f"{len(changed)} cells differ from the matrix recorded in the run:")
        for line in changed:
            print(f"  {line}")
    else:
        print("the same matrix as recorded in the run")
    if args.verbose:
        for scenario, verdicts in result.verdicts.items():
            print(f"\n{scenario}")
            for verdict in verdicts:
                print(f"  {verdict.property}: {verdict.status.upper()}: {verdict.summary}")
    return 1 if changed and args.check else 0


def add_parser(sub) -> None:
    again = sub.add_parser("judge", help="judge a saved run again with today's properties")
    again.add_argument("run_dir", help="reports/<run>, as printed at the end of a run")
    again.add_argument("--profiles", action="append", default=[], metavar="DIR",
                       help="where a run saved before judgements were recorded finds its "
                            "profiles (default: profiles)")
    again.add_argument("--check", action="store_true",
                       help="exit 1 when a cell differs from the matrix recorded in the run")
    again.add_argument("-v", "--verbose", action="store_true", help="every verdict")
    again.set_defaults(func=cmd_judge)
