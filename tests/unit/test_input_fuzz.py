"""Bad input, fuzzed: mutated cluster shapes, profiles, features, workloads and kubeconfigs fed to
the loaders a user's files go through. Each either loads or is refused with one line that names
the file (and the line, where the file has lines to name); never a traceback, never a hang.

AFTERSHOCK_INPUT_FUZZ=N sets the examples per kind (benchmarks/fuzz_inputs.py runs many more
and prints the figures); `make test` runs a few hundred."""

from __future__ import annotations

import os
import random
import signal
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aftershock.errors import UserError

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("AFTERSHOCK_INPUT_FUZZ", "150"))
HANG = 10  # seconds: longer is a hang
NOISE = [":", "-", " ", "  ", "\t", "{", "}", "[", "]", '"', "'", "&a", "*a", "!!python/none",
         "%", "@", "#", "|", ">", "\\", "\x00", "é", "\u202e", "0", "-1", "1e309", "null",
         "true", "99999999999999999999", "${x}", "{name}", "<x>", "\n", "\r\n", "---\n"]
FIGURES: Counter[str] = Counter()
DISTINCT: dict[str, set[str]] = {}


def _seeds(pattern: str) -> list[str]:
    return [p.read_text() for p in sorted(REPO.glob(pattern))]


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: 'Zm9v'}
users:
- name: u
  user: {token: abc}
contexts:
- name: c
  context: {cluster: c, user: u, namespace: default}
current-context: c
"""


@st.composite
def mutated(draw, seeds: list[str]) -> str:
    """A seed file with a few edits: lines deleted, duplicated, swapped, re-indented, cut,
    characters replaced by YAML's and Gherkin's punctuation and by odd values."""
    text = draw(st.sampled_from(seeds))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    for _ in range(draw(st.integers(1, 4))):
        lines = text.splitlines(keepends=True) or [""]
        at = rng.randrange(len(lines))
        edit = rng.randrange(7)
        if edit == 0:
            del lines[at]
        elif edit == 1:
            lines.insert(at, lines[at])
        elif edit == 2:
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        elif edit == 3:
            lines[at] = " " * rng.randrange(7) + lines[at].lstrip()
        elif edit == 4:
            lines = [*lines[:at], lines[at][:rng.randrange(len(lines[at]) + 1)]]
        else:
            line = lines[at]
            spot = rng.randrange(len(line) + 1)
            lines[at] = line[:spot] + rng.choice(NOISE) + line[spot + rng.randrange(3):]
        text = "".join(lines)
    return text


def _load_shape(path: Path) -> None:
    from aftershock.machine.shape import load_shape

    load_shape(path)


def _load_profile(path: Path) -> None:
    from aftershock.profile.load import load_profile

    load_profile(path)


def _check_feature(path: Path) -> None:
    from aftershock.features import check_steps

    check_steps(path)


def _load_workload(path: Path) -> None:
    from aftershock.explore.workload import load

    load(path)


def _open_kubeconfig(path: Path) -> None:
    from aftershock.providers.existing import open_existing

    open_existing(str(path), None, [])


KINDS = {
    # kind: (seeds, file name, loader)
    "shape": (_seeds("clusters/*.yaml"), "shape.yaml", _load_shape),
    "profile": (_seeds("profiles/*.yaml"), "profile.yaml", _load_profile),
    "feature": (_seeds("features/*/*.feature"), "x.feature", _check_feature),
    "workload": (_seeds("workloads/*.steps"), "w.steps", _load_workload),
    "kubeconfig": ([KUBECONFIG], "kubeconfig", _open_kubeconfig),
}


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _feed(kind: str, text: str, directory: Path) -> None:
    _, name, loader = KINDS[kind]
    path = directory / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    if kind == "profile":  # relative paths in a profile resolve beside it: the repo's layout
        path = REPO / "profiles" / f".fuzz-{os.getpid()}.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    FIGURES[f"{kind} inputs"] += 1
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG)
    try:
        loader(path)
        FIGURES[f"{kind} loaded"] += 1
    except UserError as refused:
        message = str(refused)
        assert "\n" not in message.strip(), f"{kind}: not one line: {message!r}"
        named = Path(refused.path or "").resolve()
        assert named == path.resolve() and message.startswith(refused.path), \
            f"{kind}: does not name the file: {message!r}"
        FIGURES[f"{kind} refused"] += 1
        assert refused.line, f"{kind}: names no line: {message!r}"
        FIGURES[f"{kind} refused at a line"] += 1
        DISTINCT.setdefault(kind, set()).add(refused.detail.split("'")[0][:40])
    except Hang:
        pytest.fail(f"{kind}: a hang of {HANG}s on:\n{text}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if kind == "profile":
            path.unlink(missing_ok=True)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_mutated_input_loads_or_is_refused_in_one_line_naming_its_file(kind, tmp_path):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(mutated(KINDS[kind][0]))
    def run(text: str) -> None:
        _feed(kind, text, tmp_path)

    run()
    refused = FIGURES[f"{kind} refused"]
    assert refused, f"the fuzz of {kind} refused nothing: it tests nothing"
    print(f"{kind}: {FIGURES[f'{kind} inputs']} inputs, {FIGURES[f'{kind} loaded']} loaded, "
          f"{refused} refused ({FIGURES[f'{kind} refused at a line']} at a line), "
          f"{len(DISTINCT.get(kind, ()))} distinct refusals")


CLI = {
    # kind: the command with {path} for the mutated file; --collect-only: nothing starts
    "shape": ["run", "features/harness/smoke.feature", "--shape", "{path}"],
    "profile": ["run", "features/operator/replica_group_stale_cache.feature", "--profile",
                "{path}"],
    "feature": ["run", "{path}"],
    "kubeconfig": ["run", "features/harness/smoke.feature", "--cluster=existing",
                   "--kubeconfig", "{path}"],
}
CLI_EXAMPLES = int(os.environ.get("AFTERSHOCK_CLI_FUZZ", "3"))


def cli_feed(kind: str, text: str, directory: Path) -> str:
    """One mutated file through `aftershock run --collect-only`: what the command printed
    when it refused it ('' when it took it)."""
    import subprocess
    import sys

    _, name, _ = KINDS[kind]
    path = (REPO / "profiles" / f".fuzz-cli-{os.getpid()}.yaml" if kind == "profile"
            else directory / name)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        command = [part.replace("{path}", str(path)) for part in CLI[kind]]
        out = subprocess.run([sys.executable, "-m", "aftershock.cli", *command, "--collect-only",
                              "-q", "-p", "no:cacheprovider"], cwd=REPO, capture_output=True,
                             text=True, timeout=120)
    finally:
        if kind == "profile":
            path.unlink(missing_ok=True)
    said = out.stdout + out.stderr
    assert "Traceback" not in said, f"{kind}: a traceback for:\n{text}\n{said}"
    if out.returncode in (0, 5):
        return ""
    assert out.returncode in (1, 2, 4), f"{kind}: exit {out.returncode}:\n{said}"
    refusal = [line for line in said.splitlines()
               if path.name in line and "error" in line.lower()]
    assert refusal, f"{kind}: refused without naming the file:\n{said}"
    return refusal[0]


@pytest.mark.parametrize("kind", sorted(CLI))
def test_the_command_line_refuses_a_mutated_file_without_a_traceback(kind, tmp_path):
    @settings(max_examples=CLI_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(mutated(KINDS[kind][0]))
    def run(text: str) -> None:
        cli_feed(kind, text, tmp_path)

    run()
