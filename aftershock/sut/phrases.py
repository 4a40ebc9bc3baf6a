"""Condition phrases about the concepts a profile maps ("the replica group web has 3 live pods",
"group 0 of the gang g is breached"): registered with aftershock.phrases when it loads."""

from __future__ import annotations

from aftershock.phrases import Condition, condition
from aftershock.sut.concepts import replica_group_selector
from aftershock.sut.dra import departed_released
from aftershock.sut.gang import Gang
from aftershock.sut.records import NodeRecords, node_names
from aftershock.sut.storage import StorageCluster
from aftershock.timeline.state import is_ready, node_of


@condition("the replica group {name:Name} has {count:d} live pods")
def group_live(scenario, name: str, count: int) -> Condition:
    labels = replica_group_selector(scenario, name)
    return Condition(f"replica group {name} has {count} live pods",
                     lambda s: len(s.live_pods(scenario.namespace, labels)) == count,
                     frozenset({"pods"}))


@condition("every node holds a node record")
def every_node_recorded(scenario) -> Condition:
    records = NodeRecords.of(scenario)
    return Condition("every node holds a node record",
                     lambda s: node_names(s) <= records.nodes_with_records(s),
                     frozenset({"nodes", records.resource}))


@condition("node {node:Name} holds a node record")
def node_recorded(scenario, node: str) -> Condition:
    records = NodeRecords.of(scenario)
    return Condition(f"node/{node} holds a node record",
                     lambda s: node in records.nodes_with_records(s),
                     frozenset({records.resource}))


@condition("the storage cluster {name:Name} has {count:d} Ready members")
def storage_ready(scenario, name: str, count: int) -> Condition:
    cluster = StorageCluster.of(scenario, name)
    return Condition(f"storage cluster {name} has {count} Ready members",
                     lambda s: len(cluster.ready_members(s)) == count, frozenset({"pods"}))


@condition("member {ordinal:d} of the storage cluster {name:Name} is Ready")
def storage_member_ready(scenario, ordinal: int, name: str) -> Condition:
    cluster = StorageCluster.of(scenario, name)
    return Condition(f"member {ordinal} of storage cluster {name} is Ready",
                     lambda s: ordinal in cluster.ready_members(s), frozenset({"pods"}))


@condition("the storage cluster {name:Name} lists its Ready members")
def storage_lists_ready(scenario, name: str) -> Condition:
    cluster = StorageCluster.of(scenario, name)
    return Condition(f"storage cluster {name} lists exactly its Ready members",
                     lambda s: cluster.listed_members(s) == cluster.ready_members(s),
                     frozenset({"pods", cluster.resource}))


@condition("group {group:d} of the gang {name:Name} is breached")
def gang_breached(scenario, group: int, name: str) -> Condition:
    gang = Gang.of(scenario, name)
    return Condition(f"group {group} of gang {name} has {gang.mapping['breach_condition']}=True",
                     lambda s: gang.breached(s, group), frozenset({gang.resource}))


@condition("group {group:d} of the gang {name:Name} is not breached")
def gang_not_breached(scenario, group: int, name: str) -> Condition:
    gang = Gang.of(scenario, name)
    return Condition(f"group {group} of gang {name} has {gang.mapping['breach_condition']}=False",
                     lambda s: (gang.breach(s, group) or {}).get("status") == "False",
                     frozenset({gang.resource}))


@condition("group {group:d} of the gang {name:Name} has {count:d} scheduled pods")
def gang_scheduled(scenario, group: int, name: str, count: int) -> Condition:
    gang = Gang.of(scenario, name)
    return Condition(f"group {group} of gang {name} has {count} scheduled pods",
                     lambda s: sum(1 for p in gang.live_pods(s, group) if node_of(p)) == count,
                     frozenset({"pods"}))


@condition("the gang {name:Name} has {count:d} Ready pods")
def gang_ready(scenario, name: str, count: int) -> Condition:
    gang = Gang.of(scenario, name)
    return Condition(f"gang {name} has {count} Ready pods",
                     lambda s: sum(1 for p in gang.live_pods(s) if is_ready(p)) == count,
                     frozenset({"pods"}))


@condition("every claim of a departed pod is released")
def departed_claims_released(scenario) -> Condition:
    return Condition("no claim is reserved for, or generated for, a pod that is gone",
                     lambda s: departed_released(s, scenario.namespace),
                     frozenset({"pods", "resourceclaims"}))
