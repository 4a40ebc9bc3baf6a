"""Which container engine answers here: kind needs one, the local provider does not. `aftershock
doctor` and `--cluster=kind` say the same words about it."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from aftershock.errors import UserError

ENGINES = ("docker", "podman", "nerdctl")
ALTERNATIVE = "start one with `aftershock engine up`, or use --cluster=local"
ANSWER_TIMEOUT = 10.0


@dataclass(frozen=True)
class EngineAnswer:
    engine: str | None = None  # the engine that answered
    silent: str | None = None  # a client found whose engine did not answer

    @property
    def ok(self) -> bool:
        return self.engine is not None

    @property
    def problem(self) -> str:
        """What is missing, in the words both doctor and --cluster=kind use."""
        if self.silent:
            return f"{self.silent} client found but no engine answers: {ALTERNATIVE}"
        return f"no container engine ({', '.join(ENGINES)}) on PATH: {ALTERNATIVE}"


def _answers(binary: str) -> bool:
    try:
        info = subprocess.run([binary, "info"], capture_output=True, text=True,
                              timeout=ANSWER_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return info.returncode == 0


# Run before an engine is looked for: the managed engine (`aftershock engine up`) registers
# one that points this process's clients at it when it runs and DOCKER_HOST names no other.
BEFORE_ASK: list[Callable[[], None]] = []


def ask(path: str | None = None) -> EngineAnswer:
    """The first engine on ``path`` (default: PATH) whose `info` succeeds, after every hook of
    ``BEFORE_ASK`` ran."""
    for hook in BEFORE_ASK:
        hook()
    silent = None
    for engine in ENGINES:
        binary = shutil.which(engine, path=path)
        if not binary:
            continue
        if _answers(binary):
            return EngineAnswer(engine=engine)
        silent = silent or engine
    return EngineAnswer(silent=silent)


def require(path: str | None = None) -> str:
    """The engine kind will use; a one-line UserError (exit 2) when none answers."""
    answer = ask(path)
    if not answer.ok:
        raise UserError(f"--cluster=kind needs a container engine: {answer.problem}")
    assert answer.engine is not None
    return answer.engine
