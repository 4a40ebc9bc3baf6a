"""The RBAC rules a Helm chart grants (``rbac_from`` naming a chart's folder, such as an
operator's own chart): the chart rendered with its default values by the helm built here
(``helm template``: rendered here, nothing sent to a cluster), its ClusterRoles' and Roles'
rules read from what it renders."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from aftershock.errors import UserError
from aftershock.go import helm


def is_chart(path: Path) -> bool:
    return path.is_dir() and (path / "Chart.yaml").is_file()


@cache
def rendered(chart: Path) -> tuple[dict[str, Any], ...]:
    """Every object the chart renders with its default values."""
    binary = helm.ensure(lambda line: print(line, file=sys.stderr, flush=True))
    done = subprocess.run([str(binary), "template", "aftershock", str(chart), "--namespace",
                           "aftershock"], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        raise UserError(f"rbac_from {chart}: helm template could not render it: {tail}")
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if isinstance(doc, dict))


def rules(chart: Path) -> list[dict[str, Any]]:
    """The rules of the ClusterRoles and Roles the chart renders."""
    return [rule for doc in rendered(chart) if doc.get("kind") in ("ClusterRole", "Role")
            for rule in doc.get("rules") or []]
