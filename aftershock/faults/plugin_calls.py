"""Faults timed inside a DRA driver's plugin call: the kubelet of one node reaches the plugin
through aftershock's proxy (``data/draproxy``, a Go program built here and copied onto the
node, registered there as a newer instance of the driver's plugin), which can hold the
plugin's answer to one NodePrepareResources or NodeUnprepareResources call while the node's
kubelet stops or restarts, so that the kubelet goes without it, as a kubelet that restarts
between a Prepare and its checkpoint does (kubernetes/kubernetes#116411). Needs real kubelets
(capability node_agent: kind's)."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.go import builds
from aftershock.machine import processes

DRAPROXY = builds.LocalBuild(Path(__file__).parent / "data" / "draproxy", binary="draproxy")
ON_NODE = "/usr/local/bin/aftershock-draproxy"
ARM_FILE = "/run/aftershock-draproxy-arm"
ACTIONS = {"stop": "stopped", "restart": "restarted"}
READY_SECONDS = 30  # for the proxy to find the plugin and for the kubelet to register it
STOP_SECONDS = 10


class ProxyFailed(Exception):
    """The proxy could not be put between the kubelet and the plugin (nothing was changed)."""


@dataclass(frozen=True)
class ProxyLine:
    """One line the proxy wrote: the node's clock (this machine's, on kind), what happened
    ("serving", "registered", "call", "answered", "held", "kubelet", "dropped", "released",
    "gone", "error") and its fields."""

    time: float
    event: str
    fields: dict[str, str]


def parse(text: str) -> list[ProxyLine]:
    lines = []
    for raw in text.splitlines():
        parts = raw.split(" ")
        try:
            moment = float(parts[0])
        except ValueError:
            continue  # not one of its lines (the engine's own words about the exec)
        if len(parts) < 2:
            continue
        fields = dict(part.split("=", 1) for part in parts[2:] if "=" in part)
        if parts[1] == "error":
            fields = {"error": " ".join(parts[2:])}
        lines.append(ProxyLine(moment, parts[1], fields))
    return lines


@dataclass
class PluginProxied:
    """The kubelet of ``node`` reaches ``driver``'s plugin through the proxy: applying copies
    it onto the node and starts it; it registers with the kubelet as a newer instance of the
    plugin (the kubelet calls the newest it is connected to, or with none connected the newest:
    put in place before the kubelet calls the plugin, or beside a plugin whose health stream
    connects both, it gets every call). Reverting stops it: its registration goes, and the
    kubelet calls the plugin's own again."""

    cluster: Any  # a provider with node_command and copy_to_node
    node: str
    driver: str
    log: Path
    state: processes.ClusterState | None = None
    record: processes.ProcessRecord | None = field(default=None, init=False)

    @property
    def description(self) -> str:
        return f"the kubelet of node/{self.node} calls the plugin of {self.driver} through a proxy"

    def apply(self) -> None:
        binary = builds.ensure(DRAPROXY)
        self.cluster.copy_to_node(self.node, binary, ON_NODE)
        offset = self.log.stat().st_size if self.log.exists() else 0
        proc, self.record = processes.spawn(
            f"draproxy-{self.node}", self.cluster.node_command(
                self.node, [ON_NODE, "-driver", self.driver, "-arm", ARM_FILE]), self.log)
        if self.state is not None:
            processes.adopt(self.state, self.record.name, self.record)
        self._wait_registered(proc, offset)

    def _wait_registered(self, proc: subprocess.Popen, offset: int) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            said = parse(self.log.read_bytes()[offset:].decode(errors="replace"))
            errors = [line.fields["error"] for line in said if line.event == "error"]
            if errors or proc.poll() is not None:
                self._release()
                raise ProxyFailed(f"the proxy on node/{self.node} did not start: "
                                  f"{errors[0] if errors else 'it exited'}")
            if any(line.event == "registered" for line in said):
                return
            time.sleep(0.05)  # the proxy's log, on a node: nothing to wait on
        self.revert()
        raise ProxyFailed(f"the kubelet of node/{self.node} had not registered the proxy as a "
                          f"plugin of {self.driver} {READY_SECONDS}s after it started")

    def lines(self) -> list[ProxyLine]:
        return parse(self.log.read_text(errors="replace")) if self.log.exists() else []

    def arm(self, method: str, action: str) -> None:
        """The plugin's next answer to ``method`` is held while the kubelet does ``action``."""
        self._on_node(["sh", "-c", f'echo "$1 $2" > {ARM_FILE}', "arm", method, action])

    def disarm(self) -> None:
        self._on_node(["rm", "-f", ARM_FILE])

    def _on_node(self, argv: list[str]) -> None:
        subprocess.run(self.cluster.node_command(self.node, argv), check=True,
                       capture_output=True, timeout=30)

    def revert(self) -> None:
        if self.record is None:
            return
        subprocess.run(self.cluster.node_command(self.node, ["pkill", "-TERM", "-f", ON_NODE]),
                       capture_output=True, timeout=30, check=False)
        self._release()

    def _release(self) -> None:
        if self.record is None:
            return
        processes.terminate([self.record], grace=STOP_SECONDS)
        if self.state is not None:
            processes.release(self.state, self.record.name)
        self.record = None


@dataclass
class KubeletGoesInCall:
    """The proxy holds the plugin's next answer to ``method`` while the kubelet of its node
    stops (``action`` "stop": it stays stopped until reverted) or restarts. Applying arms the
    proxy; the plugin's answer fires it."""

    proxy: PluginProxied
    method: str
    action: str

    @property
    def description(self) -> str:
        return (f"the kubelet of node/{self.proxy.node} {ACTIONS[self.action]} as the plugin "
                f"of {self.proxy.driver} answered a {self.method} call")

    def apply(self) -> None:
        self.proxy.arm(self.method, self.action)

    def fired(self) -> ProxyLine | None:
        """The line that says the kubelet was stopped or restarted with the answer held."""
        held = False
        for line in self.proxy.lines():
            if line.event == "held" and line.fields.get("method") == self.method:
                held = True
            elif held and line.event == "kubelet":
                return line
        return None

    def failure(self) -> str | None:
        """The last error the proxy said (it could not stop or restart the kubelet)."""
        errors = [line.fields["error"] for line in self.proxy.lines() if line.event == "error"]
        return errors[-1] if errors else None

    def revert(self) -> None:
        self.proxy.disarm()
        if self.action == "stop" and not self.proxy.cluster.kubelet_active(self.proxy.node):
            self.proxy.cluster.start_kubelet_unit(self.proxy.node)
