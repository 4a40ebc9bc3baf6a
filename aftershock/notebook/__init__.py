"""The IPython extension: `%load_ext aftershock.notebook`.

    %aftershock cluster up --shape clusters/three-nodes.yaml [--profile P] [--kubernetes-version V]
    %aftershock cluster status | down | gc
    %%scenario            (a cell of Given/When/Then lines: every line checked first, then run
                           one by one, each shown live while it runs (for how long, of what
                           bound, with the faults active), then the timeline; a cell run again
                           replaces the steps it added)
    %scenario steps       (the steps of this scenario, numbered)
    %scenario drop N...   (forget steps by number: %scenario save leaves them out)
    %scenario new "Name"  (end the scenario, undoing everything it did, and begin another)
    %scenario save features/x/y.feature "Scenario name"
    %scenario plot

Loading it makes the project the notebook is in (the nearest folder up whose pyproject.toml
names aftershock) the working directory: a notebook's paths resolve against the project,
wherever the kernel started. An error in a cell is one ✘ line, never a traceback. The session
is also `session` in the notebook's namespace (an aftershock.notebook.Session)."""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import os
import re
import shlex
import threading
import time
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.display import Markdown, display

from aftershock.errors import ClusterError, StepFailed, UserError
from aftershock.grammar import steps_with_blocks
from aftershock.machine.shape import find_root
from aftershock.notebook.session import Session, StepResult
from aftershock.providers import clusters

__all__ = ["Session", "load_ipython_extension"]

MARKS = {"passed": "✔", "violated": "✘", "failed": "✘", "skipped": "-", "interrupted": "⏹",
         "promised": "⧗"}
ERRORS = (UserError, StepFailed, ClusterError)  # shown as one ✘ line
BOUND = re.compile(r"\b(?:within|for|after)\s+(\d+)\s+seconds?\b|\b(\d+)\s+seconds?\s+pass")
TICK = 1.0  # seconds between updates of a running step's line


def _final(result: StepResult) -> Markdown:
    text = f"{MARKS[result.status]} `{result.line}` — {result.status} ({result.seconds:.1f} s)"
    if result.message:
        text += f"\n\n```\n{result.message}\n```"
    return Markdown(text)


class Live:
    """A step's line while it runs, updated every second: how long it has run, of the bound
    its words give, and the faults active."""

    def __init__(self, session: Session, line: str):
        self.session, self.line = session, line
        found = BOUND.search(line)
        self.bound = int(found.group(1) or found.group(2)) if found else None
        self.began = time.monotonic()
        self.handle = display(self._text(), display_id=True)
        self.stopped = threading.Event()
        # the kernel's parent message lives in a context variable: the thread carries it, so
        # its updates belong to this cell
        self.thread = threading.Thread(target=contextvars.copy_context().run,
                                       args=(self._tick,), name="aftershock-live", daemon=True)
        self.thread.start()

    def _text(self) -> Markdown:
        elapsed = time.monotonic() - self.began
        of = f" of {self.bound} s" if self.bound else ""
        scenario = self.session.scenario
        faults = scenario.active_faults() if scenario is not None else []
        active = f" · faults active: {', '.join(faults)}" if faults else ""
        return Markdown(f"⏳ `{self.line}` — running, {elapsed:.0f} s{of}{active}")

    def _tick(self) -> None:
        while not self.stopped.wait(TICK):
            with contextlib.suppress(Exception):  # a display that cannot update is no error
                self.handle.update(self._text())

    def done(self, result: StepResult | None) -> None:
        self.stopped.set()
        self.thread.join(timeout=2 * TICK)
        self.handle.update(_final(result) if result is not None
                           else Markdown(f"✘ `{self.line}` — did not finish"))


def _one_line(shell, etype, value, tb, tb_offset=None) -> None:
    """A user's error (a step's words, a file, a failed step) as one ✘ line: the cell ends as
    an error (Run All stops there), and shows no traceback."""
    shell._showtraceback(etype, value, [f"✘ {value}"])


def _cluster_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%aftershock cluster", add_help=False)
    parser.add_argument("action", choices=("up", "down", "status", "gc"))
    parser.add_argument("--shape")
    parser.add_argument("--profile")
    parser.add_argument("--kubernetes-version")
    parser.add_argument("--report-dir")
    return parser


def work_in_project(start: Path) -> Path | None:
    """The project of ``start`` as the working directory (None: no project found, nothing
    changed)."""
    root = find_root(start.resolve())
    if root is not None and root != start.resolve():
        os.chdir(root)
    return root


def load_ipython_extension(ipython) -> None:
    root = work_in_project(Path.cwd())
    if root is not None:
        display(Markdown(f"aftershock: paths resolve against the project `{root}`"))
    ipython.set_custom_exc(ERRORS, _one_line)

    @magics_class
    class AftershockMagics(Magics):
        session: Session | None = None
        cell_key: str | None = None
        by_cell: dict[tuple[int, str], list[StepResult]] = {}

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
                return clusters.gc()
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
            if cell is None:
                return self._scenario_command(self._need_session(), shlex.split(line))
            steps = steps_with_blocks(cell)
            for text, block in steps:  # all of them, before any runs: as pytest collects
                Session.check(text, block)
            session = self._need_session()
            self._replace_earlier_run(session, cell)
            done: list[StepResult] = []
            self.by_cell[self._key(session, cell)] = done
            try:
                for text, block in steps:
                    live = Live(session, text)
                    result = None
                    try:
                        result = session.step(text, raise_on_failure=False, block=block)
                    finally:
                        interrupted = [r for r in session.results[-1:]
                                       if r.status == "interrupted"]
                        live.done(result or (interrupted[0] if interrupted else None))
                    done.append(result)
                    if result.status == "failed":
                        break
            except KeyboardInterrupt:  # also between steps, outside session.step's own guard
                failures = session.interrupted()
                display(f"interrupted: active faults reverted "
                        f"(now active: {session.scenario.active_faults() or 'none'})"
                        + (f"; could not revert: {failures}" if failures else ""))
                raise
            display(session.plot())  # each violation's witness was shown with its step
            return None

        def _key(self, session: Session, cell: str) -> tuple[int, str]:
            return id(session.scenario), self.cell_key or cell

        def _replace_earlier_run(self, session: Session, cell: str) -> None:
            earlier = self.by_cell.pop(self._key(session, cell), [])
            numbers = [n for n, r in enumerate(session.results, 1)
                       if any(r is e for e in earlier)]
            if numbers:
                session.drop(numbers)
                display(Markdown(
                    f"↻ this cell ran before: its {len(numbers)} steps are replaced in what "
                    "`%scenario save` writes; what they did to the cluster stays "
                    "(`%scenario new` starts clean)"))

        def _scenario_command(self, session: Session, words: list[str]):
            if words[:1] == ["save"] and len(words) == 3:
                return self._save(session, words[1], words[2])
            if words[:1] == ["new"] and len(words) == 2:
                return f"new scenario in namespace/{session.new_scenario(words[1]).namespace}"
            if words == ["plot"]:
                return session.plot()
            if words == ["steps"]:
                return Markdown("\n".join(
                    f"{n}. {MARKS[r.status]} `{r.line}` — {r.status}"
                    for n, r in enumerate(session.results, 1)) or "no step has run yet")
            if words == ["judge"]:
                judged = session.judge_promises()
                for result in judged:
                    display(_final(result))
                return None if judged else "nothing promised for the scenario's end"
            if words[:1] == ["drop"] and len(words) > 1 and all(w.isdigit() for w in words[1:]):
                dropped = session.drop(int(w) for w in words[1:])
                return f"dropped {len(dropped)}: " + "; ".join(r.line for r in dropped)
            raise UsageError('usage: %scenario save FILE "Scenario name" | new "Name" | plot | '
                             "steps | judge | drop N...")

        def _save(self, session: Session, path: str, name: str) -> str:
            left = session.left_out()
            note = (f"left out {len(left)} that did not pass or judge: "
                    + "; ".join(f"{r.line} ({r.status})" for r in left)) if left else ""
            kept = len(session.results) - len(left)
            if kept == 0:
                raise UserError(f"nothing to save for scenario '{name}': "
                                + (note if left else "no step has run yet"))
            return f"saved {kept} steps to {session.save(path, name)}" + (
                f"; {note}" if note else "")

    def remember_cell(info) -> None:
        AftershockMagics.cell_key = getattr(info, "cell_id", None) or None

    ipython.events.register("pre_run_cell", remember_cell)
    ipython.register_magics(AftershockMagics)
