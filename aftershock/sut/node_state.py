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

from aftershock.concepts.node_reads import END, MARK, loop, parse
from aftershock.machine import processes

__all__ = ["END", "MARK", "NodeStateWatch", "loop", "parse"]


@dataclass
class NodeStateWatch:
    """The loops over one file on each of ``nodes``."""

    cluster: Any  # a provider with node_command (capability node_files)
    path: str
    nodes: list[str]
    workdir: Path
    state: processes.ClusterState | None = None
    read: str | None = None  # a shell command whose output is read instead of ``path``
    label: str = "node-state"  # names its loops' records and logs (two watches, one workdir)
    records: dict[str, processes.ProcessRecord] = field(default_factory=dict)
    ended: list[tuple[str, processes.ProcessRecord]] = field(default_factory=list)
    # the name the loops run under on the nodes ($0 of their shell), to end them there
    name: str = field(default_factory=lambda: f"aftershock-node-state-{uuid.uuid4().hex[:12]}")

    def start(self) -> None:
        for node in self.nodes:
            self.add(node)

    def add(self, node: str) -> None:
        """A loop on ``node`` too (a node that joined after the start); none if it has one."""
        if node in self.records:
            return
        self._spawn(node)

    def resume(self, node: str) -> None:
        """A new loop on ``node``, its last one ended (the node rebooted, and the loop with it):
        the silence between the two is a stretch nobody saw, as any silence is."""
        record = self.records.pop(node, None)
        if record is not None:
            processes.terminate([record], grace=2)
            self.ended.append((node, record))
        self._spawn(node)

    def _spawn(self, node: str) -> None:
        _, record = processes.spawn(f"{self.label}-{node}-{self._loops(node)}",
                                    self.cluster.node_command(
                                        node, loop(self.path, self.name, self.read)),
                                    self._log(node, self._loops(node)))
        self.records[node] = record
        if self.state is not None:
            processes.adopt(self.state, record.name, record)

    def _loops(self, node: str) -> int:
        """How many loops ``node`` had before (its next loop's number)."""
        return sum(1 for name, _ in self.ended if name == node)

    def _log(self, node: str, number: int = 0) -> Path:
        return self.workdir / f"{self.label}-{node}{f'-{number}' if number else ''}.log"

    def snapshots(self) -> list[dict[str, Any]]:
        """Every line so far (copies and heartbeats), and for each node when they were taken:
        {"time", "node", "taken": True} for a loop still running (a loop silent since long
        before then had stalled), or a failure for a loop that is no longer running (its node
        stopped, or the loop could not start): from then on, that node was not seen. The
        lines of a node's earlier loops (before it rebooted) come too. The moment is this
        machine's clock, the nodes' own on kind (containers of its kernel)."""
        found: list[dict[str, Any]] = []
        for node in sorted({node for node, _ in self.ended}):
            for number in range(self._loops(node)):
                found += self._lines(node, self._log(node, number))
        for node, record in self.records.items():
            taken = time.time()  # before the log is read: every line up to it is in there
            log = self._log(node, self._loops(node))
            text = log.read_text(errors="replace") if log.exists() else ""
            found += parse(node, text)
            if record.alive():
                found.append({"time": taken, "node": node, "taken": True})
            else:
                last = text.strip().splitlines()[-1:] if text.strip() else ["no output"]
                found.append({"time": taken, "node": node,
                              "error": f"its read loop ended ({last[0][:200]})"})
        return found

    @staticmethod
    def _lines(node: str, log: Path) -> list[dict[str, Any]]:
        return parse(node, log.read_text(errors="replace")) if log.exists() else []

    def stop(self) -> None:
        for node in self.records:  # a node that is down has no loop left to end
            subprocess.run(self.cluster.node_command(node, ["pkill", "-f", self.name]),
                           capture_output=True, timeout=30, check=False)
        records = [*self.records.values(), *(record for _, record in self.ended)]
        processes.terminate(records, grace=2)
        if self.state is not None:
            for record in records:
                processes.release(self.state, record.name)
        self.records.clear()
        self.ended.clear()
