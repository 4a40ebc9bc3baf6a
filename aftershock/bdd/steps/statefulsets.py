"""The Kubernetes-level forms of S and N, judged on the real StatefulSet, PV, pod GC and garbage
collector controllers (profile concept ``stateful_set``, e.g. profiles/kube-statefulset.yaml)."""

from __future__ import annotations

from aftershock.bdd.steps.workloads import create_workload
from aftershock.concepts import concept
from aftershock.kube import api as kube
from aftershock.kube import door, workloads, writes
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, given, then

DRIVER = "slices.aftershock.io"
OWNER_LABEL = kube.OWNER_LABEL  # cluster-scoped objects name their scenario's namespace
VOLUMES_AVAILABLE = 30  # seconds


def _storage_class(scenario: Scenario) -> str:
    return f"aftershock-{scenario.namespace}"


def _volumes(scenario: Scenario, count: int) -> None:
    """Pre-provisioned volumes of this scenario's own class, Available before anything claims
    them; removed at the scenario's end. (A claim the volume binder syncs while its volume is
    still Pending waits for the binder's next resync, 15 s later.)"""
    corev1 = kube.core(scenario.api)
    names = [f"{scenario.namespace}-pv-{i}" for i in range(count)]

    def remove() -> None:
        for name in names:  # registered before they are made: a refused create made fewer
            door.delete(corev1.delete_persistent_volume, name, missing_ok=True)

    scenario.on_cleanup(f"persistent volumes of {scenario.namespace}", remove)
    for name in names:
        volume = workloads.persistent_volume(name, _storage_class(scenario))
        volume["metadata"]["labels"][OWNER_LABEL] = scenario.namespace
        door.call(corev1.create_persistent_volume, volume)
    held, _ = scenario.wait_until(lambda state: all(
        ((state.get("persistentvolumes", "", name) or {}).get("status") or {}).get("phase")
        == "Available" for name in names), VOLUMES_AVAILABLE)
    if not held:
        raise StepFailed(f"the {count} persistent volumes of {scenario.namespace} were not "
                         f"Available within {VOLUMES_AVAILABLE}s (is the volume binder of "
                         "kube-controller-manager running?)")


@given("a stateful set {name:Name} with {replicas:d} replicas, one per node, whose PVCs are "
       "{policy:w} when scaled")
def a_stateful_set_with_claims(scenario: Scenario, name: str, replicas: int,
                               policy: str) -> None:
    concept(scenario, "stateful_set")
    if policy not in ("retained", "deleted"):
        raise StepFailed(f"PVC retention must be 'retained' or 'deleted', not '{policy}'")
    _volumes(scenario, replicas)
    create_workload(scenario, workloads.statefulset(
        name, replicas, when_scaled="Retain" if policy == "retained" else "Delete",
        storage_class=_storage_class(scenario), spread=True))


@given("a stateful set {name:Name} with {replicas:d} replicas, one per node")
def a_stateful_set(scenario: Scenario, name: str, replicas: int) -> None:
    concept(scenario, "stateful_set")
    create_workload(scenario, workloads.statefulset(name, replicas, claims=False, spread=True))


@given("every node publishes a ResourceSlice")
def slices_published(scenario: Scenario) -> None:
    """Plays a DRA driver's node side: one slice per node, owned by its Node."""

    api_version = kube.dra_api_version(scenario.api)
    slices = kube.dynamic_client(scenario.api).resources.get(
        api_version=api_version, kind="ResourceSlice")

    def remove() -> None:
        for item in slices.get(label_selector=f"{OWNER_LABEL}={scenario.namespace}").items:
            # owned by its Node: the garbage collector removes it with a deleted node
            writes.delete(slices, item.metadata.name, None, missing_ok=True)

    scenario.on_cleanup("resource slices", remove)
    for node in kube.core(scenario.api).list_node().items:
        body = workloads.resource_slice(scenario.api.sanitize_for_serialization(node), DRIVER,
                                        api_version=api_version)
        body["metadata"]["name"] = f"{scenario.namespace}-{body['metadata']['name']}"
        # a pool of the scenario's: scenarios side by side on one cluster publish for the same
        # nodes, and two slices in one pool of one slice would make it invalid
        body["spec"]["pool"]["name"] = body["metadata"]["name"]
        body["metadata"]["labels"] = {OWNER_LABEL: scenario.namespace}
        writes.create(slices, body, None)
    scenario.remember("published slices", DRIVER)


@then("the claims of the removed ordinals of {name:Name} and their volumes are still there",
      check="claims_retained")
def removed_claims_kept(scenario: Scenario, name: str) -> None:
    scenario.judge(Judgement("claims_retained", {"namespace": scenario.namespace,
                                                 "name": name}))


@then("pod {pod:Name} kept its own claim and volume", check="own_claim_kept")
def own_claim_kept(scenario: Scenario, pod: str) -> None:
    scenario.judge(Judgement("own_claim_kept", {"namespace": scenario.namespace, "pod": pod}))
    claim = f"data-{pod}"
    current = kube.core(scenario.api).read_namespaced_pod(pod, scenario.namespace)
    used = [v.persistent_volume_claim.claim_name for v in current.spec.volumes or []
            if v.persistent_volume_claim]
    if claim not in used:
        raise StepFailed(f"pod/{scenario.namespace}/{pod} uses claims {used}, not {claim}")
