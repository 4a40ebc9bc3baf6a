"""`aftershock run FEATURES --kubernetes-version 1.35.4,1.36.3,1.37.2`: the same run on each
version, one after another, each a child `aftershock run` with a cluster of its own and a run
dir under the run dir (`k8s-v1.35.4/`), joined by `aftershock merge` into one matrix whose
lines name the version. Each child builds what its version needs (the toolchain, a kind node
image) the first time, with progress, under its `[v1.35.4]` prefix."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from aftershock.errors import UserError
from aftershock.go import toolchain
from aftershock.providers.base import PROVIDERS
from aftershock.runs import workers
from aftershock.runs.merge import merge

OPTION = "--kubernetes-version"


def listed(value: str | None) -> list[str] | None:
    """The versions of a list (`1.35.4,1.37.2`), normalised and each once; None for one."""
    if value is None or "," not in value:
        return None
    versions: list[str] = []
    for part in value.split(","):
        if not part.strip():
            raise UserError(f"{OPTION} {value}: an empty version in the list")
        version = toolchain.normalise_kubernetes(part)
        if version not in versions:
            versions.append(version)
    return versions


def run_dir(run: Path, version: str) -> Path:
    return run / f"k8s-v{version}"


def refuse_existing(provider: str) -> None:
    """A list of versions for a provider that opens its cluster as found; a provider not
    registered yet (a project's own, imported by its conftest.py) is left to its run."""
    if provider in PROVIDERS and PROVIDERS[provider].as_found:
        raise UserError(f"{OPTION} chooses the versions of clusters aftershock starts; a "
                        f"cluster the {provider} provider opens as found runs the version it "
                        "runs")


def run_across(versions: list[str], command: Callable[[str, Path], list[str]], run: Path,
               say: Callable[[str], None]) -> list[int]:
    """Each version's run in turn (its output under a `[v1.35.4]` prefix), then one matrix."""
    codes = []
    for index, version in enumerate(versions, start=1):
        say(f"aftershock: Kubernetes v{version} ({index} of {len(versions)})")
        codes.append(_run_one(command(version, run_dir(run, version)), f"[v{version}] ", say))
    ran = [run_dir(run, v) for v in versions if run_dir(run, v).is_dir()]
    if ran:
        merge(ran, run)
    return codes


def _run_one(argv: list[str], prefix: str, say: Callable[[str], None]) -> int:
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True, bufsize=1,
                             preexec_fn=workers.die_with_parent,
                             env=workers.child_environment())
    try:
        workers.relay(child, prefix, say)
        return child.wait()
    except KeyboardInterrupt:  # the terminal's Ctrl-C reached the child too: let it clean up
        child.wait()
        raise
