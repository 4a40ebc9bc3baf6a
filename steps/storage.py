"""Steps about a storage cluster (the storage_cluster concept): S1-S6."""

from __future__ import annotations

from aftershock.faults.drain import DrainOptions
from aftershock.scenario import Scenario, StepFailed, given, then, when
from aftershock.sut import storage
from aftershock.sut.concepts import NoConcept, concept, get_path, set_path
from steps.implementation import api_version, dynamic_resource, implementation_of
from steps.nodes import cordon_and_drain, node_of_named_pod


def _cluster(scenario: Scenario, name: str) -> storage.StorageCluster:
    return storage.StorageCluster.of(scenario, name)


def _create(scenario: Scenario, name: str, size: int, mode: str, autoscale: bool) -> None:
    mapping = concept(scenario, "storage_cluster")
    if mode not in mapping["retention_values"]:
        raise StepFailed(f"retention mode '{mode}': the profile knows "
                         f"{', '.join(mapping['retention_values'])}")
    resource = mapping["resource"]
    body = {"apiVersion": api_version(resource), "kind": resource["kind"],
            "metadata": {"name": name}}
    set_path(body, mapping["size_path"], size)
    set_path(body, mapping["retention_path"], mode)
    if autoscale:
        if not mapping.get("autoscale_path"):
            raise NoConcept(f"profile {scenario.facts['profile'].name} maps no autoscaling "
                            "(storage_cluster.autoscale_path)")
        set_path(body, mapping["autoscale_path"], True)
    scenario.timeline.mark(f"create {resource['kind'].lower()}/{scenario.namespace}/{name} "
                           f"({size} members, {mode})")
    dynamic_resource(scenario, resource).create(body=body, namespace=scenario.namespace)
    scenario.remember(f"storage {name} mode", mode)


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
            "name": name, "kubeconfig": str(implementation.kubeconfig)}


@when("I write {count:d} objects to the storage cluster {name:Name}")
def write_objects(scenario: Scenario, count: int, name: str) -> None:
    command = concept(scenario, "storage_cluster")["data_probe"]
    ledger = storage.run_probe(command, _probe_values(scenario, name), "put", "--objects",
                               str(count))
    if len(ledger.get("written", [])) != count:
        raise StepFailed(f"the data probe wrote {len(ledger.get('written', []))} of {count} "
                         "objects")
    path = storage.save_json(implementation_of(scenario).workdir / f"ledger-{name}.json", ledger)
    scenario.timeline.mark(f"wrote {count} objects to storage cluster {name}")
    scenario.remember(f"storage {name} ledger", (path, ledger))


@when("I drain the node running member {ordinal:d} of the storage cluster {name:Name}")
def drain_member_node(scenario: Scenario, ordinal: int, name: str) -> None:
    node = node_of_named_pod(scenario, _cluster(scenario, name).pod(ordinal))
    cordon_and_drain(scenario, node, DrainOptions())


@when("I scale the storage cluster {name:Name} to {size:d}")
def scale_storage(scenario: Scenario, name: str, size: int) -> None:
    mapping = concept(scenario, "storage_cluster")
    client = dynamic_resource(scenario, mapping["resource"])
    before = get_path(client.get(name=name, namespace=scenario.namespace).to_dict(),
                      mapping["size_path"])
    scenario.remember(f"storage {name} removed", set(range(size, before or 0)))
    scenario.timeline.mark(f"scale storagecluster/{scenario.namespace}/{name} from {before} "
                           f"to {size}")
    client.patch(name=name, namespace=scenario.namespace,
                 body=set_path({}, mapping["size_path"], size),
                 content_type="application/merge-patch+json")


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


@then("destructive actions touched only removed members of the storage cluster {name:Name}")
def only_removed_touched(scenario: Scenario, name: str) -> None:
    found = scenario.facts.get(f"storage {name} ledger")
    inventory = _inventory(scenario, name) if found else None
    scenario.judge(storage.only_removed_touched(
        scenario.history(), _cluster(scenario, name), _removed(scenario, name), inventory,
        found[1] if found else None))


def _inventory(scenario: Scenario, name: str) -> dict:
    command = concept(scenario, "storage_cluster")["data_probe"]
    inventory = storage.run_probe(command, _probe_values(scenario, name), "inventory")
    storage.save_json(implementation_of(scenario).workdir / f"inventory-{name}.json", inventory)
    return inventory


def _origin(scenario: Scenario) -> float:
    history = scenario.history()
    return history[0].mono if history else scenario.now


def _wipes(scenario: Scenario, name: str) -> list:
    return storage.destructive_events(scenario.history(), _cluster(scenario, name))


@then("the node-local data of the removed members of the storage cluster {name:Name} is "
      "still there")
def data_still_there(scenario: Scenario, name: str) -> None:
    _, ledger = _ledger(scenario, name)
    scenario.judge(storage.data_kept(_inventory(scenario, name), ledger,
                                     _removed(scenario, name), _wipes(scenario, name),
                                     _origin(scenario)))


@then("every object written to the storage cluster {name:Name} reads back or is cleanly "
      "not found")
def reads_back(scenario: Scenario, name: str) -> None:
    path, ledger = _ledger(scenario, name)
    command = concept(scenario, "storage_cluster")["data_probe"]
    results = storage.run_probe(command, _probe_values(scenario, name), "get", "--ledger",
                                str(path))["results"]
    storage.save_json(implementation_of(scenario).workdir / f"reads-{name}.json",
                      {"results": results})
    lossy = concept(scenario, "storage_cluster").get("lossy_retention_values") or []
    loss_allowed = scenario.facts.get(f"storage {name} mode") in lossy
    scenario.judge(storage.reads_clean(results, ledger, _removed(scenario, name), loss_allowed,
                                       _wipes(scenario, name), _origin(scenario)))


@then("the storage cluster {name:Name} shrank only after its removed members were done")
def shrank_after_done(scenario: Scenario, name: str) -> None:
    scenario.judge(storage.shrank_after_done(scenario.history(), _cluster(scenario, name),
                                             _removed(scenario, name)))


@then("at no point did the workload of the storage cluster {name:Name} shrink")
def never_shrank(scenario: Scenario, name: str) -> None:
    scenario.judge(storage.never_shrank(scenario.history(), _cluster(scenario, name)))
