"""What each node shows of a file, read on the node itself over a scenario: one loop per node
(run there, through the provider's ``node_command``) reads the file every READ_SECONDS and
writes a copy, stamped with the node's own clock, whenever it changed, and a heartbeat when
nothing changed for a while (`node_reads`). The loops are processes the harness started,
recorded with the cluster (so `cluster gc` ends them if the run was killed). Ending the client
does not end what it runs on the node, so stopping also ends each loop there, by the name it
runs under; a loop ends by itself after MAX_SECONDS anyway.

A DRA driver is judged from what its nodes' kubelets checkpointed (`dra.KUBELET_DRA_STATE`),
never from what the driver says of itself."""

from __future__ import annotations

import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.providers import processes
from aftershock.sut.node_reads import END, MARK, loop, parse

__all__ = ["END", "MARK", "NodeStateWatch", "loop", "parse"]


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
            self.add(node)

    def add(self, node: str) -> None:
        """A loop on ``node`` too (a node that joined after the start); none if it has one."""
        if node in self.records:
            return
        _, record = processes.spawn(f"node-state-{node}",
                                    self.cluster.node_command(node, loop(self.path, self.name)),
                                    self._log(node))
        self.records[node] = record
        if self.state is not None:
            processes.adopt(self.state, record.name, record)

    def _log(self, node: str) -> Path:
        return self.workdir / f"node-state-{node}.log"

    def snapshots(self) -> list[dict[str, Any]]:
        """Every line so far (copies and heartbeats), and for each node when they were taken:
        {"time", "node", "taken": True} for a loop still running (a loop silent since long
        before then had stalled), or a failure for a loop that is no longer running (its node
        stopped, or the loop could not start): from then on, that node was not seen. The
        moment is this machine's clock, the nodes' own on kind (containers of its kernel)."""
        found: list[dict[str, Any]] = []
        for node, record in self.records.items():
            taken = time.time()  # before the log is read: every line up to it is in there
            log = self._log(node)
            text = log.read_text(errors="replace") if log.exists() else ""
            found += parse(node, text)
            if record.alive():
                found.append({"time": taken, "node": node, "taken": True})
            else:
                last = text.strip().splitlines()[-1:] if text.strip() else ["no output"]
                found.append({"time": taken, "node": node,
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
