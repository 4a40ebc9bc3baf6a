"""`aftershock kind build-image`: a kind node image built on this machine, with no registry.

The steps of kind's own node-image build (kind `build node-image` cannot run offline: it fetches
etcd, CoreDNS, pause and kindnetd from registries), on inputs built here:
1. the base (Debian packages and kind's files, `base.ensure`);
2. kubelet, kubeadm, kubectl from Go modules into /usr/bin, the version into /kind/version, the
   pod network's manifest into /kind/manifests/default-cni.yaml;
3. every image kubeadm will ask for, imported into the node's containerd (namespace k8s.io,
   not unpacked), with containerd started inside a build container;
4. `docker commit` of that container as ``aftershock/kind-node:v<version>``.

Cached by the hash of its inputs: a second build with nothing changed takes seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from aftershock.containers import engine
from aftershock.containers.images import base, binaries
from aftershock.containers.images import preloaded as images
from aftershock.containers.images.archive import Image
from aftershock.containers.images.base import Say, say_to_stderr
from aftershock.containers.images.docker import Docker
from aftershock.errors import UserError
from aftershock.go import kind_binary, toolchain
from aftershock.machine.cache import cache_root

REPOSITORY = "aftershock/kind-node"
REVISION = 1  # bump when the assembly below changes
CONTAINERD_WAIT = 60.0
BUILD_PREFIX = "aftershock-kind-build-"

def tag_for(kubernetes: str) -> str:
    return f"{REPOSITORY}:v{kubernetes}"


def kind_module() -> Path:
    """kind's Go module (its base image's files), from the module cache or the proxy."""
    info = toolchain._go(["mod", "download", "-json",
                          f"{kind_binary.KIND_MODULE}@{kind_binary.KIND_VERSION}"],
                         Path(tempfile.gettempdir()))
    directory = json.loads(info).get("Dir")
    if not directory:
        raise UserError(f"could not download {kind_binary.KIND_MODULE} "
                        f"{kind_binary.KIND_VERSION} from the Go module proxy")
    return Path(directory)


def inputs_key(base_tag: str, node: Path, control_plane: Path, planned: list[Image],
               cni: str) -> str:
    """What the image is made of: base, binaries (their build manifests), every image's tags,
    settings and inline files, and the pod network's manifest."""
    described = [[image.tag, image.aliases, image.entrypoint, image.env, image.user,
                  [(e.dest, e.mode, e.link, (e.data or b"").decode(errors="replace"))
                   for e in image.entries]] for image in planned]
    text = json.dumps([REVISION, base_tag, (node / "manifest.json").read_text(),
                       (control_plane / "manifest.json").read_text(), described, cni])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def build(kubernetes: str | None = None, say: Say = say_to_stderr, force: bool = False) -> str:
    """The node image's tag, built unless the engine holds one made of the same inputs."""
    version = toolchain.normalise_kubernetes(kubernetes)
    docker = Docker(engine.require())
    remove_stale_builds(docker)
    began = time.monotonic()
    cache = cache_root() / "kind"
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".tmp-pid{os.getpid()}-", dir=cache))
    try:
        say(f"[1/5] base image (kind {kind_binary.KIND_VERSION}'s files on Debian {base.SUITE})")
        base_tag = base.ensure(docker, kind_module(), kind_binary.KIND_VERSION, scratch, say)
        say("[2/5] control-plane binaries (the toolchain)")
        control_plane = toolchain.build(version, progress=say).directory
        say("[3/5] node binaries")
        node = binaries.build(version, say)
        kube = Path(toolchain.go_env("GOMODCACHE")) / f"k8s.io/kubernetes@v{version}"
        planned = images.plan(version, control_plane, node, kube,
                              images.net_rootfs(cache, say), images.listener(cache))
        cni = images.cni_manifest(planned[-1].tag)
        key = inputs_key(base_tag, node, control_plane, planned, cni)
        wanted = tag_for(version)
        if not force and docker.has_image(wanted) and _label(docker, wanted) == key:
            say(f"node image {wanted}: cached ({time.monotonic() - began:.0f}s)")
            return wanted
        say(f"[4/5] {len(planned)} images for the node")
        archives = images.write_all(planned, scratch / "images", say)
        say(f"[5/5] assembling {wanted}")
        assemble(docker, base_tag, version, node, archives, cni, wanted, key, say)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"node image {wanted} built in {time.monotonic() - began:.0f}s")
    return wanted


def _label(docker: Docker, tag: str) -> str:
    return docker.run("image", "inspect", "-f",
                      '{{ index .Config.Labels "io.aftershock.inputs" }}', tag, check=False)


def remove_stale_builds(docker: Docker) -> list[str]:
    """Build containers whose builder (the pid in the name) is gone: a build killed midway."""
    names = docker.run("ps", "-a", "--filter", f"name={BUILD_PREFIX}", "--format",
                       "{{.Names}}", check=False, timeout=30).split()
    stale = [name for name in names if not _alive(name.removeprefix(BUILD_PREFIX))]
    if stale:
        docker.run("rm", "-f", "-v", *stale, check=False, timeout=60)
    return stale


def _alive(pid: str) -> bool:
    return pid.isdigit() and Path(f"/proc/{pid}").exists()


def assemble(docker: Docker, base_tag: str, version: str, node: Path, archives: list[Path],
             cni: str, wanted: str, key: str, say: Say) -> None:
    container = f"{BUILD_PREFIX}{os.getpid()}"
    docker.run("run", "-d", "--entrypoint=sleep", "--name", container, "--security-opt",
               "seccomp=unconfined", "--network", "none", base_tag, "infinity")
    try:
        for name in ("kubelet", "kubeadm", "kubectl"):
            docker.run("cp", str(node / name), f"{container}:/usr/bin/{name}")
        docker.run("exec", container, "chmod", "0755", "/usr/bin/kubelet", "/usr/bin/kubeadm",
                   "/usr/bin/kubectl")
        _write(docker, container, "/kind/version", f"v{version}\n")
        _write(docker, container, "/kind/manifests/default-cni.yaml", cni)
        _import(docker, container, archives, say)
        docker.run("commit", "--change", 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]',
                   "--change", f"LABEL io.aftershock.inputs={key}", container, wanted)
    finally:
        docker.run("rm", "-f", "-v", container, check=False)


def _write(docker: Docker, container: str, path: str, text: str) -> None:
    docker.run("exec", "-i", container, "sh", "-c",
               f"mkdir -p {os.path.dirname(path)} && cat > {path}", stdin=text.encode())


def _import(docker: Docker, container: str, archives: list[Path], say: Say) -> None:
    """containerd in the build container, each archive imported (not unpacked: the node
    unpacks what it runs), then containerd stopped so the commit holds a quiet store."""
    docker.run("exec", "-d", container, "sh", "-c", "containerd > /var/log/containerd.log 2>&1")
    deadline = time.monotonic() + CONTAINERD_WAIT
    while docker.run("exec", container, "ctr", "version", check=False) == "" or \
            "Server" not in docker.run("exec", container, "ctr", "version", check=False):
        if time.monotonic() > deadline:
            raise UserError("containerd did not start in the build container: "
                            + docker.run("exec", container, "tail", "/var/log/containerd.log",
                                         check=False))
        time.sleep(0.5)  # containerd's readiness has no event to wait on
    for path in archives:
        docker.run("exec", "-i", container, "ctr", "--namespace=k8s.io", "images", "import",
                   "--all-platforms", "--no-unpack", "--digests", "-", stdin=path.read_bytes())
    listed = docker.run("exec", container, "ctr", "--namespace=k8s.io", "images", "list", "-q")
    say("  imported: " + ", ".join(name for name in listed.split()
                                   if not name.startswith(("import-", "sha256:"))))
    docker.run("exec", container, "pkill", "containerd", check=False)
    deadline = time.monotonic() + 30
    while docker.run("exec", container, "pgrep", "-x", "containerd", check=False):
        if time.monotonic() > deadline:
            raise UserError("containerd did not stop in the build container")
        time.sleep(0.2)
