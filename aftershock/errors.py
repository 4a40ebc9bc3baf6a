"""Errors a user can act on: printed as one line, exit code 2, never a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user (a file, a flag, a step). ``str()`` is the whole message."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        self.detail = message
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(f"{where}{message}")


class StepFailed(AssertionError):
    """A step that could not do or confirm what it says; the message carries the evidence."""


class ToolchainMissing(UserError):
    """The control-plane binaries are not built yet."""


class ClusterError(Exception):
    """A cluster failed to start or stopped answering; carries the component's log tail."""
