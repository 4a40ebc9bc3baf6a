"""An implementation of more than one process (KAI-scheduler: its scheduler and its binder):
its companions start before it with its placeholders, write to its log, and stop with it; a
companion that dies is named while it is awaited."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aftershock.profile.load import Companion, Profile, Start
from aftershock.sut.runner import Implementation


def _implementation(tmp_path: Path, companion: tuple[str, ...]) -> Implementation:
    # The main program says it is ready once the companion has said its line (a marker file):
    # under load the companion's interpreter can start after the main one is ready and stopped.
    said = tmp_path / "companion-said"
    start = Start(command=(sys.executable, "-c", "import os, time\n"
                           f"while not os.path.exists({str(said)!r}): time.sleep(0.05)\n"
                           "print('main ready', flush=True); time.sleep(60)"),
                  ready_log="main ready", ready_timeout=20, stop_grace=2,
                  companions=(Companion("binder", companion, {"WHO": "{namespace}"}),))
    profile = Profile("acme", tmp_path / "p.yaml", (), (), start, (), (), {})
    return Implementation(profile, api=None, namespace="ns", workdir=tmp_path, server="",
                          ca_data="")


def test_a_companion_starts_before_and_stops_with_the_implementation(tmp_path):
    implementation = _implementation(tmp_path, (
        sys.executable, "-c", "import os, time; print('binder of', os.environ['WHO'], "
        f"flush=True); open({str(tmp_path / 'companion-said')!r}, 'w').close(); "
        "time.sleep(60)"))
    implementation.start(tmp_path / "kubeconfig")
    try:
        assert len(implementation.records) == 2
        assert all(record.alive() for record in implementation.records)
    finally:
        records = implementation.records
        implementation.stop()
    assert not any(record.alive() for record in records)
    assert implementation.records == []
    log = implementation.log.read_text()
    assert "binder of ns" in log and "main ready" in log


def test_a_companion_that_exits_is_named(tmp_path):
    implementation = _implementation(tmp_path, (sys.executable, "-c", "raise SystemExit(3)"))
    start = implementation.profile.start
    implementation.profile = Profile(  # a main process that never says it is ready
        "acme", tmp_path / "p.yaml", (), (), Start(
            command=(sys.executable, "-c", "import time; time.sleep(60)"), ready_log="never",
            ready_timeout=20, stop_grace=2, companions=start.companions), (), (), {})
    try:
        with pytest.raises(RuntimeError, match=r"^acme-binder exited with 3"):
            implementation.start(tmp_path / "kubeconfig")
    finally:
        implementation.stop()
