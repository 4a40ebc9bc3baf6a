"""The notebooks run top to bottom on a fresh kernel started in notebooks/ (as JupyterLab and
nbconvert start it) against the embedded cluster, and their HTML exports show the timeline
plots; a scenario authored with %%scenario and saved with %scenario save passes under pytest; a
kernel interrupt during a delayed watch leaves no proxy and no fault active; `aftershock
notebook` serves JupyterLab on the project; a misspelt step is one ✘ line; a cell run again
replaces its steps, and a save after a failed step leaves it out, saying so."""

from __future__ import annotations

import contextlib
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aftershock.go import toolchain
from aftershock.notebook.execute import execute
from aftershock.providers import clusters

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SHAPE = "clusters/three-nodes.yaml"
pytestmark = pytest.mark.cluster


@pytest.fixture
def exports(aftershock_run_dir: Path) -> Path:
    """Executed notebooks go to the run's report dir; what a kernel left is cleaned after."""
    yield aftershock_run_dir / "notebooks"
    clusters.gc()


def _plots(html: Path) -> int:
    return html.read_text().count("data:image/png;base64,")


def test_drain_and_watch_runs_and_its_saved_scenario_passes_under_pytest(exports: Path):
    saved = REPO / "reports" / f"notebook-saved-{int(time.time() * 1000)}.feature"
    try:
        _, html = execute(NOTEBOOKS / "01-drain-and-watch.ipynb", exports,
                          {"shape": SHAPE, "saved": str(saved)}, cwd=NOTEBOOKS)
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
                             cwd=NOTEBOOKS)
    text = executed.read_text()
    assert "R1: VIOLATED" in text, "the faulty operator's witness is printed"
    import nbformat

    printed = "".join(str(o.get("text", "")) for o in _outputs(nbformat.reads(text, 4)))
    assert printed.count("witness (") == 1, "and printed once"
    assert _plots(html) >= 2, "both timelines"


def test_conformance_matrix_explores_a_finished_run(exports: Path, finished_run: Path):
    executed, html = execute(NOTEBOOKS / "03-conformance-matrix.ipynb", exports,
                             {"run_dir": str(finished_run)}, cwd=NOTEBOOKS)
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
        clusters.gc()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_notebook_command_serves_jupyterlab_on_the_project():
    """`aftershock notebook`, started inside notebooks/, serves the project: the server answers,
    lists the notebooks and starts a kernel for one."""
    import json
    import threading
    import urllib.error
    import urllib.request

    port, token = _free_port(), "aftershock-test"
    server = subprocess.Popen(
        [sys.executable, "-m", "aftershock.cli", "notebook", "--port", str(port), "--no-browser",
         f"--IdentityProvider.token={token}"], cwd=NOTEBOOKS, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stdout],
                     daemon=True).start()
    try:
        seen, deadline = [], time.monotonic() + 120
        while not any("is running at" in line for line in seen[:-1]):  # its address follows
            assert time.monotonic() < deadline and server.poll() is None, "".join(seen)
            with contextlib.suppress(queue.Empty):
                seen.append(lines.get(timeout=5))
        base = f"http://127.0.0.1:{port}"

        def call(path: str, body: dict | None = None) -> dict:
            request = urllib.request.Request(
                f"{base}{path}?token={token}", method="POST" if body else "GET",
                data=json.dumps(body).encode() if body else None,
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.loads(answer.read())

        listed = None
        while listed is None:  # its address is logged a moment before it listens there
            try:
                listed = call("/api/contents/notebooks")
            except urllib.error.URLError:
                assert time.monotonic() < deadline and server.poll() is None, "".join(seen)
                with contextlib.suppress(queue.Empty):  # what it logs meanwhile, kept
                    seen.append(lines.get(timeout=0.5))
        assert {"01-drain-and-watch.ipynb", "02-stale-cache.ipynb",
                "03-conformance-matrix.ipynb"} <= {c["name"] for c in listed["content"]}
        started = call("/api/sessions", {"path": "notebooks/01-drain-and-watch.ipynb",
                                         "type": "notebook", "kernel": {"name": "python3"}})
        assert started["kernel"]["name"] == "python3"
        with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=30) as page:
            assert page.status == 200 and b"JupyterLab" in page.read()
    finally:
        server.terminate()
        server.wait(timeout=60)


def _outputs(book) -> list[dict]:
    return [output for cell in book.cells if cell.cell_type == "code"
            for output in cell.get("outputs", [])]


def test_a_misspelt_step_is_one_line_and_no_traceback(tmp_path):
    """Every step of a cell is checked before any runs (no cluster is needed for that); the
    error is one ✘ line with the closest steps, and the cell ends as an error."""
    import nbformat
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    book = new_notebook(cells=[
        new_code_cell("%load_ext aftershock.notebook"),
        new_code_cell("%%scenario\nGiven a Deployment web with 1 replicas\n"
                      "When I drian node node-1")])
    NotebookClient(book, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    nbformat.write(book, tmp_path / "misspelt.ipynb")
    errors = [o for o in _outputs(book) if o["output_type"] == "error"]
    assert len(errors) == 1, _outputs(book)
    assert errors[0]["traceback"] == [
        "✘ unknown step 'When I drian node node-1'; closest known steps: "
        + errors[0]["traceback"][0].split("closest known steps: ", 1)[1]]
    assert "'I drain node <node>'" in errors[0]["traceback"][0]
    shown = (tmp_path / "misspelt.ipynb").read_text()
    assert "Traceback" not in shown and "---->" not in shown
    assert "the project `" in shown  # the kernel, started in notebooks/, works from the root


def test_a_cell_run_again_replaces_its_steps_and_save_leaves_out_a_failed_one(tmp_path):
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(NOTEBOOKS))
    cell = ("%%scenario\nGiven a Deployment web with 1 replicas\n"
            "Then within 2 seconds 3 pods of web are Running")
    saved = tmp_path / "saved.feature"
    try:
        setup = _run(client, f"%load_ext aftershock.notebook\n"
                             f"%aftershock cluster up --shape {SHAPE}")
        assert "error" not in [m["msg_type"] for m in setup], _text(setup)
        first = _text(_run(client, cell))
        assert first.count("witness (") == 1, first  # shown with its step, once
        again = _text(_run(client, cell))
        assert "this cell ran before: its 2 steps are replaced" in again, again
        assert "already exists" in again  # the cluster kept what the first run made
        steps = _text(_run(client, "%scenario steps"))
        assert steps.count("Deployment web") == 1 and "failed" in steps, steps
        nothing = _text(_run(client, f'%scenario save {saved} "Nothing"'))
        assert "nothing to save for scenario 'Nothing': left out 1" in nothing, nothing
        _run(client, "%%scenario\nThen within 2 seconds 3 pods of web are Running")
        saving = _text(_run(client, f'%scenario save {saved} "Saved after a failure"'))
        assert "saved 1 steps" in saving and "left out 1" in saving, saving
        assert "Given a Deployment web with 1 replicas (failed)" in saving
        assert "Deployment web" not in saved.read_text()
        assert "Then within 2 seconds 3 pods of web are Running" in saved.read_text()
        _run(client, "%aftershock cluster down")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        clusters.gc()
