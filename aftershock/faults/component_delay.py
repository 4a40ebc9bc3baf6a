"""Fault: one control-plane component's watches delayed, through a WatchDelay proxy."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aftershock.faults.watchdelay import Rule, Upstream, WatchDelay


@dataclass
class DelayedWatch:
    """Fault: one control-plane component (kube-controller-manager or kube-scheduler) is
    restarted with a kubeconfig through a WatchDelay proxy; reverting restarts it direct."""

    cluster: Any
    component: str
    rules: list[Rule]
    workdir: Path
    proxy: WatchDelay | None = None

    @property
    def description(self) -> str:
        if not self.rules:
            return f"watches of {self.component} through a proxy"
        what = ", ".join(f"{r.resource or 'all'} +{r.delay:g}s" for r in self.rules)
        return f"watches of {self.component} delayed ({what})"

    def apply(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        upstream = Upstream.from_kubeconfig(
            self.cluster.paths.component_kubeconfig(self.component))
        self.proxy = WatchDelay(upstream, self.workdir / f"{self.component}-proxy.jsonl",
                                self.component).start()
        self.proxy.set_rules(self.rules)
        kubeconfig = self.proxy.write_kubeconfig(self.workdir / f"{self.component}.kubeconfig")
        self.cluster.restart_component(self.component, kubeconfig)

    def revert(self) -> None:
        self.cluster.restart_component(self.component)
        if self.proxy is not None:
            self.proxy.stop()


@dataclass
class SlowWrites:
    """Fault: a component's writes of one resource, through its proxy, each wait ``seconds``
    before they reach the API server (a loaded API server, as the component sees it: more of
    its work in flight at once). Reverting ends it."""

    proxied: DelayedWatch
    resource: str
    seconds: float

    @property
    def description(self) -> str:
        return f"{self.resource} writes of {self.proxied.component} delayed {self.seconds:g}s"

    def apply(self) -> None:
        assert self.proxied.proxy is not None, "the component is not behind its proxy"
        self.proxied.proxy.delay_writes(self.resource, self.seconds)

    def revert(self) -> None:
        if self.proxied.proxy is not None:
            self.proxied.proxy.delay_writes(self.resource, 0)
