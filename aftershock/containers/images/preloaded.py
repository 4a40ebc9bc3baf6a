"""The container images a kind node preloads, written as archives from binaries built here:
the control plane (what kubeadm's static pods run), kube-proxy, etcd, CoreDNS, pause, the
listener that workloads with a readiness probe run, and the node-routes DaemonSet that stands
in for kindnetd. Each is tagged with the name kubeadm (or
containerd) asks for, so that nothing is ever pulled.

Binaries that need no userland (static Go, static C) go in an image of their own files; the
ones that call iptables, nft or ip (kube-proxy, node-routes) sit on a small Debian root file
system with those tools."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from aftershock.containers.images import archive
from aftershock.containers.images.archive import Entry, Image
from aftershock.containers.images.base import MIRROR, SUITE, ensure_mmdebstrap
from aftershock.errors import UserError

REGISTRY = "registry.k8s.io"
SANDBOX_PAUSE = "3.10"  # kind's containerd config names this one
NET_PACKAGES = ("iptables", "nftables", "conntrack", "iproute2", "ipset", "kmod")
ROUTES_TAG = "aftershock.local/node-routes"
LISTENER_TAG = "aftershock.local/listener:1"  # aftershock.kube.workloads names it
DATA = resources.files("aftershock.containers.images") / "data"

# iptables' backend chosen at first use the way kind's entrypoint chose the node's: by which
# one holds more rules (legacy on a tie), so kube-proxy writes where the node reads.
IPTABLES_SELECT = """#!/bin/sh
legacy=$( (iptables-legacy-save; ip6tables-legacy-save) 2>/dev/null | grep -c '^-' )
nft=$( (iptables-nft-save; ip6tables-nft-save) 2>/dev/null | grep -c '^-' )
mode=nft
[ "${legacy:-0}" -ge "${nft:-0}" ] && mode=legacy
for tool in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf "/usr/sbin/xtables-$mode-multi" "/usr/sbin/$tool"
done
exec "$0" "$@"
"""
SELECTED = ("iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save",
            "ip6tables-restore")


def kubeadm_constant(kube_module: Path, name: str) -> str:
    """A version kubeadm pins (DefaultEtcdVersion, CoreDNSVersion, PauseVersion), read from
    the k8s.io/kubernetes source the node binaries were built from."""
    text = (kube_module / "cmd" / "kubeadm" / "app" / "constants" / "constants.go").read_text()
    found = re.search(rf'\b{name}\s*=\s*"([^"]+)"', text)
    if not found:
        raise UserError(f"kubeadm's constants name no {name}")
    return found.group(1)


def net_rootfs(cache: Path, say) -> Path:
    """A Debian root file system with the network tools (cached tar)."""
    key = hashlib.sha256(json.dumps([SUITE, NET_PACKAGES]).encode()).hexdigest()[:12]
    target = cache / f"net-{key}.tar"
    if target.is_file():
        return target
    ensure_mmdebstrap(say)
    say(f"debian {SUITE} root file system for kube-proxy and node-routes (mmdebstrap)")
    scratch = target.with_suffix(".tmp.tar")
    cache.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mmdebstrap", "--variant=minbase", "--quiet",
                           f"--include={','.join(NET_PACKAGES)}", SUITE, str(scratch), MIRROR],
                          capture_output=True, text=True)
    if done.returncode != 0:
        scratch.unlink(missing_ok=True)
        raise UserError(f"mmdebstrap failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    scratch.rename(target)
    return target


def _alone(tag: str, binary: Path, dest: str, **settings) -> Image:
    return Image(tag, (Entry(dest, binary),), **settings)


def listener(cache: Path) -> Path:
    """The listener (data/listener.c), built with gcc -static unless cached by its source."""
    source = DATA / "listener.c"
    text = source.read_bytes()
    target = cache / f"listener-{hashlib.sha256(text).hexdigest()[:12]}"
    if target.is_file():
        return target
    if not shutil.which("gcc"):
        raise UserError("gcc is needed to build the listener (apt-get install gcc)")
    cache.mkdir(parents=True, exist_ok=True)
    scratch = target.with_suffix(".tmp")
    with resources.as_file(source) as path:
        done = subprocess.run(["gcc", "-Os", "-Wall", "-Werror", "-static", "-s", "-o",
                               str(scratch), str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        scratch.unlink(missing_ok=True)
        raise UserError(f"building the listener failed:\n{done.stderr.strip()[-2000:]}")
    scratch.rename(target)
    return target


def plan(kubernetes: str, control_plane: Path, node: Path, kube_module: Path,
         rootfs: Path, listener_binary: Path) -> list[Image]:
    """Every image the node preloads, node-routes last. ``control_plane``: the toolchain's
    binaries; ``node``: kind's (kubelet ... coredns, pause)."""
    version = f"v{kubernetes}"
    images = [_alone(f"{REGISTRY}/{name}:{version}", control_plane / name,
                     f"/usr/local/bin/{name}")
              for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")]
    selected = tuple(Entry(f"/usr/sbin/{tool}", data=IPTABLES_SELECT.encode())
                     for tool in SELECTED)
    images.append(Image(f"{REGISTRY}/kube-proxy:{version}",
                        (*selected, Entry("/usr/local/bin/kube-proxy", node / "kube-proxy")),
                        base=rootfs))
    etcd = kubeadm_constant(kube_module, "DefaultEtcdVersion")
    images.append(_alone(f"{REGISTRY}/etcd:{etcd}", node / "etcd", "/usr/local/bin/etcd"))
    coredns = kubeadm_constant(kube_module, "CoreDNSVersion")
    images.append(_alone(f"{REGISTRY}/coredns/coredns:{coredns}", node / "coredns", "/coredns",
                         entrypoint=("/coredns",)))
    pause = kubeadm_constant(kube_module, "PauseVersion")
    images.append(Image(f"{REGISTRY}/pause:{SANDBOX_PAUSE}", (Entry("/pause", node / "pause"),),
                        entrypoint=("/pause",), user="65535:65535",
                        aliases=(f"{REGISTRY}/pause:{pause}",) if pause != SANDBOX_PAUSE
                        else ()))
    images.append(Image(LISTENER_TAG, (Entry("/listener", data=listener_binary.read_bytes()),),
                        entrypoint=("/listener",), user="65535:65535"))
    images.append(routes_image(node, rootfs))
    return images


def routes_image(node: Path, rootfs: Path) -> Image:
    script = (DATA / "node-routes.sh").read_bytes()
    tag = f"{ROUTES_TAG}:{hashlib.sha256(script).hexdigest()[:12]}"
    return Image(tag, (Entry("/usr/local/bin/node-routes", data=script),
                       Entry("/usr/local/bin/kubectl", node / "kubectl")), base=rootfs)


def cni_manifest(routes_tag: str) -> str:
    return (DATA / "default-cni.yaml").read_text().replace("image: IMAGE", f"image: {routes_tag}")


def write_all(images: list[Image], out: Path, say) -> list[Path]:
    paths = []
    for index, image in enumerate(images, start=1):
        say(f"  image {index}/{len(images)}: {image.tag}")
        path = out / f"{index:02d}.tar"
        archive.write(image, path)
        paths.append(path)
    return paths
