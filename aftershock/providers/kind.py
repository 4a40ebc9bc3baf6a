"""The kind provider: real kubelets and containers, one kind cluster per shape, for users with a
container engine (a laptop, GitHub Actions). Its config comes from the cluster shape
(kind_config), every command it runs is built in kind_argv.

Faults act through the container engine: a node fails when its container stops and recovers
when it starts; a component stops when its static-pod manifest is moved away and restarts when
its container is stopped (the kubelet starts it again). A watch delay of the controller-manager
or scheduler is not offered (their kubeconfig lives in the node); an in-cluster implementation
gets a watch-delay sidecar instead (aftershock.faults.watchdelay.sidecar).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, watch

from aftershock.containers import engine as engines
from aftershock.containers.images import chaosmesh, registry
from aftershock.containers.images import node as built_node
from aftershock.containers.images import preloaded as images
from aftershock.errors import ClusterError
from aftershock.go import kind_binary, toolchain
from aftershock.kube import api as kube
from aftershock.kube import door
from aftershock.kube.manifests import apply_manifest
from aftershock.machine import certificates as pkimod
from aftershock.machine import processes as procs
from aftershock.machine.cache import cache_root
from aftershock.machine.capabilities import Capability, MissingCapability
from aftershock.machine.shape import Shape
from aftershock.providers import gates
from aftershock.providers import kind_argv as cmd
from aftershock.providers.base import ClusterInfo, ClusterRequest, kube_scheduler, register
from aftershock.providers.kind_config import (
    HostPaths,
    kind_config,
    node_containers,
    node_image,
    render,
)
from aftershock.providers.local import DATA, default_name

CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
READY_TIMEOUT = 180.0
COMPONENT_TIMEOUT = 120.0
REBOOT_GRACE_SECONDS = 30  # as systemd gives a unit to stop


@dataclass(frozen=True)
class KindPaths:
    workdir: Path

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    @property
    def config(self) -> Path:
        return self.workdir / "kind-config.yaml"

    @property
    def host(self) -> HostPaths:
        return HostPaths(self.workdir / "audit-policy.yaml", self.workdir / "audit",
                         self.workdir / "node-data")


def server_of(kubeconfig_text: str) -> str:
    config = yaml.safe_load(kubeconfig_text)
    return config["clusters"][0]["cluster"]["server"]


def parked(listing: str) -> list[str]:
    """Components whose manifest we moved away, from a listing of /etc/kubernetes."""
    suffix = ".yaml.stopped"
    return sorted(name.removesuffix(suffix) for name in listing.split() if name.endswith(suffix))


class KindCluster:
    """One kind cluster. ``start()`` creates it; ``down()`` deletes it and our work dir."""

    provider = "kind"
    capabilities = frozenset({
        Capability.NODE_FAILURE, Capability.NODE_DELETE, Capability.COMPONENT_RESTART,
        Capability.LOAD_IMAGE, Capability.DESTRUCTIVE, Capability.CHAOS_MESH,
        Capability.NODE_FILES, Capability.NODE_AGENT, Capability.CONTAINERS,
    })

    def __init__(self, shape: Shape, name: str | None = None, *, kubernetes_version: str,
                 engine: str, kind: str, image: str | None = None):
        self.shape = shape
        self.image = image
        self.chaos_mesh = False  # installed in this cluster
        self._loaded: dict[str, str] = {}  # image → the ID this cluster's nodes hold
        self.name = name or default_name()
        self.kubernetes_version = kubernetes_version
        # what the shape asks of this version, refused before anything starts if it lacks it
        gates.for_cluster(kubernetes_version, shape.gang_scheduling, shape.source)
        self.engine = engine
        self.kind = kind
        self.paths = KindPaths(procs.clusters_root() / self.name)
        self.containers = node_containers(self.name, shape)
        owner_pid, owner_start = procs.current_owner()
        self.state = procs.ClusterState(
            name=self.name, provider="kind", owner_pid=owner_pid, owner_start=owner_start,
            created=time.time(), workdir=str(self.paths.workdir), shape=shape.source,
            kubernetes_version=kubernetes_version, engine=engine,
            engine_host=os.environ.get("DOCKER_HOST", ""))

    # --- public handle ------------------------------------------------------------------

    @property
    def info(self) -> ClusterInfo:
        return ClusterInfo(self.name, "kind", self.paths.kubeconfig, self.state.server,
                           f"kind-{self.name}")

    @functools.cached_property
    def host(self) -> str:
        """This machine as the nodes see it (their default route): the API server in the
        control-plane container calls a local process's webhook there, not at 127.0.0.1."""
        return self._gateway()

    @property
    def audit_log(self) -> Path:
        return self.paths.host.audit_log

    @property
    def schedulers(self) -> list[dict[str, Any]]:
        """kubeadm's kube-scheduler in the node image, as it configures it."""
        return kube_scheduler(self.kubernetes_version, self.provider,
                              self.shape.gang_scheduling)

    @property
    def control_plane(self) -> str:
        return f"{self.name}-control-plane"

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> KindCluster:
        if self.paths.workdir.exists():
            raise ClusterError(f"cluster '{self.name}' already exists ({self.paths.workdir})")
        try:
            self._prepare()
            self._run(cmd.create_cluster(self.kind, self.name, self.paths.config,
                                         self.paths.kubeconfig), timeout=900)
            self._write_kubeconfig()
            self._run(cmd.open_audit_log(self.engine, self.control_plane))
            self._wait_nodes_ready()
        except BaseException:
            with contextlib.suppress(ClusterError):  # the first error is the one to see
                self.down()
            raise
        return self

    def down(self) -> None:
        """Delete the kind cluster and our work dir. Safe to call twice."""
        try:
            self._run(cmd.delete_cluster(self.kind, self.name, self.paths.kubeconfig))
        finally:
            procs.terminate(list(self.state.processes.values()))
            shutil.rmtree(self.paths.workdir, ignore_errors=True)

    def load_image(self, image: str) -> None:
        """Copy a locally built image into every node, unless this cluster already holds it as
        it is now (by its ID). kind's own check asks each node's crictl, which the node image
        built here does not have, so it copied the image again for every scenario (48 s for
        the watch proxy's image on four nodes)."""
        ident = self._run([self.engine, "image", "inspect", "--format", "{{.Id}}", image]).strip()
        if ident and self._loaded.get(image) == ident:
            return
        self._run(cmd.load_image(self.kind, self.name, image), timeout=900)
        self._loaded[image] = ident

    def load_image_archive(self, path: Path) -> None:
        """An image written as a `docker save` archive, into every node, and served by the
        cluster's registry (for a pod that pulls it whatever the node has)."""
        self._run(cmd.load_image_archive(self.kind, self.name, path), timeout=900)
        registry.add_archive(self._registry_store(), path)

    def _registry_store(self) -> Path:
        """The store of the registry every node pulls aftershock.local/... from, started the
        first time an image is served (recorded with the cluster, so it ends with it)."""
        store = self.paths.workdir / "registry"
        if "registry" in self.state.processes:
            return store
        store.mkdir(exist_ok=True)
        with registry.listen(self._gateway()) as sock:
            _, record = procs.spawn("registry", registry.command(store, sock.fileno()),
                                    self.paths.workdir / "registry.log",
                                    pass_fds=(sock.fileno(),))
            address = "{}:{}".format(*sock.getsockname()[:2])
        procs.adopt(self.state, "registry", record)
        settings = registry.hosts_toml(address)
        folder = f"{registry.HOSTS_DIR}/{registry.HOST}"
        for container in self.containers.values():
            self._run(cmd.in_node(self.engine, container, "sh", "-c",
                                  'mkdir -p "$1" && printf %s "$2" > "$1/hosts.toml"',
                                  "hosts", folder, settings))
        return store

    def _gateway(self) -> str:
        """The host's address on the nodes' network (their default route)."""
        table = self._run(cmd.in_node(self.engine, self.control_plane, "cat",
                                      "/proc/net/route"))
        for line in table.splitlines()[1:]:
            fields = line.split()
            if len(fields) > 2 and fields[1] == "00000000":
                raw = bytes.fromhex(fields[2])[::-1]  # little-endian
                return ".".join(str(b) for b in raw)
        raise ClusterError(f"node {self.control_plane} has no default route: {table.strip()}")

    def node_command(self, node: str, argv: list[str]) -> list[str]:
        """What runs ``argv`` on the node itself (its files, its clock)."""
        return cmd.in_node(self.engine, self._container(node), *argv)

    def copy_to_node(self, node: str, source: Path, target: str) -> None:
        """A file of this machine onto the node, at ``target`` (a program a fault runs there)."""
        self._run(cmd.copy_into(self.engine, self._container(node), source, target))

    def install_chaos_mesh(self) -> None:
        """Chaos Mesh's controller and daemon (built here) and the objects of its chart;
        returns once the controller is available and a daemon runs on every node (at once if
        they already were). See aftershock.containers.images.chaosmesh for what the daemon
        lacks."""
        if self.chaos_mesh:
            return

        def say(line: str) -> None:
            print(line, file=sys.stderr, flush=True)

        binaries = chaosmesh.build(say)
        rootfs = images.net_rootfs(cache_root() / "kind", say)
        # named as the image builds' scratch, which `cluster gc` removes if we were killed
        with tempfile.TemporaryDirectory(prefix=f".tmp-pid{os.getpid()}-",
                                         dir=cache_root() / "kind") as scratch:
            for archive in (chaosmesh.controller_image(binaries, Path(scratch)),
                            chaosmesh.daemon_archive(binaries, rootfs, Path(scratch))):
                self._run(cmd.load_image_archive(self.kind, self.name, archive), timeout=900)
        with kube.api_client(self.paths.kubeconfig, self.info.context) as api:
            core = kube.core(api)
            with contextlib.suppress(Exception):  # already there from an earlier scenario
                door.call(core.create_namespace, {"metadata": {"name": chaosmesh.NAMESPACE}})
            for doc in chaosmesh.crd_documents():
                apply_manifest(api, doc, chaosmesh.NAMESPACE)
            for doc in chaosmesh.render(binaries / "helm", self.kubernetes_version):
                apply_manifest(api, doc, chaosmesh.NAMESPACE)
            wait_available(api, chaosmesh.NAMESPACE, "chaos-controller-manager")
            wait_daemons(api, chaosmesh.NAMESPACE, "chaos-daemon")
        self.chaos_mesh = True

    # --- nodes --------------------------------------------------------------------------

    def stop_kubelet(self, node: str) -> None:
        """The node's container stops: kubelet, runtime and pods go at once."""
        self._run(cmd.stop_node(self.engine, self._container(node)))

    def start_kubelet(self, node: str) -> None:
        self._run(cmd.start_node(self.engine, self._container(node)))

    def reboot_node(self, node: str) -> None:
        self._run(cmd.restart_node(self.engine, self._container(node), REBOOT_GRACE_SECONDS))

    def restart_kubelet(self, node: str) -> None:
        self._run(cmd.restart_kubelet(self.engine, self._container(node)))

    def stop_kubelet_unit(self, node: str) -> None:
        """The node's kubelet stops (its unit); the node, its runtime and containers run on."""
        self._run(cmd.kubelet_unit(self.engine, self._container(node), "stop"))

    def start_kubelet_unit(self, node: str) -> None:
        self._run(cmd.kubelet_unit(self.engine, self._container(node), "start"))

    def kubelet_active(self, node: str) -> bool:
        try:  # is-active exits non-zero for a unit that is not active
            self._run(cmd.kubelet_unit(self.engine, self._container(node), "is-active"), 60)
        except ClusterError:
            return False
        return True

    def node_running(self, node: str) -> bool:
        answer = self._run(cmd.node_state(self.engine, self._container(node)))
        return answer.strip() == "true"

    def reset_nodes(self) -> list[str]:
        """Between scenarios: every node container and component running, every shape node
        present, uncordoned and with the shape's taints. Returns what was changed."""
        changed = [f"restarted {component}" for component in self._unpark()]
        for node in self.shape.node_names:
            if not self.node_running(node):
                self.start_kubelet(node)
                changed.append(f"started the container of node/{node}")
            elif not self.kubelet_active(node):  # a run killed while it had it stopped
                self.start_kubelet_unit(node)
                changed.append(f"started the kubelet of node/{node}")
        with kube.api_client(self.paths.kubeconfig, self.info.context) as api:
            changed += self._reset_node_objects(kube.core(api))
            # also when nothing changed here: a node failure reverted as its scenario ended
            # started the container, and its kubelet is Ready only some seconds later
            self._wait_nodes_ready(api)
        return changed

    def _reset_node_objects(self, core: Any) -> list[str]:
        changed = []
        present = {node.metadata.name: node for node in core.list_node().items}
        for spec in self.shape.nodes:
            current = present.get(spec.name)
            if current is None:  # deleted while its kubelet ran: it registers again on start
                self.stop_kubelet(spec.name)
                self.start_kubelet(spec.name)
                changed.append(f"re-registered node/{spec.name}")
                continue
            wanted = [taint.to_api() for taint in spec.taints]
            taints = [{"key": t.key, "effect": t.effect, **({"value": t.value} if t.value else {})}
                      for t in current.spec.taints or []
                      if not t.key.startswith("node.kubernetes.io/")]
            if current.spec.unschedulable or taints != wanted:
                door.call(core.patch_node, spec.name,
                          {"spec": {"unschedulable": None, "taints": wanted}})
                changed.append(f"reset node/{spec.name} to its shape")
        return changed

    def _container(self, node: str) -> str:
        if node not in self.containers:
            raise ClusterError(f"node/{node} is not part of kind cluster {self.name}")
        return self.containers[node]

    # --- control-plane components -------------------------------------------------------

    def stop_component(self, component: str) -> None:
        self._run(cmd.stop_component(self.engine, self.control_plane, component))
        self._wait_component(component, lambda ids: not ids, "stop")

    def start_component(self, component: str, kubeconfig: Path | None = None) -> None:
        self._refuse_kubeconfig(kubeconfig)
        self._run(cmd.start_component(self.engine, self.control_plane, component))
        self._wait_component(component, bool, "start")

    def restart_component(self, component: str, kubeconfig: Path | None = None) -> None:
        self._refuse_kubeconfig(kubeconfig)
        before = self._component_ids(component)
        if not before:
            return self.start_component(component)
        self._run(cmd.stop_containers(self.engine, self.control_plane, before))
        self._wait_component(component, lambda ids: bool(ids) and not set(ids) & set(before),
                             "restart")
        return None

    def running(self) -> dict[str, bool]:
        return {component: bool(self._component_ids(component)) for component in CONTROL_PLANE}

    def _refuse_kubeconfig(self, kubeconfig: Path | None) -> None:
        if kubeconfig is not None:
            raise MissingCapability("kind", Capability.WATCH_DELAY_FOR_COMPONENTS,
                                    "a component's kubeconfig lives in the node container")

    def _component_ids(self, component: str) -> list[str]:
        return self._run(cmd.running_containers(self.engine, self.control_plane,
                                                component)).split()

    def _unpark(self) -> list[str]:
        listing = self._run(cmd.in_node(self.engine, self.control_plane, "ls", "/etc/kubernetes"))
        started = []
        for component in parked(listing):
            self.start_component(component)
            started.append(component)
        return started

    def _wait_component(self, component: str, done, what: str) -> None:
        deadline = time.monotonic() + COMPONENT_TIMEOUT
        while not done(self._component_ids(component)):
            if time.monotonic() > deadline:
                raise ClusterError(f"{component} did not {what} within {COMPONENT_TIMEOUT:.0f}s "
                                   f"in {self.control_plane}")
            time.sleep(0.5)  # the kubelet's static-pod sync has no event we can watch

    # --- internals ----------------------------------------------------------------------

    def _run(self, argv: list[str], timeout: float = 600) -> str:
        return cmd.run(argv, env=cmd.kind_env(self.engine, self.paths.kubeconfig),
                       timeout=timeout)

    def _prepare(self) -> None:
        host = self.paths.host
        self.paths.workdir.mkdir(parents=True, mode=0o700)  # keys, tokens: ours alone
        host.audit_dir.mkdir(parents=True)
        for node in self.shape.node_names:
            host.node_dir(node).mkdir(parents=True)
        self.state.kubeconfig = str(self.paths.kubeconfig)
        self.state.save()
        shutil.copyfile(DATA / "audit-policy.yaml", host.audit_policy)
        config = kind_config(self.shape, self.name, self.kubernetes_version, host,
                             image=self.image)
        self.paths.config.write_text(render(config))

    def _write_kubeconfig(self) -> None:
        """Our own file, from kind itself; the user's default kubeconfig is never touched."""
        text = self._run(cmd.get_kubeconfig(self.kind, self.name))
        pkimod.write_private(self.paths.kubeconfig, text.encode())  # its client key
        self.state.server = server_of(text)
        self.state.save()

    def _wait_nodes_ready(self, api: Any = None) -> None:
        if api is not None:
            return wait_nodes_ready(api, self.name, set(self.shape.node_names))
        with kube.api_client(self.paths.kubeconfig, self.info.context) as owned:
            return wait_nodes_ready(owned, self.name, set(self.shape.node_names))


def wait_nodes_ready(api: Any, cluster: str, wanted: set[str]) -> None:
    """Until every wanted node is Ready, watching the nodes."""
    core = kube.core(api)
    listing = core.list_node()
    ready = {node.metadata.name for node in listing.items if _ready(node)}
    stream = watch.Watch()
    if not wanted <= ready:
        for event in stream.stream(core.list_node, timeout_seconds=int(READY_TIMEOUT),
                                   resource_version=listing.metadata.resource_version):
            node = event["object"]
            if event["type"] != "DELETED" and _ready(node):
                ready.add(node.metadata.name)
            else:
                ready.discard(node.metadata.name)
            if wanted <= ready:
                stream.stop()
                break
    if not wanted <= ready:
        raise ClusterError(f"kind cluster {cluster}: nodes {sorted(wanted - ready)} not Ready "
                           f"within {READY_TIMEOUT:.0f}s")


def wait_available(api: Any, namespace: str, name: str) -> None:
    """Until deployment/<namespace>/<name> has an available replica, watching it."""
    _watch_until(client.AppsV1Api(api).list_namespaced_deployment, namespace, name,
                 lambda status: (status.available_replicas or 0) > 0,
                 f"deployment/{namespace}/{name} not available")


def wait_daemons(api: Any, namespace: str, name: str) -> None:
    """Until daemonset/<namespace>/<name> runs a ready pod on every node it is meant for."""
    _watch_until(client.AppsV1Api(api).list_namespaced_daemon_set, namespace, name,
                 lambda status: bool(status.desired_number_scheduled)
                 and status.number_ready == status.desired_number_scheduled,
                 f"daemonset/{namespace}/{name} not ready on every node")


def _watch_until(lister: Any, namespace: str, name: str, done: Any, failure: str) -> None:
    """Watch one object until ``done(its status)``; a ClusterError after COMPONENT_TIMEOUT."""
    stream = watch.Watch()
    for event in stream.stream(lister, namespace, field_selector=f"metadata.name={name}",
                               timeout_seconds=int(COMPONENT_TIMEOUT)):
        if done(event["object"].status):
            stream.stop()
            return
    raise ClusterError(f"{failure} within {COMPONENT_TIMEOUT:.0f}s")


def _ready(node: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True"
               for c in (node.status.conditions or []))


class KindProvider:
    name = "kind"

    def __init__(self, kubernetes_version: str | None = None):
        self.kubernetes_version = kubernetes_version

    def up(self, shape: Shape, name: str | None = None) -> KindCluster:
        engine = engines.require()  # first: without an engine, nothing else matters
        version = toolchain.normalise_kubernetes(shape.kubernetes_version
                                                 or self.kubernetes_version)
        return KindCluster(shape, name, kubernetes_version=version, engine=engine,
                           kind=kind_binary.require(), image=node_image_for(version)).start()


def _engine_answers(request: ClusterRequest) -> None:
    engines.require()  # at once: no engine, no kind


@register("kind", capabilities=KindCluster.capabilities, check=_engine_answers)
def open_cluster(request: ClusterRequest, shape: Shape | None) -> KindCluster:
    return KindProvider(request.kubernetes_version).up(shape, request.name)


def node_image_for(version: str) -> str:
    """The node image: AFTERSHOCK_KIND_IMAGE if set (e.g. kind's published one, where a
    registry answers), else the one `aftershock kind build-image` makes here, built now if the
    engine does not hold it (cached: seconds when it does). Building needs root (mmdebstrap,
    chroot): anyone else gets kind's published image, which their engine pulls."""
    if os.environ.get("AFTERSHOCK_KIND_IMAGE"):
        return os.environ["AFTERSHOCK_KIND_IMAGE"]
    return built_node.build(version) if os.geteuid() == 0 else node_image(version)


@procs.teardown("kind")
def delete_recorded(state: procs.ClusterState) -> None:
    """A kind cluster a dead run left (`aftershock cluster gc` / `down`)."""
    kind = kind_binary.find()
    if kind is None:
        return
    kubeconfig = Path(state.kubeconfig or Path(state.workdir) / "kubeconfig")
    # Without an answering engine its containers are not running either; gc goes on.
    with contextlib.suppress(ClusterError):
        # the engine it was made in, not this process's ("": the default one)
        env = {**cmd.kind_env(state.engine or "docker", kubeconfig),
               "DOCKER_HOST": state.engine_host}
        cmd.run(cmd.delete_cluster(kind, state.name, kubeconfig), env=env)
