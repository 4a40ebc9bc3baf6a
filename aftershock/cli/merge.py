"""``aftershock merge RUN... --out DIR``: the run dirs of shards joined into one."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
import json
from pathlib import Path


def cmd_merge(args: argparse.Namespace) -> int:
    from aftershock.runs.merge import merge

    out = Path(args.out)
    kind = merge([Path(run) for run in args.runs], out)
    if kind == "run":
        from aftershock.report import matrix

        for line in matrix.text(matrix.load(out)):
            print(line)
        print(f"aftershock: merged {len(args.runs)} runs into {out} (HTML: aftershock report "
              f"{out})")
    else:
        from aftershock.cli.explore import table

        for line in table(json.loads((out / "summary.json").read_text())):
            print(line)
        print(f"aftershock: merged {len(args.runs)} explorations into {out}")
    return 0


def add_parser(sub) -> None:
    joined = sub.add_parser("merge", help="join the run dirs of shards (aftershock run or "
                            "explore --shard) into one matrix, allure results and summary")
    joined.add_argument("runs", nargs="+", help="the shards' run dirs")
    joined.add_argument("--out", "--run-dir", dest="out", required=True,
                        help="the merged run dir (may hold the shards)")
    joined.set_defaults(func=cmd_merge)
