"""What a kind node runs, built here from Go modules and Kubernetes' own C source: kubelet,
kubeadm, kubectl and kube-proxy (k8s.io/kubernetes, the module the toolchain already builds the
control plane from), etcd at the version kubeadm deploys, CoreDNS, and the pause program.
Cached by version, with a manifest of what took how long, like the toolchain."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from aftershock.errors import UserError
from aftershock.go import toolchain
from aftershock.go.toolchain import BuildStep, Progress
from aftershock.machine.cache import cache_root

NODE_TOOLS = ("kubelet", "kubeadm", "kubectl", "kube-proxy")
BINARIES = (*NODE_TOOLS, "etcd", "coredns", "pause")


def pinned(name: str, module: str) -> str:
    """The version of ``module`` the committed wrapper module ``kind/<name>`` requires."""
    go_mod = toolchain.TOOLCHAIN_DIR / "kind" / name / "go.mod"
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+v(\S+)", go_mod.read_text(),
                      re.M)
    if not found:
        raise UserError(f"{go_mod} does not require {module}")
    return found.group(1)


def etcd_version() -> str:
    return pinned("etcd", "go.etcd.io/etcd/server/v3")


def coredns_version() -> str:
    return pinned("coredns", "github.com/coredns/coredns")


def directory(kubernetes: str) -> Path:
    go = toolchain.go_env("GOVERSION")
    return cache_root() / "kind" / "bin" / (
        f"k8s-v{kubernetes}_etcd-v{etcd_version()}_coredns-v{coredns_version()}_{go}")


def steps(kubernetes: str, say: Progress) -> list[BuildStep]:
    kube = toolchain.kubernetes_module_dir(kubernetes, say)
    return [
        BuildStep(f"kubernetes v{kubernetes} node ({', '.join(NODE_TOOLS)})", kube,
                  tuple(f"k8s.io/kubernetes/cmd/{tool}" for tool in NODE_TOOLS),
                  toolchain.kubernetes_ldflags(kubernetes)),
        BuildStep(f"etcd v{etcd_version()}", toolchain.pinned_module("kind/etcd"),
                  ("go.etcd.io/etcd/server/v3",), "-s -w"),
        BuildStep(f"coredns v{coredns_version()}", toolchain.pinned_module("kind/coredns"),
                  ("github.com/coredns/coredns",), "-s -w"),
    ]


def pause_source(kubernetes: str) -> Path:
    """Kubernetes' pause.c, from the k8s.io/kubernetes module the toolchain downloaded."""
    modules = Path(toolchain.go_env("GOMODCACHE"))
    source = modules / f"k8s.io/kubernetes@v{kubernetes}" / "build" / "pause" / "linux" / "pause.c"
    if not source.is_file():
        subprocess.run(["go", "mod", "download", f"k8s.io/kubernetes@v{kubernetes}"],
                       cwd=tempfile.gettempdir(), capture_output=True, check=False)
    if not source.is_file():
        raise UserError(f"no pause.c in the k8s.io/kubernetes v{kubernetes} module ({source})")
    return source


def build_pause(kubernetes: str, out: Path) -> float:
    """pause, as Kubernetes builds it: static C (gcc)."""
    if not shutil.which("gcc"):
        raise UserError("gcc is needed to build the pause program (apt-get install gcc)")
    started = time.monotonic()
    source = pause_source(kubernetes)
    done = subprocess.run(["gcc", "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v3.10.1",
                           "-o", str(out / "pause"), str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"building pause failed:\n{done.stderr.strip()[-2000:]}")
    subprocess.run(["strip", str(out / "pause")], capture_output=True, check=False)
    return time.monotonic() - started


def build(kubernetes: str, say: Progress, force: bool = False) -> Path:
    """Every binary of the node, built unless cached; the directory that holds them."""
    final = directory(kubernetes)
    if (final / "manifest.json").is_file() and not force:
        say(f"node binaries: already built in {final}")
        return final
    plan = steps(kubernetes, say)
    final.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=final.parent))
    try:
        seconds = {step.label: round(toolchain.run_step(step, scratch, index, len(plan) + 1,
                                                        say), 1)
                   for index, step in enumerate(plan, start=1)}
        say(f"[{len(plan) + 1}/{len(plan) + 1}] building pause (gcc -static)")
        seconds["pause"] = round(build_pause(kubernetes, scratch), 1)
        missing = [name for name in BINARIES if not (scratch / name).is_file()]
        if missing:
            raise UserError(f"the node build made no {', '.join(missing)}")
        (scratch / "manifest.json").write_text(json.dumps(
            {"kubernetes": kubernetes, "etcd": etcd_version(), "coredns": coredns_version(),
             "seconds": seconds}, indent=2) + "\n")
        shutil.rmtree(final, ignore_errors=True)
        scratch.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final
