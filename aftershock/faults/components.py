"""Component faults: stop / start / restart kube-controller-manager and kube-scheduler."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ALIASES = {
    "controller manager": "kube-controller-manager",
    "controller-manager": "kube-controller-manager",
    "kube-controller-manager": "kube-controller-manager",
    "scheduler": "kube-scheduler",
    "kube-scheduler": "kube-scheduler",
}


def component_named(words: str) -> str:
    name = ALIASES.get(words.strip().lower().removeprefix("the "))
    if name is None:
        raise ValueError(f"unknown component '{words}': the controller manager or the scheduler")
    return name


@dataclass
class ComponentStopped:
    cluster: Any
    component: str

    @property
    def description(self) -> str:
        return f"{self.component} stopped"

    def apply(self) -> None:
        self.cluster.stop_component(self.component)

    def revert(self) -> None:
        if not self.cluster.running().get(self.component):
            self.cluster.start_component(self.component)
