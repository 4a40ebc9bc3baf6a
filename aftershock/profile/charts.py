"""The RBAC rules a Helm chart grants (``rbac_from`` naming a chart's folder, such as an
operator's own chart): the chart rendered with its default values by the helm built here
(``helm template``: rendered here, nothing sent to a cluster), its ClusterRoles' and Roles'
rules read from what it renders. A subchart it depends on that is not in its charts/ folder (a
published module holds the chart alone; its dependencies come from registries not reachable
here) is left out: the rules are the chart's own."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from aftershock.errors import UserError
from aftershock.go import helm
from aftershock.go.toolchain import pinned_kubernetes


def is_chart(path: Path) -> bool:
    return path.is_dir() and (path / "Chart.yaml").is_file()


def missing_dependencies(chart: Path) -> list[str]:
    """The subcharts Chart.yaml names that its charts/ folder lacks (as a folder or an archive)."""
    meta = yaml.safe_load((chart / "Chart.yaml").read_text()) or {}
    held = {entry.name for entry in (chart / "charts").iterdir()} if (chart / "charts").is_dir() \
        else set()
    return [dep["name"] for dep in meta.get("dependencies") or []
            if dep.get("name") not in held
            and not any(name.startswith(f"{dep.get('name')}-") and name.endswith(".tgz")
                        for name in held)]


def _without(chart: Path, names: list[str], into: Path) -> Path:
    """A copy of the chart whose Chart.yaml no longer names those subcharts."""
    copy = into / chart.name
    shutil.copytree(chart, copy)
    meta = yaml.safe_load((copy / "Chart.yaml").read_text())
    meta["dependencies"] = [dep for dep in meta["dependencies"] if dep.get("name") not in names]
    (copy / "Chart.yaml").write_text(yaml.safe_dump(meta))
    (copy / "Chart.lock").unlink(missing_ok=True)
    return copy


@cache
def rendered(chart: Path) -> tuple[dict[str, Any], ...]:
    """Every object the chart renders with its default values."""
    binary = helm.ensure(lambda line: print(line, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="aftershock-chart-") as scratch:
        missing = missing_dependencies(chart)
        source = _without(chart, missing, Path(scratch)) if missing else chart
        # as for the Kubernetes aftershock runs (helm's own default, 1.20, fails a chart that
        # requires a newer one, as Kyverno's does)
        done = subprocess.run([str(binary), "template", "aftershock", str(source),
                               "--namespace", "aftershock", "--kube-version",
                               pinned_kubernetes()], capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])
        raise UserError(f"rbac_from {chart}: helm template could not render it: {tail}")
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if isinstance(doc, dict))


def rules(chart: Path) -> list[dict[str, Any]]:
    """The rules of the ClusterRoles and Roles the chart renders."""
    return [rule for doc in rendered(chart) if doc.get("kind") in ("ClusterRole", "Role")
            for rule in doc.get("rules") or []]
