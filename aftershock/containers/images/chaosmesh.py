"""Chaos Mesh on a kind cluster, with no registry and no chart repository: its controller-manager,
its daemon and helm built from Go modules (wrapper modules in `aftershock/toolchain/kind/`: the
proxy serves no Chaos Mesh release commit, only a later commit of its main branch), their images
written as archives and loaded into the nodes, and the chart that module carries rendered with
`helm template`.

The daemon (cgo, so gcc) runs on a Debian root file system with the tools it calls (tc, ipset,
iptables, nsenter). Its published image also carries programs from GitHub releases, which
cannot be fetched here: `nsexec` (enter a target's namespaces, then run a tool) is a script of
ours over util-linux's nsenter; toda (IOChaos), tproxy (HTTPChaos) and memStress (memory
StressChaos) are absent, so those experiments fail in the daemon. NetworkChaos partition and
bandwidth work; delay, loss, duplicate and corrupt need the kernel's netem qdisc, and on a
kernel built without CONFIG_NET_SCH_NETEM the daemon's tc fails ("Specified qdisc kind is
unknown").
"""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import yaml

from aftershock.containers.images import archive
from aftershock.containers.images.archive import Entry, Image
from aftershock.errors import UserError
from aftershock.go import toolchain
from aftershock.go.toolchain import BuildStep, Progress
from aftershock.machine.cache import cache_root

MODULE = "github.com/chaos-mesh/chaos-mesh"
CONTROLLER = f"{MODULE}/cmd/chaos-controller-manager"
DAEMON = f"{MODULE}/cmd/chaos-daemon"
HELM = "helm.sh/helm/v3/cmd/helm"
BINARIES = ("chaos-controller-manager", "chaos-daemon", "helm")
NAMESPACE = "chaos-mesh"
REGISTRY, REPOSITORY, DAEMON_REPOSITORY = "aftershock.local", "chaos-mesh", "chaos-daemon"
RUNTIME_SOCKET = "/run/containerd/containerd.sock"  # a kind node's containerd
DATA = resources.files("aftershock.containers.images") / "data"


def version() -> str:
    go_mod = (toolchain.TOOLCHAIN_DIR / "kind" / "chaos-mesh" / "go.mod").read_text()
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(MODULE)}\s+(v\S+)", go_mod, re.M)
    if not found:
        raise UserError("the chaos-mesh wrapper module requires no chaos-mesh version")
    return found.group(1)


def image_tag() -> str:
    return f"{REGISTRY}/{REPOSITORY}:{version()}"


def daemon_tag() -> str:
    return f"{REGISTRY}/{DAEMON_REPOSITORY}:{version()}"


def directory() -> Path:
    return cache_root() / "kind" / "chaos-mesh" / f"{version()}_{toolchain.go_env('GOVERSION')}"


def build(say: Progress, force: bool = False) -> Path:
    """The controller-manager, the daemon and helm, built unless cached."""
    final = directory()
    if built(final) and not force:
        return final
    if not shutil.which("gcc"):
        raise UserError("Chaos Mesh's daemon uses cgo: gcc is needed (apt-get install gcc)")
    flags = f"-s -w -X '{MODULE}/pkg/version.gitVersion={version()}'"
    module = toolchain.pinned_module("kind/chaos-mesh")
    steps = [BuildStep(f"chaos-mesh controller-manager {version()}", module, (CONTROLLER,),
                       flags),
             BuildStep(f"chaos-mesh daemon {version()} (cgo)", module, (DAEMON,), flags,
                       cgo=True),
             BuildStep("helm", toolchain.pinned_module("kind/helm"), (HELM,), "-s -w")]
    toolchain.build_into(final, steps, say)
    return final


def built(directory: Path) -> bool:
    return (directory / "manifest.json").is_file() and \
        all((directory / name).is_file() for name in BINARIES)


def controller_image(binaries: Path, out: Path) -> Path:
    """The controller's image as an archive (the chart runs this path)."""
    path = out / "chaos-mesh.tar"
    archive.write(Image(image_tag(), (Entry("/usr/local/bin/chaos-controller-manager",
                                            binaries / "chaos-controller-manager"),)), path)
    return path


# iptables as the published daemon image has it (legacy): inside a pod's network namespace
# only the daemon writes rules, so either backend would do; legacy matches upstream
IPTABLES_LEGACY = tuple(Entry(f"/usr/sbin/{tool}", link="xtables-legacy-multi")
                        for tool in ("iptables", "iptables-save", "iptables-restore"))


def daemon_image(binaries: Path, rootfs: Path) -> Image:
    """The daemon on a Debian root file system with the tools it runs (``rootfs``: a tar with
    iproute2, ipset, iptables and util-linux), and our nsexec."""
    return Image(daemon_tag(), (
        Entry("/usr/local/bin/chaos-daemon", binaries / "chaos-daemon"),
        Entry("/usr/local/bin/nsexec", data=(DATA / "nsexec.sh").read_bytes()),
        *IPTABLES_LEGACY), base=rootfs)


def daemon_archive(binaries: Path, rootfs: Path, out: Path) -> Path:
    path = out / "chaos-daemon.tar"
    archive.write(daemon_image(binaries, rootfs), path)
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
            "--set", f"chaosDaemon.image.repository={DAEMON_REPOSITORY}",
            "--set", "chaosDaemon.imagePullPolicy=Never",
            "--set", "chaosDaemon.runtime=containerd",
            "--set", f"chaosDaemon.socketPath={RUNTIME_SOCKET}",
            "--set", "dashboard.create=false", "--set", "dnsServer.create=false",
            "--set", "chaosDaemon.mtls.enabled=false",
            "--set", "controllerManager.chaosdSecurityMode=false",
            "--set", "dashboard.securityMode=false", "--set", "enableProfiling=false"]


def render(helm: Path, kubernetes: str) -> list[dict]:
    """The chart's objects, the daemon's host paths made to exist (see ``host_paths``)."""
    done = subprocess.run([str(helm), "template", "chaos-mesh", str(chart_dir()),
                           *values(kubernetes)], capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"helm template failed: {done.stderr.strip()[-800:]}")
    objects = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    for doc in objects:
        if doc.get("kind") == "DaemonSet":
            host_paths(doc)
    return objects


def host_paths(daemonset: dict) -> None:
    """The daemon mounts the node's /lib/modules; a host without loadable modules (a kernel
    with everything built in) has no such directory, and the mount would fail: create it."""
    for volume in daemonset["spec"]["template"]["spec"].get("volumes") or []:
        path = volume.get("hostPath")
        if path and path.get("path") == "/lib/modules" and not path.get("type"):
            path["type"] = "DirectoryOrCreate"


def crds() -> list[Path]:
    return sorted((chart_dir() / "crds").glob("*.yaml"))


def crd_documents() -> list[dict]:
    """The chart's CRDs, with what the controller's newer API types need (``with_newer_fields``)."""
    documents = []
    for path in crds():
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                with_newer_fields(doc)
                documents.append(doc)
    return documents


# The controller is built against the one chaos-mesh/api version the proxy serves, a few days
# newer than the chart's CRDs. Since then NetworkChaos has `partitionBehavior` (default "drop",
# set by the mutating webhook): a CRD without it prunes the field, so every later update looks
# like a changed spec to the validating webhook ("Cannot update chaos spec") and no NetworkChaos
# is ever injected. The field, as the API types declare it:
PARTITION_BEHAVIOR = {"type": "string", "enum": ["drop", "reject"]}


def with_newer_fields(crd: dict) -> int:
    """Add `partitionBehavior` to every NetworkChaos spec (also inside Schedules and Workflows)
    and to PodNetworkChaos' iptables rules; returns how many schemas gained it."""
    added = 0
    for schema in _object_schemas(crd):
        properties = schema["properties"]
        if "partitionBehavior" in properties:
            continue
        action = properties.get("action") or {}
        network_spec = "partition" in (action.get("enum") or []) and {
            "direction", "target"} <= set(properties)
        iptables_rule = {"ipsets", "direction", "name"} <= set(properties)
        if network_spec or iptables_rule:
            properties["partitionBehavior"] = {**PARTITION_BEHAVIOR, **(
                {"default": "drop"} if network_spec else {})}
            added += 1
    return added


def _object_schemas(node):
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield node
        for value in node.values():
            yield from _object_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _object_schemas(value)
