"""``aftershock report RUN``: a run's HTML report (allure) and its conformance matrix."""

# Imports inside functions: start-up time, as in the rest of the command line.

from __future__ import annotations

import argparse
from pathlib import Path

from aftershock.cli.run import add_submission_options  # the command line's own, no engine


def cmd_report(args: argparse.Namespace) -> int:
    from aftershock.report import html, matrix

    run = Path(args.run_dir)
    said = []
    if args.submission:  # first: a run that cannot make one is refused before anything
        from aftershock.report import submission

        said = submission.write(run, Path(args.submission), args.evidence_url)
    index = html.generate(run)
    for line in matrix.text(matrix.load(run)):
        print(line)
    if (run / "matrix.html").is_file():
        print(f"conformance matrix: {run / 'matrix.html'} (markdown: {run / 'matrix.md'})")
    else:
        print("no conformance matrix: no scenario of this run named a property, e.g. (R1)")
    print(f"HTML report: {index}")
    for line in said:
        print(line)
    return 0


def add_parser(sub) -> None:
    report = sub.add_parser("report", help="a run's HTML report (allure) and matrix")
    report.add_argument("run_dir", help="reports/<run>, as printed at the end of a run")
    add_submission_options(report)
    report.set_defaults(func=cmd_report)
