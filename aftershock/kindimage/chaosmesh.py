"""Chaos Mesh on a kind cluster, with no registry and no chart repository: its controller-manager
and helm built from Go modules (wrapper modules in `aftershock/toolchain/kind/`: the proxy serves
no Chaos Mesh release commit, only a later commit of its main branch), the controller's image
written as an archive and loaded into the nodes, and the chart that module carries rendered
with `helm template`.

The chaos daemon is left out: it needs cgo and tools fetched from GitHub releases. PodChaos's
pod-kill needs only the controller (it deletes the pod through the API); experiments that act
inside containers (container-kill, NetworkChaos, StressChaos) need the daemon and are not
offered here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

from aftershock.errors import UserError
from aftershock.kindimage import archive
from aftershock.kindimage.archive import Entry, Image
from aftershock.providers import toolchain
from aftershock.providers.toolchain import BuildStep, Progress, cache_root

MODULE = "github.com/chaos-mesh/chaos-mesh"
CONTROLLER = f"{MODULE}/cmd/chaos-controller-manager"
HELM = "helm.sh/helm/v3/cmd/helm"
NAMESPACE = "chaos-mesh"
REGISTRY, REPOSITORY = "aftershock.local", "chaos-mesh"


def version() -> str:
    go_mod = (toolchain.TOOLCHAIN_DIR / "kind" / "chaos-mesh" / "go.mod").read_text()
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(MODULE)}\s+(v\S+)", go_mod, re.M)
    if not found:
        raise UserError("the chaos-mesh wrapper module requires no chaos-mesh version")
    return found.group(1)


def image_tag() -> str:
    return f"{REGISTRY}/{REPOSITORY}:{version()}"


def directory() -> Path:
    return cache_root() / "kind" / "chaos-mesh" / f"{version()}_{toolchain.go_env('GOVERSION')}"


def build(say: Progress, force: bool = False) -> Path:
    """The controller-manager and helm, built unless cached."""
    final = directory()
    if (final / "manifest.json").is_file() and not force:
        return final
    flags = f"-s -w -X '{MODULE}/pkg/version.gitVersion={version()}'"
    steps = [BuildStep(f"chaos-mesh controller-manager {version()}",
                       toolchain.pinned_module("kind/chaos-mesh"), (CONTROLLER,), flags),
             BuildStep("helm", toolchain.pinned_module("kind/helm"), (HELM,), "-s -w")]
    final.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=final.parent))
    try:
        seconds = {step.label: round(toolchain.run_step(step, scratch, index, len(steps), say),
                                     1) for index, step in enumerate(steps, start=1)}
        (scratch / "manifest.json").write_text(json.dumps({"seconds": seconds}, indent=2))
        shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def controller_image(binaries: Path, out: Path) -> Path:
    """The controller's image as an archive (the chart runs this path)."""
    path = out / "chaos-mesh.tar"
    archive.write(Image(image_tag(), (Entry("/usr/local/bin/chaos-controller-manager",
                                            binaries / "chaos-controller-manager"),)), path)
    return path


def chart_dir() -> Path:
    """The chart inside the chaos-mesh module (downloaded by the build)."""
    chart = Path(toolchain.go_env("GOMODCACHE")) / f"{MODULE}@{version()}" / "helm" / "chaos-mesh"
    if not (chart / "Chart.yaml").is_file():
        raise UserError(f"no Chaos Mesh chart in the module cache ({chart})")
    return chart


def values(kubernetes: str) -> list[str]:
    return ["--namespace", NAMESPACE, "--kube-version", f"v{kubernetes}",
            "--set", f"images.registry={REGISTRY}",
            "--set", f"controllerManager.image.repository={REPOSITORY}",
            "--set", f"images.tag={version()}",
            "--set", "controllerManager.image.pullPolicy=Never",
            "--set", "controllerManager.leaderElection.enabled=false",
            "--set", "dashboard.create=false", "--set", "dnsServer.create=false",
            "--set", "chaosDaemon.mtls.enabled=false",
            "--set", "controllerManager.chaosdSecurityMode=false",
            "--set", "dashboard.securityMode=false", "--set", "enableProfiling=false"]


def render(helm: Path, kubernetes: str) -> list[dict]:
    """The chart's objects, less the chaos daemon (and what only it uses)."""
    done = subprocess.run([str(helm), "template", "chaos-mesh", str(chart_dir()),
                           *values(kubernetes)], capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"helm template failed: {done.stderr.strip()[-800:]}")
    objects = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    return [doc for doc in objects if not _daemon(doc)]


def _daemon(doc: dict) -> bool:
    name = (doc.get("metadata") or {}).get("name", "")
    return doc.get("kind") == "DaemonSet" or (
        doc.get("kind") == "Service" and "daemon" in name)


def crds() -> list[Path]:
    return sorted((chart_dir() / "crds").glob("*.yaml"))
