"""The IPython extension: `%load_ext aftershock.notebook`.

    %aftershock cluster up --shape clusters/three-nodes.yaml [--profile P] [--kubernetes-version V]
    %aftershock cluster status | down | gc
    %%scenario            (a cell of Given/When/Then lines: run one by one, each result shown
                           as it finishes, then the timeline; on a violation, the witness)
    %scenario new "Name"  (end the scenario, undoing everything it did, and begin another)
    %scenario save features/x/y.feature "Scenario name"
    %scenario plot

The session is also `session` in the notebook's namespace (an aftershock.notebook.Session)."""

from __future__ import annotations

import argparse
import shlex

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.display import Markdown, display

from aftershock.grammar import steps_with_blocks
from aftershock.notebook.session import Session, StepResult
from aftershock.providers import processes

__all__ = ["Session", "load_ipython_extension"]

MARKS = {"passed": "✔", "violated": "✘", "failed": "✘", "skipped": "-", "interrupted": "⏹"}


def _show(result: StepResult) -> None:
    text = f"{MARKS[result.status]} `{result.line}` — {result.status} ({result.seconds:.1f} s)"
    if result.message:
        text += f"\n\n```\n{result.message}\n```"
    display(Markdown(text))


def _cluster_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%aftershock cluster", add_help=False)
    parser.add_argument("action", choices=("up", "down", "status", "gc"))
    parser.add_argument("--shape")
    parser.add_argument("--profile")
    parser.add_argument("--kubernetes-version")
    parser.add_argument("--report-dir")
    return parser


def load_ipython_extension(ipython) -> None:
    @magics_class
    class AftershockMagics(Magics):
        session: Session | None = None

        def _need_session(self) -> Session:
            if self.session is None:
                raise UsageError("no cluster yet: run %aftershock cluster up first")
            return self.session

        @line_magic
        def aftershock(self, line: str):
            words = shlex.split(line)
            if words[:1] != ["cluster"]:
                raise UsageError("usage: %aftershock cluster up|down|status|gc [--shape FILE]")
            try:
                args = _cluster_parser().parse_args(words[1:])
            except SystemExit:
                raise UsageError("usage: %aftershock cluster up|down|status|gc "
                                 "[--shape FILE] [--profile FILE]") from None
            if args.action == "gc":
                return processes.gc()
            if args.action == "up":
                if self.session is not None:
                    self.session.close()
                self.session = Session(shape=args.shape, profile=args.profile,
                                       kubernetes_version=args.kubernetes_version,
                                       report_dir=args.report_dir)
                self.shell.user_ns["session"] = self.session
                return self.session.status()
            session = self._need_session()
            if args.action == "status":
                return session.status()
            session.close()
            self.session = None
            self.shell.user_ns.pop("session", None)
            return "cluster removed"

        @line_cell_magic
        def scenario(self, line: str, cell: str | None = None):
            session = self._need_session()
            if cell is None:
                return self._scenario_command(session, shlex.split(line))
            try:
                for text, block in steps_with_blocks(cell):
                    result = session.step(text, raise_on_failure=False, block=block)
                    _show(result)
                    if result.status == "failed":
                        break
            except KeyboardInterrupt:  # also between steps, outside session.step's own guard
                failures = session.interrupted()
                display(f"interrupted: active faults reverted "
                        f"(now active: {session.scenario.active_faults() or 'none'})"
                        + (f"; could not revert: {failures}" if failures else ""))
                raise
            display(session.plot())
            witness = session.witness()
            if witness:
                print(witness)
            return None

        def _scenario_command(self, session: Session, words: list[str]):
            if words[:1] == ["save"] and len(words) == 3:
                return f"saved {session.save(words[1], words[2])}"
            if words[:1] == ["new"] and len(words) == 2:
                return f"new scenario in namespace/{session.new_scenario(words[1]).namespace}"
            if words == ["plot"]:
                return session.plot()
            raise UsageError('usage: %scenario save FILE "Scenario name" | new "Name" | plot')

    ipython.register_magics(AftershockMagics)
