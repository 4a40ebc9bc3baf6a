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
