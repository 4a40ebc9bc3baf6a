"""Steps about a storage cluster (the storage_cluster concept): S1-S6."""

from __future__ import annotations

from dataclasses import asdict

from aftershock.bdd.steps.implementation import concept_body, dynamic_resource, implementation_of
from aftershock.bdd.steps.nodes import cordon_and_drain, node_of_named_pod
from aftershock.concepts import NoConcept, concept, get_path, storage
from aftershock.faults import nodes
from aftershock.faults.drain import DrainOptions
from aftershock.kube import writes
from aftershock.machine.capabilities import Capability
from aftershock.properties import Judgement
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.sut.app_state import AppStateWatch


def _cluster(scenario: Scenario, name: str) -> storage.StorageCluster:
    return storage.StorageCluster.of(scenario, name)


def _create(scenario: Scenario, name: str, size: int, mode: str, autoscale: bool) -> None:
    mapping = concept(scenario, "storage_cluster")
    if mode not in mapping["retention_values"]:  # the implementation has no such mode
        raise NoConcept(f"profile {scenario.facts['profile'].name} has no {mode} mode "
                        f"(storage_cluster.retention_values: "
                        f"{', '.join(mapping['retention_values'])})")
    resource = mapping["resource"]
    body = concept_body(scenario, mapping, name, size=size, mode=mode)
    wanted: dict[str, object] = {mapping["size_path"]: size}
    if mapping.get("retention_path"):  # without one, the implementation has one mode
        wanted[mapping["retention_path"]] = mode
    if autoscale:
        if not mapping.get("autoscale_path"):
            raise NoConcept(f"profile {scenario.facts['profile'].name} maps no autoscaling "
                            "(storage_cluster.autoscale_path)")
        wanted[mapping["autoscale_path"]] = True
    scenario.timeline.mark(f"create {resource['kind'].lower()}/{scenario.namespace}/{name} "
                           f"({size} members, {mode})")
    writes.create(dynamic_resource(scenario, resource), body, scenario.namespace,
                  fields=wanted)
    scenario.remember(f"storage {name} mode", mode)
    if mapping.get("app_state"):
        _watch_app_state(scenario, name, mapping["app_state"])


def _watch_app_state(scenario: Scenario, name: str, command: list[str]) -> None:
    """The application's own state, read from now to the scenario's end onto the timeline."""
    implementation = implementation_of(scenario)
    watch = AppStateWatch(command, _probe_values(scenario, name),
                          scenario.facts["profile"].workdir, scenario.timeline,
                          scenario.namespace, name,
                          implementation.workdir / f"app-state-{name}.log",
                          getattr(scenario.cluster, "state", None))
    scenario.on_cleanup(f"stop reading the state of storage cluster {name}", watch.stop)
    watch.start()


@given("a storage cluster {name:Name} with {size:d} members in {mode:w} mode")
def a_storage_cluster(scenario: Scenario, name: str, size: int, mode: str) -> None:
    _create(scenario, name, size, mode, autoscale=False)


@given("an autoscaled storage cluster {name:Name} with {size:d} members in {mode:w} mode")
def an_autoscaled_storage_cluster(scenario: Scenario, name: str, size: int, mode: str) -> None:
    _create(scenario, name, size, mode, autoscale=True)


def _probe_values(scenario: Scenario, name: str) -> dict[str, str]:
    implementation = implementation_of(scenario)
    if implementation is None:
        raise StepFailed("the storage cluster's data probe needs a started implementation")
    return {"workdir": str(implementation.workdir), "namespace": scenario.namespace,
            "name": name, "kubeconfig": str(implementation.kubeconfig),
            "node_data": str(implementation.node_data)}


@when("I write {count:d} objects to the storage cluster {name:Name}")
def write_objects(scenario: Scenario, count: int, name: str) -> None:
    command = concept(scenario, "storage_cluster")["data_probe"]
    ledger = storage.run_probe(command, _probe_values(scenario, name), "put", "--objects",
                               str(count), cwd=scenario.facts["profile"].workdir)
    if len(ledger.get("written", [])) != count:
        raise StepFailed(f"the data probe wrote {len(ledger.get('written', []))} of {count} "
                         "objects")
    path = storage.save_json(implementation_of(scenario).workdir / f"ledger-{name}.json", ledger)
    scenario.timeline.mark(f"wrote {count} objects to storage cluster {name}")
    scenario.remember(f"storage {name} ledger", (path, ledger))


@when("I drain the node running member {ordinal:d} of the storage cluster {name:Name}")
def drain_member_node(scenario: Scenario, ordinal: int, name: str) -> None:
    node = node_of_named_pod(scenario, _cluster(scenario, name).pod(ordinal))
    # node maintenance, as an operator runs it: an emptyDir is scratch (AIStore's config)
    cordon_and_drain(scenario, node, DrainOptions(ignore_daemonsets=True,
                                                  delete_emptydir_data=True))


@when("I put member {ordinal:d} of the storage cluster {name:Name} into maintenance")
def member_into_maintenance(scenario: Scenario, ordinal: int, name: str) -> None:
    """As the application's guide has a person do before a member's node is retired: the
    profile's ``maintenance`` command (AIStore's start-maintenance, which moves the member's
    data to the others)."""
    mapping = concept(scenario, "storage_cluster")
    if not mapping.get("maintenance"):
        raise NoConcept(f"profile {scenario.facts['profile'].name} maps no maintenance "
                        "command (storage_cluster.maintenance)")
    said = storage.run_probe(mapping["maintenance"],
                             {**_probe_values(scenario, name), "ordinal": str(ordinal)},
                             cwd=scenario.facts["profile"].workdir,
                             what="the maintenance command (storage_cluster.maintenance)")
    scenario.timeline.mark(f"member {ordinal} of storage cluster {name} put into maintenance"
                           f" ({storage.brief(said)})")


@when("I remove the label {key} from the node running member {ordinal:d} of the storage "
      "cluster {name:Name}")
def unlabel_member_node(scenario: Scenario, key: str, ordinal: int, name: str) -> None:
    """``kubectl label node NODE KEY-``, as a guide takes a node out of the ones a workload's
    node selector picks; put back at the end."""
    node = node_of_named_pod(scenario, _cluster(scenario, name).pod(ordinal))
    scenario.require(Capability.DESTRUCTIVE)
    scenario.inject(nodes.NodeLabel(scenario.api, node, key, None))


@when("the node running member {ordinal:d} of the storage cluster {name:Name} fails and is "
      "taken out of service")
def member_node_fails(scenario: Scenario, ordinal: int, name: str) -> None:
    """The node loses power, and is marked out of service so that its pods are let go."""
    node = node_of_named_pod(scenario, _cluster(scenario, name).pod(ordinal))
    scenario.require(Capability.NODE_FAILURE)
    scenario.inject(nodes.NodeFailure(scenario.cluster, node))
    scenario.inject(nodes.OutOfService(scenario.api, node))


@when("I scale the storage cluster {name:Name} to {size:d}")
def scale_storage(scenario: Scenario, name: str, size: int) -> None:
    scenario.remember(f"storage {name} scaled at", scenario.now)
    mapping = concept(scenario, "storage_cluster")
    client = dynamic_resource(scenario, mapping["resource"])
    before = get_path(client.get(name=name, namespace=scenario.namespace).to_dict(),
                      mapping["size_path"])
    scenario.remember(f"storage {name} removed", set(range(size, before or 0)))
    scenario.timeline.mark(f"scale storagecluster/{scenario.namespace}/{name} from {before} "
                           f"to {size}")
    writes.set_field(client, name, scenario.namespace, mapping["size_path"], size)


def _removed(scenario: Scenario, name: str) -> set[int]:
    removed = scenario.facts.get(f"storage {name} removed")
    if removed is None:
        raise StepFailed(f"no earlier step scaled the storage cluster {name} down")
    return removed


def _ledger(scenario: Scenario, name: str):
    found = scenario.facts.get(f"storage {name} ledger")
    if found is None:
        raise StepFailed(f"no earlier step wrote objects to the storage cluster {name}")
    return found


def _judge(scenario: Scenario, check: str, name: str, **params) -> None:
    scenario.judge(Judgement(check, {"cluster": asdict(_cluster(scenario, name)), **params}))


@then("destructive actions touched only removed members of the storage cluster {name:Name}",
      check="only_removed_touched")
def only_removed_touched(scenario: Scenario, name: str) -> None:
    found = scenario.facts.get(f"storage {name} ledger")
    inventory = _inventory(scenario, name) if found else None
    _judge(scenario, "only_removed_touched", name, removed=_removed(scenario, name),
           inventory=inventory, ledger=found[1] if found else None)


def _observe(scenario: Scenario, name: str, what: str, verb: str, *args: str) -> dict:
    """Ask the data probe; its answer is saved beside the implementation's files as
    <what>-<name>.json (what a saved run's judgement is rebuilt from)."""
    key = f"{what}-{name}"

    def ask() -> dict:
        command = concept(scenario, "storage_cluster")["data_probe"]
        answer = storage.run_probe(command, _probe_values(scenario, name), verb, *args,
                                   cwd=scenario.facts["profile"].workdir)
        storage.save_json(implementation_of(scenario).workdir / f"{key}.json", answer)
        return answer
    return scenario.observe(key, ask)


def _inventory(scenario: Scenario, name: str) -> dict:
    return _observe(scenario, name, "inventory", "inventory")


@then("the node-local data of the removed members of the storage cluster {name:Name} is "
      "still there", check="data_kept")
def data_still_there(scenario: Scenario, name: str) -> None:
    _, ledger = _ledger(scenario, name)
    _judge(scenario, "data_kept", name, inventory=_inventory(scenario, name), ledger=ledger,
           removed=_removed(scenario, name), loss_allowed=_loss_allowed(scenario, name))


def _loss_allowed(scenario: Scenario, name: str, served: bool = False) -> bool:
    """The mode lets removed members' data go (or, for a read, be kept but not served)."""
    mapping = concept(scenario, "storage_cluster")
    modes = set(mapping.get("lossy_retention_values") or ())
    if served:
        modes |= set(mapping.get("parked_retention_values") or ())
    return scenario.facts.get(f"storage {name} mode") in modes


@then("every object written to the storage cluster {name:Name} reads back or is cleanly "
      "not found", check="reads_clean")
def reads_back(scenario: Scenario, name: str) -> None:
    path, ledger = _ledger(scenario, name)
    results = _observe(scenario, name, "reads", "get", "--ledger", str(path))["results"]
    _judge(scenario, "reads_clean", name, results=results, ledger=ledger,
           removed=_removed(scenario, name),
           loss_allowed=_loss_allowed(scenario, name, served=True),
           inventory=_inventory(scenario, name))


@then("the storage cluster {name:Name} shrank only after its removed members were done",
      check="shrank_after_done")
def shrank_after_done(scenario: Scenario, name: str) -> None:
    _judge(scenario, "shrank_after_done", name, removed=_removed(scenario, name),
           since=scenario.facts.get(f"storage {name} scaled at"))


@then("at no point did the workload of the storage cluster {name:Name} shrink",
      check="never_shrank")
def never_shrank(scenario: Scenario, name: str) -> None:
    _judge(scenario, "never_shrank", name)
