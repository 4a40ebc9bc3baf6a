"""Lint the GitHub Actions workflows with actionlint, built once from its Go module into the
cache (outside the repo): ``.venv/bin/python -m tests.lint_workflows``. Exit code: actionlint's
(0 when every workflow passes), 2 when it cannot be built."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from aftershock.machine.cache import cache_root

ACTIONLINT_MODULE = "github.com/rhysd/actionlint/cmd/actionlint"
ACTIONLINT_VERSION = "v1.7.12"
REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"


def actionlint_path() -> Path:
    return cache_root() / "bin" / "tools" / f"actionlint-{ACTIONLINT_VERSION}" / "actionlint"


def build_command() -> list[str]:
    return ["go", "install", f"{ACTIONLINT_MODULE}@{ACTIONLINT_VERSION}"]


def build() -> Path:
    """go install into a temp dir, renamed when complete."""
    target = actionlint_path()
    if target.is_file():
        return target
    scratch = cache_root() / "bin" / f".tmp-actionlint-{ACTIONLINT_VERSION}-pid{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    env = {**os.environ, "GOBIN": str(scratch), "CGO_ENABLED": "0"}
    built = subprocess.run(build_command(), env=env, capture_output=True, text=True)
    if built.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise RuntimeError(f"{' '.join(build_command())} failed:\n{built.stderr.strip()}")
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    scratch.rename(target.parent)
    return target


def lint_command(actionlint: Path) -> list[str]:
    # shellcheck and pyflakes are used when on PATH; the workflows are checked either way.
    return [str(actionlint), "-no-color", *map(str, sorted(WORKFLOWS.glob("*.yml")))]


def main() -> int:
    try:
        actionlint = build()
    except (RuntimeError, OSError) as exc:
        print(f"lint_workflows: cannot build actionlint: {exc}", file=sys.stderr)
        return 2
    return subprocess.run(lint_command(actionlint), cwd=REPO).returncode


if __name__ == "__main__":
    sys.exit(main())
