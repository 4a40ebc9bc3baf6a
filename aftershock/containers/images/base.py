"""The base of a kind node, built here from Debian packages: what kind's own base image holds
(systemd, containerd, runc, the CNI plugins, kind's entrypoint and units), assembled the way
kind's Dockerfile assembles it, with no registry and no Dockerfile build.

kind's files (its entrypoint, units and containerd config) come from the `sigs.k8s.io/kind`
Go module at build time, never from this repository. Two changes to them, for this machine:
- containerd's ``restrict_oom_score_adj = true``: without CAP_SYS_RESOURCE (missing from some
  VMs' bounding set) runc cannot lower a container's oom_score_adj below its parent's, and
  kubelet asks -997 for every static pod;
- the fuse-overlayfs snapshotter (rootless only) is left out.
Bookworm, not trixie (kind's base since v0.32): systemd 257 refuses cgroup v1 hosts.
containerd is not Debian's (bookworm's 1.6 ignores CDI specs) but kind's version, built from
its Go module (`containers/images/containerd.py`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from aftershock.containers.images import containerd
from aftershock.containers.images.docker import Docker
from aftershock.errors import UserError

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = (
    "systemd", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux",
    "mount", "kmod", "libseccomp2", "pigz", "e2fsprogs", "bash", "ca-certificates", "curl", "jq",
    "procps", "runc", "containernetworking-plugins", "socat",
)
CNI_PLUGINS = ("host-local", "loopback", "ptp", "portmap", "bridge")
REVISION = 2  # bump when what this module does to the root file system changes

Say = Callable[[str], None]


def say_to_stderr(message: str) -> None:
    print(f"aftershock: {message}", file=sys.stderr, flush=True)


def key(kind_version: str) -> str:
    text = json.dumps([SUITE, PACKAGES, kind_version, containerd.version(), REVISION])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def ensure_mmdebstrap(say: Say) -> None:
    """mmdebstrap, installed from Debian if missing (root file systems are made with it)."""
    if shutil.which("mmdebstrap"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise UserError("building a kind node image needs root and Debian's mmdebstrap "
                        "(apt-get install mmdebstrap)")
    say("installing mmdebstrap from Debian (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends",
                       "mmdebstrap"], env=env, capture_output=True).returncode != 0:
        raise UserError("could not install mmdebstrap with apt-get")


def debootstrap(target: Path, say: Say) -> None:
    """A Debian root file system with kind's packages, in ``target`` (mmdebstrap, as root)."""
    ensure_mmdebstrap(say)
    say(f"debian {SUITE} root file system with {len(PACKAGES)} packages (mmdebstrap)")
    command = ["mmdebstrap", "--variant=minbase", "--quiet", f"--include={','.join(PACKAGES)}",
               SUITE, str(target), MIRROR]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.splitlines()[-8:])
        raise UserError(f"mmdebstrap failed ({done.returncode}):\n{tail}")


def copy_kind_files(kind_module: Path, root: Path) -> None:
    """kind's images/base/files, with the modes its Dockerfile gives them (scripts 0755, the
    rest 0644); the module cache holds them read-only."""
    files = kind_module / "images" / "base" / "files"
    for source in sorted(files.rglob("*")):
        if not source.is_file():
            continue
        relative = source.relative_to(files)
        dest = root / relative
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        executable = relative.parts[:3] == ("usr", "local", "bin") or \
            relative.parts[:2] == ("kind", "bin")
        dest.chmod(0o755 if executable else 0o644)
    for directory in (root / "kind", root / "kind" / "bin"):
        directory.chmod(0o755)


def containerd_config(text: str) -> str:
    """kind's containerd config, changed for this machine (see the module's docstring)."""
    text = re.sub(r"restrict_oom_score_adj\s*=\s*false", "restrict_oom_score_adj = true", text)
    if "restrict_oom_score_adj = true" not in text:
        raise UserError("kind's containerd config has no restrict_oom_score_adj to set")
    return re.sub(r"\[proxy_plugins\][^\[]*(\[proxy_plugins\.\"fuse-overlayfs\"\][^\[]*)?", "",
                  text)


def base_runtime_spec(default_spec: str) -> str:
    """containerd's default OCI spec with kind's product-files hook and no rlimits (runc would
    apply them, lowering the open-files limit of every container)."""
    spec = json.loads(default_spec)
    spec.setdefault("hooks", {}).setdefault("createContainer", []).append(
        {"path": "/kind/bin/mount-product-files.sh"})
    spec.get("process", {}).pop("rlimits", None)
    return json.dumps(spec, indent=2) + "\n"


def trim_systemd(root: Path) -> None:
    """What kind's Dockerfile removes: units that make no sense in a node container."""
    system = root / "lib" / "systemd" / "system"
    for unit in (system / "sysinit.target.wants").glob("systemd-tmpfiles-setup.service"):
        unit.unlink()
    for wants in ("multi-user.target.wants", "local-fs.target.wants", "basic.target.wants"):
        for unit in (system / wants).glob("*"):
            unit.unlink()
    for unit in (root / "etc" / "systemd" / "system").glob("*.wants/*"):
        unit.unlink()
    for pattern in ("*udev*", "*initctl*"):
        for unit in (system / "sockets.target.wants").glob(pattern):
            unit.unlink()
    with (root / "etc" / "systemd" / "journald.conf").open("a") as journald:
        journald.write("ReadKMsg=no\n")
    init = root / "sbin" / "init"
    if not init.exists() and not init.is_symlink():
        init.symlink_to("/usr/lib/systemd/systemd")


def install_containerd(built: Path, root: Path) -> None:
    """The containerd built here, where kind's units look for it (/usr/local/bin)."""
    for name in containerd.BINARIES:
        dest = root / "usr" / "local" / "bin" / name
        dest.unlink(missing_ok=True)
        shutil.copyfile(built / name, dest)
        dest.chmod(0o755)


def link_debian_binaries(root: Path) -> None:
    """kind's units and config name /opt/cni/bin; Debian puts the CNI plugins in
    /usr/lib/cni."""
    cni = root / "opt" / "cni" / "bin"
    cni.mkdir(parents=True, exist_ok=True)
    for plugin in CNI_PLUGINS:
        (cni / plugin).unlink(missing_ok=True)
        (cni / plugin).symlink_to(f"/usr/lib/cni/{plugin}")


def _chroot(root: Path, *command: str) -> str:
    done = subprocess.run(["chroot", str(root), *command], capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"in the node's root file system, {' '.join(command)} failed: "
                        f"{done.stderr.strip()[-400:]}")
    return done.stdout


def customise(root: Path, kind_module: Path, built_containerd: Path) -> None:
    copy_kind_files(kind_module, root)
    install_containerd(built_containerd, root)
    config = root / "etc" / "containerd" / "config.toml"
    config.write_text(containerd_config(config.read_text()))
    link_debian_binaries(root)
    spec = base_runtime_spec(_chroot(root, "ctr", "oci", "spec"))
    (root / "etc" / "containerd" / "cri-base.json").write_text(spec)
    trim_systemd(root)
    _chroot(root, "systemctl", "enable", "kubelet.service", "containerd.service",
            "undo-mount-hacks.service")
    _chroot(root, "systemctl", "mask", "systemd-binfmt.service")
    (root / "etc" / "kubernetes" / "manifests").mkdir(parents=True, exist_ok=True)
    for cache in (root / "var" / "cache" / "apt" / "archives").glob("*.deb"):
        cache.unlink()


def tag(kind_version: str) -> str:
    return f"aftershock/kind-base:{key(kind_version)}"


def ensure(docker: Docker, kind_module: Path, kind_version: str, scratch: Path, say: Say) -> str:
    """The base image in the engine, built unless it is there: a root file system from
    Debian, kind's files, then `docker import` and a one-line build for the stop signal (the
    engine's import does not take STOPSIGNAL; systemd stops on SIGRTMIN+3, not SIGTERM)."""
    wanted = tag(kind_version)
    if docker.has_image(wanted):
        say(f"base image {wanted}: cached")
        return wanted
    built = containerd.ensure(say)
    root = scratch / "rootfs"
    debootstrap(root, say)
    say(f"adding containerd v{containerd.version()}, kind's entrypoint, units and "
        "containerd config")
    customise(root, kind_module, built)
    say(f"importing the root file system as {wanted}")
    imported = f"{wanted}-import"
    docker.import_tree(root, imported, ["ENV container=docker",
                                        'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]'])
    docker.build(scratch / "context", f"FROM {imported}\nSTOPSIGNAL SIGRTMIN+3\n", wanted)
    docker.run("rmi", imported)
    shutil.rmtree(root, ignore_errors=True)
    return wanted
