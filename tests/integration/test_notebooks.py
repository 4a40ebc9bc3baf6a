"""The notebooks run top to bottom on a fresh kernel against the embedded cluster, and their
HTML exports show the timeline plots; a scenario authored with %%scenario and saved with
%scenario save passes under pytest; a kernel interrupt during a delayed watch leaves no proxy
and no fault active."""

from __future__ import annotations

import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aftershock.notebook.execute import execute
from aftershock.providers import processes, toolchain

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SHAPE = "clusters/three-nodes.yaml"
pytestmark = pytest.mark.cluster


@pytest.fixture
def exports(aftershock_run_dir: Path) -> Path:
    """Executed notebooks go to the run's report dir; what a kernel left is cleaned after."""
    yield aftershock_run_dir / "notebooks"
    processes.gc()


def _plots(html: Path) -> int:
    return html.read_text().count("data:image/png;base64,")


def test_drain_and_watch_runs_and_its_saved_scenario_passes_under_pytest(exports: Path):
    saved = REPO / "reports" / f"notebook-saved-{int(time.time() * 1000)}.feature"
    try:
        _, html = execute(NOTEBOOKS / "01-drain-and-watch.ipynb", exports,
                          {"shape": SHAPE, "saved": str(saved)}, cwd=REPO)
        assert _plots(html) >= 3, "a timeline after each %%scenario cell and session.plot()"
        assert "Scenario: A drained pod is replaced elsewhere" in saved.read_text()
        result = subprocess.run([sys.executable, "-m", "pytest", str(saved), "-q",
                                 "-p", "no:cacheprovider"], cwd=REPO, capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-3000:]
        assert "1 passed" in result.stdout
    finally:
        saved.unlink(missing_ok=True)


def test_stale_cache_shows_the_faulty_operator_double_creating(exports: Path):
    executed, html = execute(NOTEBOOKS / "02-stale-cache.ipynb", exports, {"shape": SHAPE},
                             cwd=REPO)
    text = executed.read_text()
    assert "R1: VIOLATED" in text, "the faulty operator's witness is printed"
    assert _plots(html) >= 2, "both timelines"


def test_conformance_matrix_explores_a_finished_run(exports: Path, finished_run: Path):
    executed, html = execute(NOTEBOOKS / "03-conformance-matrix.ipynb", exports,
                             {"run_dir": str(finished_run)}, cwd=REPO)
    version = f"v{toolchain.pinned_kubernetes()}"  # the matrix names the version it ran on
    assert f"| replicagroup-correct | {version} | violated |" in executed.read_text()
    assert _plots(html) >= 1


def _run(client, code: str, timeout: float = 300) -> list[dict]:
    """Execute code in the kernel; the iopub messages it produced."""
    return _until_idle(client, client.execute(code), timeout)


def _until_idle(client, msg_id: str, timeout: float = 300) -> list[dict]:
    messages = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = client.get_iopub_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return messages
    raise AssertionError(f"kernel did not finish request {msg_id}")


def _text(messages: list[dict]) -> str:
    parts = []
    for message in messages:
        content = message["content"]
        parts.append(content.get("text", ""))
        parts.append(str((content.get("data") or {}).get("text/plain", "")))
        parts.append(str((content.get("data") or {}).get("text/markdown", "")))
        parts.append(content.get("evalue", ""))
    return "\n".join(parts)


def test_a_kernel_interrupt_during_a_delayed_watch_leaves_no_proxy_and_no_fault():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(REPO))
    try:
        setup = _run(client, f"%load_ext aftershock.notebook\n"
                             f"%aftershock cluster up --shape {SHAPE}")
        assert "error" not in [m["msg_type"] for m in setup], _text(setup)
        msg_id = client.execute(
            "%%scenario\nGiven a Deployment web with 1 replicas\n"
            "When the pod watch of the controller manager is delayed by 2 seconds\n"
            "Then within 300 seconds 5 pods of web are Running")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # interrupt once the delay is in force
            try:
                message = client.get_iopub_msg(timeout=5)
            except queue.Empty:
                continue
            if (message["parent_header"].get("msg_id") == msg_id
                    and "delayed by 2 seconds` — passed" in _text([message])):
                break
        else:
            raise AssertionError("the delayed-watch step never reported")
        manager.interrupt_kernel()
        # The interrupted cell ends first (a request sent meanwhile would be aborted with it).
        ended = _until_idle(client, msg_id)
        assert "KeyboardInterrupt" in str([m["content"].get("ename") for m in ended])
        after = _text(_run(client, (
            "import threading\n"
            "print('faults', session.status()['active_faults'])\n"
            "print('proxies', [t.name for t in threading.enumerate() "
            "if t.name.startswith('watchdelay')])\n"
            "print('kcm', session.cluster.state.processes['kube-controller-manager'].command)")))
        assert "faults []" in after, after
        assert "proxies []" in after, after
        kcm = after.split("kcm", 1)[1]
        assert "proxy" not in kcm and "--kubeconfig=" in kcm, kcm
        _run(client, "%aftershock cluster down")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        processes.gc()
