"""The exact commands the kind provider runs, as argv lists (so tests can read them), and the one
function that runs them.

Every kind command names its cluster and our own kubeconfig file: nothing reads or writes the
user's ~/.kube/config. Node and component faults act on kind's node containers through the
container engine: a node fails when its container stops; a control-plane component stops when
its static-pod manifest leaves /etc/kubernetes/manifests (the kubelet removes the pod) and
restarts when its container is stopped through containerd's own client, ctr (the kubelet starts
it again; every kind node image has ctr, not every one has crictl).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from aftershock.errors import ClusterError
from aftershock.providers.kind_config import AUDIT_DIR_IN_NODE

MANIFESTS_IN_NODE = "/etc/kubernetes/manifests"


# --- kind -----------------------------------------------------------------------------------

def create_cluster(kind: str, name: str, config: Path, kubeconfig: Path) -> list[str]:
    return [kind, "create", "cluster", "--name", name, "--config", str(config),
            "--kubeconfig", str(kubeconfig)]


def delete_cluster(kind: str, name: str, kubeconfig: Path) -> list[str]:
    return [kind, "delete", "cluster", "--name", name, "--kubeconfig", str(kubeconfig)]


def get_kubeconfig(kind: str, name: str) -> list[str]:
    return [kind, "get", "kubeconfig", "--name", name]


def load_image_archive(kind: str, name: str, archive: Path) -> list[str]:
    """Copy an image archive (`docker save` format) into every node."""
    return [kind, "load", "image-archive", str(archive), "--name", name]


def load_image(kind: str, name: str, image: str, nodes: Sequence[str] = ()) -> list[str]:
    """Copy a locally built image into the nodes (all, or the named containers)."""
    argv = [kind, "load", "docker-image", image, "--name", name]
    if nodes:
        argv += ["--nodes", ",".join(nodes)]
    return argv


def kind_env(engine: str, kubeconfig: Path) -> dict[str, str]:
    """KUBECONFIG is ours even for a kind command that would otherwise fall back to the user's;
    an engine other than docker is chosen the way kind documents it."""
    env = {"KUBECONFIG": str(kubeconfig)}
    if engine != "docker":
        env["KIND_EXPERIMENTAL_PROVIDER"] = engine
    return env


# --- node containers ------------------------------------------------------------------------

def stop_node(engine: str, container: str) -> list[str]:
    """No grace: the node goes away at once, as when it loses power."""
    return [engine, "stop", "-t", "0", container]


def start_node(engine: str, container: str) -> list[str]:
    return [engine, "start", container]


def restart_node(engine: str, container: str, grace: int) -> list[str]:
    """A reboot: systemd in the node shuts everything down (kind stops a node with its
    SIGRTMIN+3) within ``grace`` seconds, and the node starts again with its disk; its tmpfs
    mounts (/run, /tmp) start empty, as a real node's do."""
    return [engine, "restart", "-t", str(grace), container]


def restart_kubelet(engine: str, container: str) -> list[str]:
    return in_node(engine, container, "systemctl", "restart", "kubelet")


def kubelet_unit(engine: str, container: str, verb: str) -> list[str]:
    """systemctl ``verb`` (stop, start, is-active) of the node's kubelet unit alone: its
    containers keep running while it is stopped."""
    return in_node(engine, container, "systemctl", verb, "kubelet")


def node_state(engine: str, container: str) -> list[str]:
    return [engine, "inspect", "--format", "{{.State.Running}}", container]


def copy_into(engine: str, container: str, source: Path, target: str) -> list[str]:
    return [engine, "cp", str(source), f"{container}:{target}"]


def in_node(engine: str, container: str, *argv: str) -> list[str]:
    return [engine, "exec", container, *argv]


def open_audit_log(engine: str, control_plane: str) -> list[str]:
    """The apiserver creates the audit log 0600 as root; the recorder reads it as the user."""
    return in_node(engine, control_plane, "chmod", "-R", "a+rX", AUDIT_DIR_IN_NODE)


def _manifest(component: str) -> str:
    return f"{MANIFESTS_IN_NODE}/{component}.yaml"


def _parked(component: str) -> str:
    return f"/etc/kubernetes/{component}.yaml.stopped"


def stop_component(engine: str, control_plane: str, component: str) -> list[str]:
    return in_node(engine, control_plane, "mv", _manifest(component), _parked(component))


def start_component(engine: str, control_plane: str, component: str) -> list[str]:
    return in_node(engine, control_plane, "mv", _parked(component), _manifest(component))


# Containers of the Kubernetes namespace of containerd whose CRI name is $1, and which of them
# has a running task.
RUNNING = ('for id in $(ctr -n k8s.io containers ls -q '
           '"labels.\\"io.kubernetes.container.name\\"==$1"); do '
           'ctr -n k8s.io tasks ls | awk -v id="$id" \'$1 == id && $3 == "RUNNING" {print id}\'; '
           'done')


def running_containers(engine: str, control_plane: str, component: str) -> list[str]:
    """Ids of the component's running containers (one line each; none when it is stopped)."""
    return in_node(engine, control_plane, "sh", "-c", RUNNING, "running", component)


def stop_containers(engine: str, control_plane: str, ids: Sequence[str]) -> list[str]:
    """SIGTERM to each container's task: it exits, and the kubelet starts it again."""
    return in_node(engine, control_plane, "sh", "-c",
                   'for id; do ctr -n k8s.io tasks kill "$id" || exit 1; done', "stop", *ids)


def build_image(engine: str, image: str, dockerfile: Path, context: Path) -> list[str]:
    return [engine, "build", "--tag", image, "--file", str(dockerfile), str(context)]


# --- Chaos Mesh -----------------------------------------------------------------------------

# --- running --------------------------------------------------------------------------------

def run(argv: Sequence[str], env: Mapping[str, str] | None = None,
        timeout: float = 600) -> str:
    """Run one command; its stdout, or a ClusterError with the command and its stderr."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        tail = "\n  ".join(done.stderr.strip().splitlines()[-15:])
        raise ClusterError(f"{' '.join(argv)} exited with {done.returncode}:\n  {tail}")
    return done.stdout
