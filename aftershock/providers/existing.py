"""The existing provider: any kubeconfig/context. Destructive faults are refused unless the
context is named in --allow-faults-on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from aftershock.errors import UserError
from aftershock.providers.base import Capability, ClusterInfo
from aftershock.shape import Shape


def current_context(kubeconfig: Path) -> str:
    try:
        data = yaml.safe_load(kubeconfig.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"cannot read kubeconfig: {exc}", path=str(kubeconfig)) from None
    context = data.get("current-context")
    if not context:
        raise UserError("kubeconfig has no current-context; pass --context", path=str(kubeconfig))
    return str(context)


@dataclass
class ExistingCluster:
    kubeconfig: Path
    context: str
    allow_faults_on: tuple[str, ...] = ()

    @property
    def info(self) -> ClusterInfo:
        return ClusterInfo(self.context, "existing", self.kubeconfig, "", self.context)

    @property
    def capabilities(self) -> frozenset[Capability]:
        if self.context in self.allow_faults_on:
            return frozenset({Capability.DESTRUCTIVE})
        return frozenset()

    @property
    def shape(self) -> Shape | None:
        return None

    def down(self) -> None:
        """Never stops someone else's cluster."""


def open_existing(kubeconfig: str | None, context: str | None,
                  allow_faults_on: list[str]) -> ExistingCluster:
    path = Path(kubeconfig).expanduser() if kubeconfig else Path.home() / ".kube" / "config"
    if not path.is_file():
        raise UserError("no such kubeconfig (pass --kubeconfig)", path=str(path))
    return ExistingCluster(path, context or current_context(path), tuple(allow_faults_on))
