"""What each node shows of a file, read on the node itself over a scenario: one loop per node
(run there, through the provider's ``node_command``) reads the file every READ_SECONDS and
writes a copy, stamped with the node's own clock, whenever it changed. The loops are processes
the harness started, recorded with the cluster (so `cluster gc` ends them if the run was
killed). Ending the client does not end what it runs on the node, so stopping also ends each
loop there, by the name it runs under; a loop ends by itself after MAX_SECONDS anyway.

A DRA driver is judged from what its nodes' kubelets checkpointed (`dra.KUBELET_DRA_STATE`),
never from what the driver says of itself."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.providers import processes

READ_SECONDS = 0.2
MAX_SECONDS = 3 * 3600  # no scenario runs longer; a loop orphaned on a kept node ends by then
MARK = "@@aftershock-read "
FAILED = "@@aftershock-failed "
END = "@@aftershock-end"


def loop(path: str, name: str = "aftershock-node-state") -> list[str]:
    """The loop run on a node: a copy of ``path`` after a MARK line with the node's time each
    time it changed (a FAILED line with the error when it could not be read), then END."""
    script = (f'end=$(( $(date +%s) + {MAX_SECONDS} )); old=""; '
              f'while [ "$(date +%s)" -lt "$end" ]; do t=$(date +%s.%N); '
              f'if new=$(cat "$1" 2>&1); then mark="{MARK}"; else mark="{FAILED}"; fi; '
              f'if [ "$mark$new" != "$old" ]; then '
              f'printf "%s%s\\n%s\\n{END}\\n" "$mark" "$t" "$new"; old="$mark$new"; fi; '
              f'sleep {READ_SECONDS}; done')
    return ["sh", "-c", script, name, path]


COPY = re.compile(rf"^({re.escape(MARK)}|{re.escape(FAILED)})(\d+\.\d+)\n(.*?)\n"
                  rf"{re.escape(END)}$", re.M | re.S)


def parse(node: str, text: str) -> list[dict[str, Any]]:
    """The copies one loop wrote: {"time", "node", "text"} each, or "error" for a failed read.
    A copy still being written (no END yet) is left out."""
    copies = []
    for found in COPY.finditer(text):
        copy: dict[str, Any] = {"time": float(found.group(2)), "node": node}
        copy["text" if found.group(1) == MARK else "error"] = found.group(3)
        copies.append(copy)
    return copies


@dataclass
class NodeStateWatch:
    """The loops over one file on each of ``nodes``."""

    cluster: Any  # a provider with node_command (capability node_files)
    path: str
    nodes: list[str]
    workdir: Path
    state: processes.ClusterState | None = None
    records: dict[str, processes.ProcessRecord] = field(default_factory=dict)
    # the name the loops run under on the nodes ($0 of their shell), to end them there
    name: str = field(default_factory=lambda: f"aftershock-node-state-{uuid.uuid4().hex[:12]}")

    def start(self) -> None:
        for node in self.nodes:
            _, record = processes.spawn(f"node-state-{node}",
                                        self.cluster.node_command(node,
                                                                  loop(self.path, self.name)),
                                        self._log(node))
            self.records[node] = record
            if self.state is not None:
                processes.adopt(self.state, record.name, record)

    def _log(self, node: str) -> Path:
        return self.workdir / f"node-state-{node}.log"

    def snapshots(self) -> list[dict[str, Any]]:
        """Every copy so far, and a failure for a node whose loop is no longer running (its
        node stopped, or the loop could not start): from then on, that node was not seen."""
        found: list[dict[str, Any]] = []
        for node, record in self.records.items():
            log = self._log(node)
            text = log.read_text(errors="replace") if log.exists() else ""
            found += parse(node, text)
            if not record.alive():
                last = text.strip().splitlines()[-1:] if text.strip() else ["no output"]
                found.append({"time": time.time(), "node": node,
                              "error": f"its read loop ended ({last[0][:200]})"})
        return found

    def stop(self) -> None:
        for node in self.records:  # a node that is down has no loop left to end
            subprocess.run(self.cluster.node_command(node, ["pkill", "-f", self.name]),
                           capture_output=True, timeout=30, check=False)
        records = list(self.records.values())
        processes.terminate(records, grace=2)
        if self.state is not None:
            for record in records:
                processes.release(self.state, record.name)
        self.records.clear()
