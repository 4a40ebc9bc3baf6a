"""The loop that reads a file on each node: a copy stamped with the node's clock each time it
changed, a failed read said as such, and a copy still being written left out. Run here with
the machine's own sh (on kind it runs in the node's container)."""

import subprocess
import time
from types import SimpleNamespace

from aftershock.kube.manifests import daemonset_rolled_out
from aftershock.sut.node_state import END, MARK, NodeStateWatch, loop, parse


def _run_loop(path, changes) -> str:
    proc = subprocess.Popen(loop(str(path)), stdout=subprocess.PIPE, text=True)
    try:
        for change in changes:
            time.sleep(0.5)  # the loop reads every 0.2 s: each state is read at least once
            change()
        time.sleep(0.5)
    finally:
        proc.kill()
    return proc.communicate()[0]


def test_the_loop_writes_each_state_once_and_a_failed_read_as_an_error(tmp_path):
    path = tmp_path / "state"
    path.write_text('{"a": 1}\n')
    out = _run_loop(path, [lambda: path.write_text("two\nlines\n"),
                           lambda: path.write_text("two\nlines\n"),  # unchanged: no copy
                           path.unlink])
    copies = [line for line in parse("node-1", out) if not line.get("beat")]
    assert [c.get("text", c.get("error")) for c in copies][:2] == ['{"a": 1}', "two\nlines"]
    assert "No such file" in copies[2]["error"] and len(copies) == 3
    assert all(c["node"] == "node-1" for c in copies)
    assert copies[0]["time"] < copies[1]["time"] < copies[2]["time"] <= time.time()


def test_a_copy_still_being_written_is_left_out():
    whole = f"{MARK}100.5\n{{}}\n{END}\n"
    assert parse("n", whole + f"{MARK}101.0\n{{\"Data\": \"cut") == [
        {"time": 100.5, "node": "n", "text": "{}"}]
    assert parse("n", f"{MARK}102.0\n\n{END}\n") == [{"time": 102.0, "node": "n", "text": ""}]


def test_a_daemonset_is_rolled_out_when_every_node_runs_its_current_pod():
    done = {"metadata": {"generation": 2},
            "status": {"observedGeneration": 2, "desiredNumberScheduled": 3,
                       "currentNumberScheduled": 3, "updatedNumberScheduled": 3,
                       "numberAvailable": 3}}
    assert daemonset_rolled_out(done)
    for field, value in [("observedGeneration", 1), ("updatedNumberScheduled", 2),
                         ("numberAvailable", 2), ("numberMisscheduled", 1)]:
        assert not daemonset_rolled_out({**done, "status": {**done["status"], field: value}})
    stopped = {"metadata": {"generation": 3},
               "status": {"observedGeneration": 3, "desiredNumberScheduled": 0}}
    assert daemonset_rolled_out(stopped)


def test_stopping_ends_the_loop_where_it_runs_not_only_the_client(tmp_path):
    """Ending `docker exec` leaves its command running in the node: stop also ends the loop
    there, by the name it runs under. Here the 'node' is this machine (node_command runs the
    command as it is), and the loop is started in a process of its own that stays, as the
    node's would."""
    path = tmp_path / "state"
    path.write_text("{}")
    cluster = SimpleNamespace(node_command=lambda node, argv: (
        ["sh", "-c", '(setsid "$@" >/dev/null 2>&1 &); exec sleep 30', "x", *argv]
        if argv[0] == "sh" else argv))
    watch = NodeStateWatch(cluster, str(path), ["node-1"], tmp_path)
    watch.start()
    deadline = time.monotonic() + 10
    while not _running(watch.name) and time.monotonic() < deadline:
        time.sleep(0.1)  # the loop's start has no event to wait on
    assert _running(watch.name)
    watch.stop()
    deadline = time.monotonic() + 5  # a signalled process is gone a moment later, not at once
    while _running(watch.name) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(watch.name)


def _running(name: str) -> bool:
    found = subprocess.run(["pgrep", "-f", f"^sh -c .* {name} "], capture_output=True)
    return found.returncode == 0
