"""Steps about the implementation under test, through the concepts its profile maps."""

from __future__ import annotations

from aftershock.bdd.steps.history import judge_created, judge_deleted_none, never_more
from aftershock.bdd.steps.nodes import cordon_and_drain, node_of_pod
from aftershock.concepts import NoConcept, concept, replica_group_selector
from aftershock.concepts.dra import KUBELET_DRA_STATE
from aftershock.concepts.node_reads import CDI_LISTING, REGISTRY_LISTING
from aftershock.faults.component_delay import DelayedWatch
from aftershock.faults.drain import DrainOptions
from aftershock.faults.watchdelay import Rule, Upstream, WatchDelay
from aftershock.faults.watchdelay.sidecar import SidecarWatchDelay
from aftershock.kube import api as kube
from aftershock.kube import writes
from aftershock.machine import yamlsrc
from aftershock.machine.capabilities import Capability, MissingCapability
from aftershock.profile.placeholders import fill
from aftershock.properties import Judgement
from aftershock.providers.base import host_of
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.sut.in_cluster import InClusterImplementation
from aftershock.sut.node_state import NodeStateWatch
from aftershock.sut.runner import Implementation, ca_data
from aftershock.timeline.resources import custom


def implementation_of(scenario: Scenario):
    if "implementation" not in scenario.facts:
        raise StepFailed("no earlier step started the implementation under test")
    return scenario.facts["implementation"]


@given("the implementation under test is running")
def implementation_running(scenario: Scenario) -> None:
    profile = scenario.facts.get("profile")
    if profile is None:
        raise NoConcept("no implementation profile given (--profile)")
    if profile.start is None and profile.in_cluster is None:  # a built-in controller: running
        for manifest in profile.manifests:
            scenario.timeline.mark(f"install {manifest}")
        _record_concepts(scenario, profile)
        scenario.remember("implementation", None)
        return
    workdir = (scenario.report_dir or scenario.cluster.info.kubeconfig.parent) / "implementation"
    node_state = node_state_of(profile)
    if node_state is not None:  # checked before anything is installed
        scenario.require(Capability.NODE_FILES)
    if runs_in_cluster(scenario, profile):
        _install_in_cluster(scenario, profile, workdir)
        _watch_node_state(scenario, node_state, workdir)
        return
    server, ca = ca_data(scenario.cluster.info.kubeconfig)
    implementation = Implementation(profile, scenario.api, scenario.namespace, workdir,
                                    server, ca, getattr(scenario.cluster, "state", None),
                                    host_of(scenario.cluster),
                                    audit_log=getattr(scenario.cluster, "audit_log", None))
    scenario.on_cleanup(f"uninstall {profile.name}", implementation.uninstall)
    implementation.install()
    scenario.redactor.add(implementation.token)
    _record_concepts(scenario, profile)
    scenario.on_cleanup(f"stop {profile.name}", implementation.stop)
    implementation.start()
    scenario.timeline.mark(f"{profile.name} started")
    scenario.remember("implementation", implementation)
    _watch_node_state(scenario, node_state, workdir)


def node_state_of(profile) -> str | None:
    """The file on each node its concept is judged from (a DRA driver: the kubelet's
    checkpoint), or None."""
    driver = profile.concept("device_driver") or {}
    return KUBELET_DRA_STATE if driver.get("node_state") == "kubelet" else None


def _watch_node_state(scenario: Scenario, path: str | None, workdir) -> None:
    """A loop on each node over its kubelet's checkpoint, one over its CDI spec files and one
    over its kubelet's plugin sockets."""
    if path is None:
        return
    nodes = sorted(node.metadata.name for node in kube.core(scenario.api).list_node().items)
    state = getattr(scenario.cluster, "state", None)
    for key, watch in (("node state", NodeStateWatch(scenario.cluster, path, nodes, workdir,
                                                     state)),
                       ("cdi specs", NodeStateWatch(scenario.cluster, "cdi", nodes, workdir,
                                                    state, read=CDI_LISTING,
                                                    label="cdi-specs")),
                       ("registrations", NodeStateWatch(scenario.cluster, "registry", nodes,
                                                        workdir, state, read=REGISTRY_LISTING,
                                                        label="plugin-registry"))):
        scenario.on_cleanup(f"stop reading the nodes' {key}", watch.stop)
        watch.start()
        scenario.remember(key, watch)


def runs_in_cluster(scenario: Scenario, profile) -> bool:
    """In the cluster when the profile says how and the provider can load its image (kind);
    else as a process. A profile with only the in-cluster form needs a provider that can."""
    if profile.in_cluster is None:
        return False
    can_load = Capability.LOAD_IMAGE in scenario.cluster.capabilities
    if profile.start is None and not can_load:
        raise MissingCapability(scenario.cluster.info.provider, Capability.LOAD_IMAGE,
                                f"profile {profile.name} installs its implementation in the "
                                "cluster only (install_in_cluster); run it with --cluster=kind")
    return can_load


def _install_in_cluster(scenario: Scenario, profile, workdir) -> None:
    implementation = InClusterImplementation(profile, scenario.cluster, scenario.api,
                                             scenario.namespace, workdir)
    scenario.on_cleanup(f"uninstall {profile.name}", implementation.uninstall)
    scenario.on_cleanup(f"keep the logs of {profile.name}", implementation.save_logs)
    scenario.on_cleanup(f"keep what the workloads of {profile.name} logged on the nodes",
                        implementation.save_node_logs)
    implementation.install()
    _record_concepts(scenario, profile)
    scenario.timeline.mark(f"{profile.name} started in the cluster")
    scenario.remember("implementation", implementation)


def _record_concepts(scenario: Scenario, profile) -> None:
    """The custom resources the features speak of join the timeline once they are served, and
    so does every kind the implementation's RBAC lets it write (its own Services, Roles,
    Ingresses ...): an oracle over what it did is then judged, not UNKNOWN for a kind nobody
    watched."""
    if scenario.recorder is None:
        return
    for mapping in profile.concepts.values():
        for resource in _resources(mapping):
            scenario.recorder.watch(custom(resource["group"], resource["version"],
                                           resource["plural"]))
    scenario.recorder.record([*profile.written_kinds(), *scenario.facts.get("records", ())])


def _resources(mapping: dict) -> list[dict]:
    """The custom resources a concept's mapping names (its own, and a part's such as the gang's
    per-replica status object)."""
    found = [mapping["resource"]] if isinstance(mapping.get("resource"), dict) else []
    for value in mapping.values():
        if isinstance(value, dict) and value is not mapping.get("resource"):
            found += _resources(value)
    return [r for r in found if r.get("group")]


def api_version(resource: dict) -> str:
    return f"{resource['group']}/{resource['version']}" if resource["group"] else \
        resource["version"]


def dynamic_resource(scenario: Scenario, resource: dict):

    client = scenario.facts.get("dynamic client")
    if client is None:
        client = scenario.remember("dynamic client", kube.dynamic_client(scenario.api))
    return client.resources.get(api_version=api_version(resource), kind=resource["kind"])


HOLD = "aftershock.io/hold"  # released by kube.release_finalizers when the namespace goes


def _create_group(scenario: Scenario, name: str, replicas: int,
                  extra: dict[str, object] | None = None) -> None:
    group = concept(scenario, "replica_group")
    resource = group["resource"]
    body = concept_body(scenario, group, name, replicas=replicas)
    wanted = {group["replicas_path"]: replicas, **(extra or {})}
    changed = scenario.timeline.mark(
        f"create {resource['kind'].lower()}/{scenario.namespace}/{name}")
    scenario.remember(desired_since(name), changed.mono)
    writes.create(dynamic_resource(scenario, resource), body, scenario.namespace,
                  fields=wanted)


def concept_body(scenario: Scenario, mapping: dict, name: str, **values: object) -> dict:
    """A new object of a concept: the profile's manifest for it ({name}, {namespace} and
    ``values`` filled in), or a bare object of its kind."""
    resource = mapping["resource"]
    if mapping.get("manifest"):
        path = scenario.facts["profile"].resolve(mapping["manifest"])
        return yamlsrc.manifests(path, fill(path.read_text(), {
            "name": name, "namespace": scenario.namespace, **values}))[0]
    return {"apiVersion": api_version(resource), "kind": resource["kind"],
            "metadata": {"name": name}}


def desired_since(name: str) -> str:
    """The fact: when a step last changed the replica group's desired state. Counts judge the
    episode from there (an earlier drain's evictions are no part of a later scale-down)."""
    return f"replica group {name} desired since"


def _group_field(scenario: Scenario, field: str, what: str) -> str:
    path = concept(scenario, "replica_group").get(field)
    if path is None:
        raise NoConcept(f"profile {scenario.facts['profile'].name} maps no {what} "
                        f"(replica_group.{field})")
    return path


@given("a replica group {name:Name} with {replicas:d} replicas")
def a_replica_group(scenario: Scenario, name: str, replicas: int) -> None:
    _create_group(scenario, name, replicas)


@given("a replica group {name:Name} with {replicas:d} replicas and a head pod")
def a_replica_group_with_head(scenario: Scenario, name: str, replicas: int) -> None:
    """The head pod is switched on where the profile maps a switch (head_path); where it maps
    none, the implementation always makes one (a RayCluster's head)."""
    _group_field(scenario, "singleton_selector", "singleton pod selector")
    switch = concept(scenario, "replica_group").get("head_path")
    _create_group(scenario, name, replicas, {switch: True} if switch else None)


@given("a replica group {name:Name} with {replicas:d} replicas whose pods are held by a "
       "finalizer")
def a_held_replica_group(scenario: Scenario, name: str, replicas: int) -> None:
    path = _group_field(scenario, "finalizer_path", "pod finalizer")
    # Kubernetes keeps finalizers in lists; an implementation's own field may take one name.
    _create_group(scenario, name, replicas,
                  {path: [HOLD] if path.endswith("finalizers") else HOLD})


@when("I scale the replica group {name:Name} to {replicas:d}")
def scale_group(scenario: Scenario, name: str, replicas: int) -> None:
    group = concept(scenario, "replica_group")
    if group.get("scalable") is False:
        raise NoConcept(f"profile {scenario.facts['profile'].name}'s replica group cannot be "
                        "scaled (replica_group.scalable: false)")
    resource = group["resource"]
    changed = scenario.timeline.mark(
        f"scale {resource['kind'].lower()}/{scenario.namespace}/{name} to {replicas}")
    scenario.remember(desired_since(name), changed.mono)
    writes.set_field(dynamic_resource(scenario, resource), name, scenario.namespace,
                     group["replicas_path"], replicas)


@then("at no point did the replica group {name:Name} have more than {count:d} live pods",
      check="never_more_than")
def group_never_more_than(scenario: Scenario, name: str, count: int) -> None:
    never_more(scenario, replica_group_selector(scenario, name), count,
               f"live pods of replica group {name}")


@then("at no point did the replica group {name:Name} have more than 1 live head pod",
      check="never_more_than")
def head_stays_single(scenario: Scenario, name: str) -> None:
    selector = {key: fill(value, {"name": name}) for key, value in
                concept(scenario, "replica_group").get("singleton_selector", {}).items()}
    if not selector:
        raise NoConcept(f"profile {scenario.facts['profile'].name} maps no singleton pod "
                        "selector (replica_group.singleton_selector)")
    never_more(scenario, selector, 1, f"live head pods of replica group {name}")


@then("exactly {count:d} pods of the replica group {name:Name} were marked for deletion",
      check="exactly")
def exactly_marked(scenario: Scenario, count: int, name: str) -> None:
    replica_group_selector(scenario, name)  # no concept: skipped before judging
    scenario.judge(Judgement("exactly", {
        "event": f"a pod of the replica group {name} was marked for deletion", "count": count,
        "context": scenario.context().to_json(),
        "since": scenario.facts.get(desired_since(name))}))


class SutWatchDelay:
    """Fault: the implementation restarts with a kubeconfig through a WatchDelay proxy."""

    def __init__(self, implementation, rules: list[Rule]):
        self.implementation, self.rules, self.proxy = implementation, rules, None

    @property
    def description(self) -> str:
        what = ", ".join(f"{r.resource} +{r.delay:g}s" for r in self.rules)
        return f"watches of {self.implementation.profile.name} delayed ({what})"

    def apply(self) -> None:
        workdir = self.implementation.workdir / "proxy"
        workdir.mkdir(parents=True, exist_ok=True)
        upstream = Upstream.from_kubeconfig(self.implementation.kubeconfig)
        self.proxy = WatchDelay(upstream, workdir / "implementation-proxy.jsonl",
                                self.implementation.profile.name).start()
        self.proxy.set_rules(self.rules)
        self.implementation.stop()
        self.implementation.start(self.proxy.write_kubeconfig(workdir / "kubeconfig"))

    def revert(self) -> None:
        self.implementation.stop()
        if self.proxy is not None:
            self.proxy.stop()


def _implementation_delay(implementation, rule: Rule):
    """A process restarts behind a local proxy; an in-cluster one gets a proxy sidecar."""
    if isinstance(implementation, InClusterImplementation):
        return SidecarWatchDelay(implementation, [rule])
    return SutWatchDelay(implementation, [rule])


def delay_implementation(scenario: Scenario, rule: Rule) -> None:
    """'the pod watch of the implementation is delayed by N seconds' (see steps.nodes): its
    process restarts behind a proxy, or, for a built-in controller, its component does."""
    if rule.delay <= 0:
        return
    implementation = implementation_of(scenario)
    if implementation is not None:
        scenario.inject(_implementation_delay(implementation, rule))
        return

    target = scenario.facts["profile"].watch_delay_target
    if target is None:
        raise StepFailed(f"profile {scenario.facts['profile'].name} has no process and no "
                         "watch_delay_target: nothing to delay")
    scenario.require(Capability.WATCH_DELAY_FOR_COMPONENTS)  # a built-in controller's
    workdir = (scenario.report_dir or scenario.cluster.paths.workdir) / "proxy"
    scenario.inject(DelayedWatch(scenario.cluster, target, [rule], workdir))


def implementation_actor(scenario: Scenario) -> str:
    return scenario.implementation_identity()


def group_pod_actor(scenario: Scenario) -> str:
    """Who makes the group's pods: the profile's pod_actor (an operator whose Deployment's
    ReplicaSet does it), else the implementation itself."""
    return concept(scenario, "replica_group").get("pod_actor") or implementation_actor(scenario)


@then("the implementation created exactly {count:d} pods of the replica group {name:Name}",
      check="created_by")
def implementation_created(scenario: Scenario, count: int, name: str) -> None:
    actor = group_pod_actor(scenario)
    judge_created(scenario, replica_group_selector(scenario, name), count, actor, actor,
                  f"replica group {name}", exact=True)


@then("the implementation deleted no pod of the replica group {name:Name}", check="deleted_by")
def implementation_deleted_none(scenario: Scenario, name: str) -> None:
    actor = group_pod_actor(scenario)
    judge_deleted_none(scenario, replica_group_selector(scenario, name), actor, actor,
                       f"replica group {name}", exact=True)


@when("I cordon and drain the node running a pod of the replica group {name:Name}")
def drain_node_of_group(scenario: Scenario, name: str) -> None:
    node = node_of_pod(scenario, name, replica_group_selector(scenario, name))
    cordon_and_drain(scenario, node, DrainOptions(ignore_daemonsets=True))  # node maintenance


@when("I cordon and drain the node running a pod of the replica group {name:Name}, deleting "
      "emptyDir data")
def drain_node_of_group_emptydir(scenario: Scenario, name: str) -> None:
    """kubectl drain --delete-emptydir-data: pods that keep scratch data (a Ray node's logs)
    go too."""
    node = node_of_pod(scenario, name, replica_group_selector(scenario, name))
    cordon_and_drain(scenario, node, DrainOptions(ignore_daemonsets=True,
                                                  delete_emptydir_data=True))
