"""Steps that fault what runs on a node (a reboot, a kubelet restart, a driver's plugin stopped
and started) and judge the driver contract after them (D8-D11), from the API server's record
and each node's kubelet checkpoint."""

from __future__ import annotations

import time

from aftershock.bdd.steps.dra import claiming_pod_spec, create_pod, device_claim
from aftershock.bdd.steps.implementation import implementation_of
from aftershock.bdd.steps.nodes import NODE_WATCHES, node_of_named_pod, node_of_pod
from aftershock.bdd.steps.workloads import create_workload
from aftershock.concepts import concept
from aftershock.concepts.node_reads import SILENT_SECONDS
from aftershock.faults import node_agent, plugin_calls
from aftershock.kube import api as kube
from aftershock.kube import door, workloads
from aftershock.machine.capabilities import Capability
from aftershock.profile import files as profile_files
from aftershock.profile.load import load_profile
from aftershock.properties import Judgement
from aftershock.properties.dra_node import (
    KUBELET_RETRY,
    cdi_pending,
    heard_since,
    runs_since,
    unprepared_all,
)
from aftershock.properties.dra_node import pending as d16_pending
from aftershock.properties.dra_upgrade import registry_pending
from aftershock.properties.dra_upgrade import runs as upgrade_runs
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.sut.in_cluster import InClusterImplementation


def _claimants_on(scenario: Scenario, node: str) -> list[str]:
    """The live pods on ``node`` that use a claim (a driver's own pods are none of D8's)."""
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, field_selector=f"spec.nodeName={node}").items
    return sorted(p.metadata.name for p in pods if not p.metadata.deletion_timestamp
                  and p.status.phase not in ("Succeeded", "Failed") and p.spec.resource_claims)


def reboot(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.NODE_AGENT)
    scenario.remember("rebooted node", {"node": node, "since": scenario.now,
                                        "wall": time.time(),
                                        "pods": _claimants_on(scenario, node)})
    watches = [scenario.facts[key] for key in NODE_WATCHES if key in scenario.facts]

    def after() -> None:
        for watch in watches:
            watch.resume(node)
    since = scenario.now
    scenario.inject(node_agent.NodeReboot(scenario.cluster, node, after if watches else None))
    _agent_back(scenario, node, since, "node")


@when("node {node:Name} reboots")
def node_reboots(scenario: Scenario, node: str) -> None:
    """Everything on it shuts down; it boots with its disk, its tmpfs (/run) empty."""
    reboot(scenario, node)


@when("the node running a pod of {name:Name} reboots")
def node_of_pod_reboots(scenario: Scenario, name: str) -> None:
    reboot(scenario, node_of_pod(scenario, name))


def _agent_back(scenario: Scenario, node: str, since: float, what: str) -> None:
    """What a fault on ``node`` stopped (``what``: the node, its kubelet, the driver's plugin)
    is back: D12 judges the node's ResourceSlices from then, and D16 starts its bound again."""
    back = {"node": node, "what": what, "since": since, "back": scenario.now}
    scenario.remember("node agent back", back)
    scenario.facts.setdefault("node downs", []).append(back)


def restart_kubelet(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.NODE_AGENT)
    since = scenario.now
    scenario.inject(node_agent.KubeletRestart(scenario.cluster, node))
    _agent_back(scenario, node, since, "kubelet")


@when("the kubelet of node {node:Name} restarts")
def kubelet_restarts(scenario: Scenario, node: str) -> None:
    restart_kubelet(scenario, node)


@when("the kubelet of the node running pod {pod:Name} restarts")
def kubelet_of_named_pod_restarts(scenario: Scenario, pod: str) -> None:
    restart_kubelet(scenario, node_of_named_pod(scenario, pod))


@when("the kubelet of the node running a pod of {name:Name} restarts")
def kubelet_of_pod_restarts(scenario: Scenario, name: str) -> None:
    restart_kubelet(scenario, node_of_pod(scenario, name))


def stop_kubelet(scenario: Scenario, node: str) -> None:
    scenario.require(Capability.NODE_AGENT)
    fault = node_agent.KubeletStopped(scenario.cluster, node)
    scenario.remember("stopped kubelet", {"node": node, "since": scenario.now,
                                          "fault": fault.description})
    scenario.inject(fault)


@when("the kubelet of node {node:Name} stops")
def kubelet_stops(scenario: Scenario, node: str) -> None:
    """Its unit stops; the node's containers run on, and nothing there answers for them."""
    stop_kubelet(scenario, node)


@when("the kubelet of the node running a pod of {name:Name} stops")
def kubelet_of_pod_stops(scenario: Scenario, name: str) -> None:
    stop_kubelet(scenario, node_of_pod(scenario, name))


@when("the kubelet starts again")
def kubelet_starts(scenario: Scenario) -> None:
    """Returns once the node's Ready condition has a heartbeat from after the start."""
    stopped = scenario.recall("stopped kubelet")
    node, started = stopped["node"], time.time()
    scenario.end_fault(stopped["fault"])
    _heard_from(scenario, node, started)
    _agent_back(scenario, node, stopped["since"], "kubelet")


def _heard_from(scenario: Scenario, node: str, started: float) -> None:
    """Waits for a Ready heartbeat of ``node`` from after ``started`` (this machine's clock)."""
    held, _ = scenario.wait_until(
        lambda state: heard_since(state.get("nodes", "", node), started), 120)
    if not held:
        raise StepFailed(f"node/{node} had no Ready heartbeat 120s after its kubelet started")


def proxy_plugin(scenario: Scenario, node: str) -> None:
    """The kubelet of ``node`` reaches the driver's plugin through aftershock's proxy, which
    it registers as a newer instance of the plugin; returns once it has."""
    scenario.require(Capability.NODE_AGENT)
    workdir = scenario.report_dir or scenario.cluster.info.kubeconfig.parent
    proxy = plugin_calls.PluginProxied(
        scenario.cluster, node, concept(scenario, "device_driver")["driver"],
        workdir / f"draproxy-{node}.log", getattr(scenario.cluster, "state", None))
    try:
        scenario.inject(proxy)
    except plugin_calls.ProxyFailed as exc:
        raise StepFailed(str(exc)) from None
    scenario.remember("plugin proxy", proxy)


@given("the kubelet of node {node:Name} calls the driver's plugin through a proxy")
def kubelet_proxied(scenario: Scenario, node: str) -> None:
    """Before any pod with a claim is placed there: a kubelet keeps calling an instance of the
    plugin it is connected to."""
    proxy_plugin(scenario, node)


def _proxy(scenario: Scenario) -> plugin_calls.PluginProxied:
    if "plugin proxy" not in scenario.facts:
        raise StepFailed("no earlier step put a proxy between a kubelet and the driver's "
                         "plugin (\"Given the kubelet of node node-1 calls the driver's "
                         "plugin through a proxy\")")
    return scenario.facts["plugin proxy"]


def go_in_call(scenario: Scenario, action: str, method: str) -> None:
    """Arms the proxy: the plugin's next answer to ``method`` is held while the kubelet stops
    or restarts (fired by a later step's doing; "the driver's plugin answered that call"
    waits for it)."""
    fault = plugin_calls.KubeletGoesInCall(_proxy(scenario), method, action)
    scenario.inject(fault)
    scenario.remember("call fault", fault)


@when("the kubelet stops as the driver's plugin answers its next NodePrepareResources call")
def stops_in_prepare(scenario: Scenario) -> None:
    go_in_call(scenario, "stop", "NodePrepareResources")


@when("the kubelet restarts as the driver's plugin answers its next NodePrepareResources call")
def restarts_in_prepare(scenario: Scenario) -> None:
    go_in_call(scenario, "restart", "NodePrepareResources")


@when("the kubelet stops as the driver's plugin answers its next NodeUnprepareResources call")
def stops_in_unprepare(scenario: Scenario) -> None:
    go_in_call(scenario, "stop", "NodeUnprepareResources")


@when("the kubelet restarts as the driver's plugin answers its next NodeUnprepareResources "
      "call")
def restarts_in_unprepare(scenario: Scenario) -> None:
    go_in_call(scenario, "restart", "NodeUnprepareResources")


@when("within {seconds:d} seconds the driver's plugin answered that call")
def answered_in_call(scenario: Scenario, seconds: int) -> None:
    """Waits for the proxy to say it held the answer and stopped or restarted the kubelet; a
    restarted kubelet is waited for until Ready again, a stopped one stays stopped (until
    "the kubelet starts again")."""
    fault: plugin_calls.KubeletGoesInCall = scenario.recall("call fault")
    node, bound = fault.proxy.node, scenario.now + seconds
    # the proxy's log is on this machine, not recorded: no event wakes this, so ask often
    while scenario.now < bound and fault.fired() is None and fault.failure() is None:
        scenario.wait_until(lambda state: False, min(0.2, bound - scenario.now))
    fired = fault.fired()
    if fired is None:
        calls = [line.fields.get("method") for line in fault.proxy.lines()
                 if line.event == "call"]
        raise StepFailed(fault.failure() or f"no {fault.method} call of the driver's plugin "
                         f"from the kubelet of node/{node} was answered within {seconds}s "
                         f"(the proxy passed {len(calls)} calls: {', '.join(calls) or 'none'})")
    since = scenario.now - (time.time() - fired.time)
    scenario.timeline.mark(fault.description)
    if fault.action == "stop":
        scenario.remember("stopped kubelet", {"node": node, "since": since,
                                              "fault": fault.description})
        return
    _heard_from(scenario, node, fired.time)
    _agent_back(scenario, node, since, "kubelet")


@when("a pod {name:Name} that claims a device is placed on the node of the proxy")
def claimant_on_proxied(scenario: Scenario, name: str) -> None:
    claimant_on(scenario, name, _proxy(scenario).node)


def _plugin_daemonset(scenario: Scenario) -> tuple[object, str]:
    """The implementation run in the cluster and the name of its DaemonSet (the driver's
    plugin, as its profile installs it)."""
    scenario.require(Capability.NODE_AGENT)
    implementation = implementation_of(scenario)
    spec = getattr(implementation, "spec", None)  # an implementation run in the cluster
    kind, name = spec.workload if spec is not None else (None, None)
    if kind != "DaemonSet":
        raise StepFailed("the driver's plugin is the DaemonSet its profile installs "
                         "(install_in_cluster.daemonset); this implementation has none")
    return implementation, name


def stop_plugin(scenario: Scenario, node: str) -> None:
    """The driver's node agent (the DaemonSet its profile installs) leaves ``node``."""
    implementation, name = _plugin_daemonset(scenario)
    fault = node_agent.AgentStopped(scenario.api, node, implementation.namespace, name)
    scenario.remember("plugin stopped at", scenario.now)
    try:
        scenario.inject(fault)
    except node_agent.FaultRefused as exc:
        raise StepFailed(str(exc)) from None
    scenario.remember("stopped plugin", fault.description)


def _plugin_node(scenario: Scenario) -> str:
    """The node the driver's plugin was stopped on (its fault's description ends naming it)."""
    return scenario.recall("stopped plugin").rsplit("node/", 1)[1]


@when("the driver's plugin on node {node:Name} stops")
def plugin_stops(scenario: Scenario, node: str) -> None:
    stop_plugin(scenario, node)


@when("the driver's plugin on the node running a pod of {name:Name} stops")
def plugin_of_pod_stops(scenario: Scenario, name: str) -> None:
    stop_plugin(scenario, node_of_pod(scenario, name))


def force_delete_on(scenario: Scenario, name: str, node: str) -> None:
    """Its API object goes at once, and its generated claim after it, while the kubelet there
    cannot unprepare the claim yet (a graceful delete would wait for that)."""
    pods = kube.core(scenario.api).list_namespaced_pod(
        scenario.namespace, label_selector=workloads.label_selector(name),
        field_selector=f"spec.nodeName={node}").items
    live = sorted(p.metadata.name for p in pods if not p.metadata.deletion_timestamp)
    if not live:
        raise StepFailed(f"no pod of {name} on node/{node}")
    scenario.timeline.mark(f"force-delete pod/{scenario.namespace}/{live[0]}")
    door.delete(kube.core(scenario.api).delete_namespaced_pod, live[0], scenario.namespace,
                grace_period_seconds=0)


@when("I force-delete the pod of {name:Name} on the node the driver's plugin left")
def force_delete_on_plugin_node(scenario: Scenario, name: str) -> None:
    force_delete_on(scenario, name, _plugin_node(scenario))


@when("I force-delete the pod of {name:Name} on the node whose kubelet stopped")
def force_delete_on_stopped_kubelet(scenario: Scenario, name: str) -> None:
    force_delete_on(scenario, name, scenario.recall("stopped kubelet")["node"])


def claimant_on(scenario: Scenario, name: str, node: str) -> None:
    """Its claim allocated by the scheduler from that node's devices (a node affinity, not a
    nodeName): the first free one, often the device a force-deleted pod's claim held there."""
    spec = claiming_pod_spec({"resourceClaimTemplateName": device_claim(
        scenario, "ResourceClaimTemplate", f"{name}-device")})
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    create_pod(scenario, name, spec)


@when("a pod {name:Name} that claims a device is placed on the node the driver's plugin left")
def claimant_on_plugin_node(scenario: Scenario, name: str) -> None:
    claimant_on(scenario, name, _plugin_node(scenario))


@when("a pod {name:Name} that claims a device is placed on the node whose kubelet stopped")
def claimant_on_stopped_kubelet(scenario: Scenario, name: str) -> None:
    """Scheduled there while the node still reads Ready (its lease is not stale yet)."""
    claimant_on(scenario, name, scenario.recall("stopped kubelet")["node"])


@when("the driver's plugin starts again")
def plugin_starts(scenario: Scenario) -> None:
    """Returns once the plugin's pod is Ready on that node again."""
    stopped = scenario.recall("stopped plugin")
    scenario.remember("plugin returning", scenario.now)
    scenario.end_fault(stopped)
    scenario.remember("plugin back", scenario.now)
    _agent_back(scenario, _plugin_node(scenario), scenario.recall("plugin stopped at"), "plugin")


def begin_upgrade(scenario: Scenario, how: str) -> None:
    """The plugin's DaemonSet rolls out a new revision (`node_agent.DaemonSetRollout`); the
    stretch from now is remembered (fact `upgrades`) for D18-D20."""
    implementation, name = _plugin_daemonset(scenario)
    upgrades = scenario.facts.setdefault("upgrades", [])
    fault = node_agent.DaemonSetRollout(scenario.api, implementation.namespace, name, how,
                                        revision=str(len(upgrades) + 1))
    upgrades.append({"how": how, "since": scenario.now, "done": None})
    scenario.inject(fault)
    scenario.remember("upgrade", fault)


def finish_upgrade(scenario: Scenario, seconds: int) -> None:
    fault = scenario.recall("upgrade")
    if not fault.wait(seconds):
        raise StepFailed(f"{fault.description.split(' rolled out')[0]} had not rolled out "
                         f"its new revision on every node {seconds}s later")
    scenario.facts["upgrades"][-1]["done"] = scenario.now


UPGRADE_SECONDS = 180  # three nodes, each pod's replacement Ready within a minute


@when("the driver's plugin is upgraded with surge")
def upgraded_with_surge(scenario: Scenario) -> None:
    """Each node's new plugin pod starts before its old one stops; returns once done."""
    begin_upgrade(scenario, "surge")
    finish_upgrade(scenario, UPGRADE_SECONDS)


@when("the driver's plugin is upgraded by deleting and recreating its pods")
def upgraded_by_recreating(scenario: Scenario) -> None:
    """Each node's old plugin pod is deleted before its new one is made; returns once done."""
    begin_upgrade(scenario, "recreate")
    finish_upgrade(scenario, UPGRADE_SECONDS)


@when("the driver's plugin begins an upgrade with surge")
def begins_upgrade_with_surge(scenario: Scenario) -> None:
    begin_upgrade(scenario, "surge")


@when("the driver's plugin begins an upgrade by deleting and recreating its pods")
def begins_upgrade_by_recreating(scenario: Scenario) -> None:
    begin_upgrade(scenario, "recreate")


@when("the driver's plugin finishes its upgrade within {seconds:d} seconds")
def upgrade_finishes(scenario: Scenario, seconds: int) -> None:
    finish_upgrade(scenario, seconds)


def _pod(scenario: Scenario, name: str, claim: str) -> None:
    spec = claiming_pod_spec({"resourceClaimName": claim})
    create_pod(scenario, name, spec)


@given("a pod {name:Name} that uses the claim {claim:Name}")
def pod_with_claim(scenario: Scenario, name: str, claim: str) -> None:
    """A ResourceClaim for one device of the driver's class, and a pod that uses it."""
    scenario.require(Capability.NODE_FILES)  # judged from the kubelet's checkpoint
    _pod(scenario, name, device_claim(scenario, "ResourceClaim", claim))


@given("a pod {name:Name} that uses the claim {claim:Name} too")
def another_pod_with_claim(scenario: Scenario, name: str, claim: str) -> None:
    """Scheduled as any pod: the scheduler reserves the claim for it too, on its node."""
    _pod(scenario, name, claim)


@given("a pod {name:Name} on the node of pod/{other:Name} that names the claim {claim:Name} "
       "and a claim {missing:Name} that does not exist")
def pod_with_a_missing_claim(scenario: Scenario, name: str, other: str, claim: str,
                             missing: str) -> None:
    """Placed on that node at creation (no scheduler would take it): the kubelet fails to
    prepare its claims at the one it cannot fetch, before it takes the pod in as a user of
    the other (kubernetes PR #140212's way to a pod the claim was never prepared for)."""
    node = kube.core(scenario.api).read_namespaced_pod(other, scenario.namespace).spec.node_name
    if not node:
        raise StepFailed(f"pod/{scenario.namespace}/{other} is on no node")
    spec = claiming_pod_spec({"resourceClaimName": claim})
    spec["resourceClaims"].append({"name": "missing", "resourceClaimName": missing})
    spec["containers"][0]["resources"]["claims"].append({"name": "missing"})
    spec["nodeName"] = node
    create_pod(scenario, name, spec)


@then("within {seconds:d} seconds every pod that was on the rebooted node runs again",
      check="ran_again")
def ran_again(scenario: Scenario, seconds: int) -> None:
    """Each container running, started after the reboot, the pod Ready."""
    rebooted = scenario.recall("rebooted node")

    def all_again(state) -> bool:
        pods = {p["metadata"]["name"]: p for p in state.select("pods", scenario.namespace)}
        return all(name in pods and runs_since(pods[name], rebooted["wall"])
                   for name in rebooted["pods"])
    scenario.wait_until(all_again, max(0.0, rebooted["since"] + seconds - scenario.now))
    scenario.judge(Judgement("ran_again", {
        "node": rebooted["node"], "since": rebooted["since"], "within": seconds,
        "namespace": scenario.namespace, "now": scenario.now}))


def _node_state(scenario: Scenario) -> list:
    if not concept(scenario, "device_driver").get("node_state"):
        raise StepFailed("judged from each node's kubelet checkpoint: the profile's "
                         "device_driver concept needs node_state: kubelet")
    return scenario.recall("node state").snapshots()


@then("no claim listed a device or CDI device id twice on a node",
      check="no_duplicate_devices")
def no_duplicate_devices(scenario: Scenario) -> None:
    scenario.judge(Judgement("no_duplicate_devices", {"node_state": _node_state(scenario),
                                                      "namespace": scenario.namespace}))


@then("within {seconds:d} seconds of the plugin's return every claim whose pods left is "
      "unprepared on its node", check="unprepared_once_back")
def unprepared_once_back(scenario: Scenario, seconds: int) -> None:
    """Judged at the bound (never shorter than the kubelet's retry), or once every claim the
    judge would ask about is read unprepared."""
    back, returning = scenario.recall("plugin back"), scenario.recall("plugin returning")
    node = _plugin_node(scenario)
    bound = back + max(seconds, KUBELET_RETRY)
    # the checkpoint is read on the node, not recorded: no event wakes this, so ask each second
    while scenario.now < bound and not unprepared_all(
            _node_state(scenario), scenario.timeline.entries, node, back, scenario.namespace,
            returning):
        scenario.wait_until(lambda state: False, min(1.0, bound - scenario.now))
    scenario.judge(Judgement("unprepared_once_back", {
        "node_state": _node_state(scenario), "node": node, "back": back, "within": seconds,
        "returning": returning, "namespace": scenario.namespace}))


@then("within {seconds:d} seconds of its pods' going every claim prepared on a node was "
      "unprepared there once, and none was prepared for a pod deleted while its node's "
      "kubelet was down", check="unprepared_once")
def unprepared_once(scenario: Scenario, seconds: int) -> None:
    """The bound (never shorter than the kubelet's retry) starts again at each return of a
    node's kubelet or the driver's plugin. Judged once every claim whose pods are gone is read
    unprepared, or at the last bound."""
    downs = list(scenario.facts.get("node downs", []))
    # a read a little past the last claim's bound decides it (a loop says it read every 2 s)
    bound = max([down["back"] for down in downs] + [scenario.now]) + \
        max(seconds, KUBELET_RETRY) + SILENT_SECONDS

    def judged() -> bool:
        return not d16_pending(_node_state(scenario), scenario.timeline.entries, downs,
                               seconds, scenario.namespace)
    # the checkpoint is read on the node, not recorded: no event wakes this, so ask each second
    while scenario.now < bound and not judged():
        scenario.wait_until(lambda state: False, min(1.0, bound - scenario.now))
    scenario.judge(Judgement("unprepared_once", {
        "node_state": _node_state(scenario), "downs": downs, "within": seconds,
        "namespace": scenario.namespace}))


@then("no CDI spec stayed on a node for more than {seconds:d} seconds for a claim its kubelet "
      "did not hold, and no CDI device id was given to two claims", check="cdi_clean")
def cdi_clean(scenario: Scenario, seconds: int) -> None:
    """From each node's CDI spec files and its kubelet's checkpoint, both read on the node. A
    spec that names a claim its kubelet does not hold when the step begins is waited for, at
    most the bound and a little (the judgement asks how long it stayed)."""
    bound = scenario.now + seconds + SILENT_SECONDS
    while scenario.now < bound and cdi_pending(
            scenario.recall("cdi specs").snapshots(), _node_state(scenario),
            scenario.timeline.entries, scenario.namespace):
        scenario.wait_until(lambda state: False, min(1.0, bound - scenario.now))
    scenario.judge(Judgement("cdi_clean", {
        "cdi": scenario.recall("cdi specs").snapshots(), "node_state": _node_state(scenario),
        "within": seconds, "namespace": scenario.namespace}))


@then("no claim was unprepared on a node while a pod there still used it",
      check="kept_while_used")
def kept_while_used(scenario: Scenario) -> None:
    scenario.judge(Judgement("kept_while_used", {"node_state": _node_state(scenario),
                                                 "namespace": scenario.namespace}))


@then("the driver's ResourceSlices never listed more devices than a node has",
      check="only_present_devices")
def only_present_devices(scenario: Scenario) -> None:
    """As many as the profile's device_driver.devices_per_node, none twice in a pool."""
    driver = concept(scenario, "device_driver")
    if not driver.get("devices_per_node"):
        raise StepFailed("judged against how many devices a node has: the profile's "
                         "device_driver concept needs devices_per_node")
    scenario.judge(Judgement("only_present_devices", {"driver": driver["driver"],
                                                      "per_node": driver["devices_per_node"]}))


@then("within {seconds:d} seconds of its return the node lists its devices in the driver's "
      "ResourceSlices again", check="published_again")
def published_again(scenario: Scenario, seconds: int) -> None:
    """Its return: the node's after a reboot, the kubelet's after a restart, the driver's
    plugin's after it started again (the last of these the scenario did)."""
    back = scenario.recall("node agent back")
    driver = concept(scenario, "device_driver")["driver"]
    wait = back["back"] + seconds - scenario.now
    if wait > 0:  # judged at the bound, what was listed then: it is waited out
        scenario.wait_until(lambda state: False, wait)
    scenario.judge(Judgement("published_again", {
        "driver": driver, "node": back["node"], "since": back["since"], "back": back["back"],
        "within": seconds, "now": scenario.now}))


def _upgrade_began(scenario: Scenario) -> float:
    upgrades = scenario.facts.get("upgrades")
    if not upgrades:
        raise StepFailed("judged from when the driver's plugin began an upgrade: no earlier "
                         "step upgraded it (\"the driver's plugin is upgraded with surge\")")
    return upgrades[0]["since"]


# A kubelet deletes a driver's ResourceSlices of its node this long after the driver's last
# registration there went (the kubelet's defaultWipingDelay, pkg/kubelet/cm/dra/manager.go).
KUBELET_WIPING_DELAY = 30.0


@then("no ResourceSlice of the driver was deleted once its plugin began its upgrade",
      check="slices_kept")
def slices_kept(scenario: Scenario) -> None:
    """Judged no sooner than the kubelet's wiping delay (and a little) after the upgrade
    finished: a kubelet that took the old pod's going for the driver's deletes the node's
    slices only then."""
    done = max((u["done"] or u["since"] for u in scenario.facts.get("upgrades") or []),
               default=scenario.now)
    settled = done + KUBELET_WIPING_DELAY + SILENT_SECONDS
    if scenario.now < settled:
        scenario.wait_until(lambda state: False, settled - scenario.now)
    scenario.judge(Judgement("slices_kept", {"driver": concept(scenario, "device_driver")
                                             ["driver"], "since": _upgrade_began(scenario)}))


def _claimants_running(scenario: Scenario):
    """A state's test: every live pod of the scenario with a claim runs (D19's and D22's
    steps wait for it)."""
    def all_running(state) -> bool:
        return all(upgrade_runs(pod) for pod in state.select("pods", scenario.namespace)
                   if (pod.get("spec") or {}).get("resourceClaims")
                   and not (pod.get("metadata") or {}).get("deletionTimestamp"))
    return all_running


@then("within {seconds:d} seconds of its placement every pod with a claim ran through the "
      "upgrade, and none failed", check="pods_started")
def pods_started(scenario: Scenario, seconds: int) -> None:
    """Waits until every pod with a claim runs (or is going), at most ``seconds``: one not
    placed yet is waited for too."""
    since = _upgrade_began(scenario)
    scenario.wait_until(_claimants_running(scenario), seconds)
    scenario.judge(Judgement("pods_started", {"namespace": scenario.namespace, "since": since,
                                              "within": seconds, "now": scenario.now}))


@then("no plugin socket on a node stayed refused for more than {seconds:d} "
      "seconds once served", check="registrations_live")
def registrations_live(scenario: Scenario, seconds: int) -> None:
    """From each node's kubelet plugin sockets, read on the node. A socket refused when the
    step begins is waited for, at most the bound and a little."""
    bound = scenario.now + seconds + SILENT_SECONDS
    while scenario.now < bound and registry_pending(
            scenario.recall("registrations").snapshots()):
        scenario.wait_until(lambda state: False, min(1.0, bound - scenario.now))
    scenario.judge(Judgement("registrations_live", {
        "registry": scenario.recall("registrations").snapshots(), "within": seconds}))


# The second driver of a pod whose claims two drivers serve (D21, D22): aftershock's reference
# kubelet plugin under another name, built from its source tree beside the profiles.
SECOND_DRIVER = profile_files.CHECKOUT / "incluster" / "drakubelet-second.yaml"
SECOND_BACK_SECONDS = 180  # its DaemonSet's pods replaced, one node after another


@given("a second driver whose prepare fails")
def second_driver_failing(scenario: Scenario) -> None:
    """aftershock's reference plugin as nic.aftershock.io on every worker, beside the driver
    under test, failing every preparation (its refusing variant); remembered from now (fact
    `second driver`) until it prepares again."""
    scenario.require(Capability.NODE_AGENT)
    scenario.require(Capability.LOAD_IMAGE)
    if not SECOND_DRIVER.is_file():
        raise StepFailed(f"the second driver is aftershock's reference kubelet plugin, built "
                         f"from its source tree: {SECOND_DRIVER} is not here (a checkout of "
                         "aftershock has it)")
    profile = load_profile(SECOND_DRIVER)
    if concept(scenario, "device_driver")["driver"] == profile.concept("device_driver")["driver"]:
        raise StepFailed(f"the driver under test is {profile.name}'s own driver: a second "
                         "driver must be another")
    workdir = (scenario.report_dir or scenario.cluster.info.kubeconfig.parent) / "second-driver"
    second = InClusterImplementation(profile, scenario.cluster, scenario.api,
                                     scenario.namespace, workdir, companion=True)
    scenario.on_cleanup(f"uninstall {profile.name}", second.uninstall)
    scenario.on_cleanup(f"keep the logs of {profile.name}", second.save_logs)
    second.install()
    driver = profile.concept("device_driver")
    scenario.timeline.mark(f"the second driver {driver['driver']} installed, every "
                           "preparation failing")
    scenario.remember("second driver", {"implementation": second, "since": scenario.now,
                                        "back": None, "class": driver["device_class"]})


def _second(scenario: Scenario) -> dict:
    if "second driver" not in scenario.facts:
        raise StepFailed("no earlier step installed a second driver (Given a second driver "
                         "whose prepare fails)")
    return scenario.facts["second driver"]


@given("a Deployment {name:Name} of {replicas:d} pods that each claim a device of both drivers")
def claiming_both(scenario: Scenario, name: str, replicas: int) -> None:
    """Each pod's container uses two claims, one device of the driver under test and one of
    the second driver, from a ResourceClaimTemplate each."""
    second = _second(scenario)
    first = device_claim(scenario, "ResourceClaimTemplate", f"{name}-device")
    other = device_claim(scenario, "ResourceClaimTemplate", f"{name}-second", second["class"])
    manifest = workloads.deployment(name, replicas)
    spec = claiming_pod_spec({"resourceClaimTemplateName": first},
                             manifest["spec"]["template"]["spec"])
    spec["resourceClaims"].append({"name": "second", "resourceClaimTemplateName": other})
    spec["containers"][0]["resources"]["claims"].append({"name": "second"})
    create_workload(scenario, manifest)


@when("the second driver's prepare succeeds again")
def second_driver_back(scenario: Scenario) -> None:
    """Its DaemonSet rolls out the correct variant, each node's old pod deleted first; returns
    once every node runs the new one (the moment D22 counts from)."""
    second = _second(scenario)
    implementation: InClusterImplementation = second["implementation"]
    name = implementation.spec.workload[1]
    driver = implementation.profile.concept("device_driver")["driver"]
    fault = node_agent.DaemonSetRollout(
        scenario.api, implementation.namespace, name, "recreate", revision="prepares",
        command=(implementation.spec.container or "plugin", (
            "/usr/bin/drakubelet", "--variant", "correct", "--driver", driver)))
    scenario.inject(fault)
    if not fault.wait(SECOND_BACK_SECONDS):
        raise StepFailed(f"daemonset/{implementation.namespace}/{name} had not rolled out the "
                         f"second driver's correct variant on every node "
                         f"{SECOND_BACK_SECONDS}s later")
    second["back"] = scenario.now
    scenario.timeline.mark(f"the second driver {driver} prepares again")


@then("no driver kept a claim prepared for more than {seconds:d} seconds while the second "
      "driver's prepare failed", check="kept_for_failed")
def kept_for_failed(scenario: Scenario, seconds: int) -> None:
    """From each node's CDI spec files and its kubelet's checkpoint, read on the node."""
    second = _second(scenario)
    scenario.judge(Judgement("kept_for_failed", {
        "cdi": scenario.recall("cdi specs").snapshots(), "node_state": _node_state(scenario),
        "since": second["since"], "until": second["back"], "within": seconds,
        "namespace": scenario.namespace}))


@then("within {seconds:d} seconds of the second driver's return every pod with a claim ran",
      check="pods_started")
def ran_once_both_prepare(scenario: Scenario, seconds: int) -> None:
    """Waits until every pod with a claim runs (or is going), at most ``seconds``."""
    back = _second(scenario)["back"]
    if back is None:
        raise StepFailed("the second driver has not prepared again yet (When the second "
                         "driver's prepare succeeds again)")
    scenario.wait_until(_claimants_running(scenario), max(0.0, back + seconds - scenario.now))
    scenario.judge(Judgement("pods_started", {
        "namespace": scenario.namespace, "since": back, "within": seconds, "now": scenario.now,
        "began": "the second driver prepared again"}))
