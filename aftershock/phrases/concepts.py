"""Condition phrases about the concepts a profile maps ("the replica group web has 3 live pods",
"group 0 of the gang g is breached"): registered with aftershock.phrases when it loads. Each is
built from a context (see aftershock.phrases)."""

from __future__ import annotations

from aftershock.concepts import NoConcept, replica_group_selector
from aftershock.concepts.dra import departed_released
from aftershock.concepts.gang import Gang
from aftershock.concepts.gang_scheduler import PodGroup
from aftershock.concepts.records import NodeRecords
from aftershock.concepts.storage import StorageCluster
from aftershock.history.state import Query, exists, is_live, is_ready, node_of
from aftershock.phrases.base import Condition, condition


@condition("the replica group {name:Name} has {count:d} live pods")
def group_live(ctx, name: str, count: int) -> Condition:
    labels = replica_group_selector(ctx, name)
    live, every = Query("pods", ctx.namespace, labels, is_live), Query("pods", ctx.namespace,
                                                                       labels)
    return Condition(f"replica group {name} has {count} live pods",
                     lambda s: s.count(live) == count, frozenset({"pods"}),
                     lambda s: s.count(every))


@condition("every node holds a node record")
def every_node_recorded(ctx) -> Condition:
    records = NodeRecords.of(ctx)
    return Condition("every node holds a node record",
                     lambda s: records.nodes(s) <= records.nodes_with_records(s),
                     frozenset({"nodes", records.resource}), lambda s: len(records.nodes(s)))


@condition("node {node:Name} holds a node record")
def node_recorded(ctx, node: str) -> Condition:
    records = NodeRecords.of(ctx)
    return Condition(f"node/{node} holds a node record",
                     lambda s: node in records.nodes_with_records(s),
                     frozenset({records.resource}), lambda s: len(records.all(s)))


@condition("the node record with index {index:d} is not held by node/{node:Name}")
def record_released(ctx, index: int, node: str) -> Condition:
    records = NodeRecords.of(ctx)
    return Condition(f"index {index} no longer held by node/{node}",
                     lambda s: records.holder(s, index) != node,
                     frozenset({records.resource}), lambda s: len(records.all(s)))


@condition("there are no more node records than nodes plus {extra:d}")
def records_bounded(ctx, extra: int) -> Condition:
    records = NodeRecords.of(ctx)
    return Condition(f"node records ≤ nodes + {extra}",
                     lambda s: len(records.all(s)) <= len(records.nodes(s)) + extra,
                     frozenset({"nodes", records.resource}), lambda s: len(records.all(s)))


def _members(cluster: StorageCluster):
    return lambda s: sum(1 for pod in s.select("pods", cluster.namespace)
                         if cluster.ordinal(pod["metadata"]["name"]) is not None)


@condition("the storage cluster {name:Name} has {count:d} Ready members")
def storage_ready(ctx, name: str, count: int) -> Condition:
    cluster = StorageCluster.of(ctx, name)
    return Condition(f"storage cluster {name} has {count} Ready members",
                     lambda s: len(cluster.ready_members(s)) == count, frozenset({"pods"}),
                     _members(cluster))


@condition("member {ordinal:d} of the storage cluster {name:Name} is Ready")
def storage_member_ready(ctx, ordinal: int, name: str) -> Condition:
    cluster = StorageCluster.of(ctx, name)
    return Condition(f"member {ordinal} of storage cluster {name} is Ready",
                     lambda s: ordinal in cluster.ready_members(s), frozenset({"pods"}),
                     _members(cluster))


@condition("member {ordinal:d} of the storage cluster {name:Name} is Pending")
def storage_member_pending(ctx, ordinal: int, name: str) -> Condition:
    """Its pod exists and no node will take it (not bound to one)."""
    cluster = StorageCluster.of(ctx, name)

    def pending(s) -> bool:
        pod = s.get("pods", cluster.namespace, cluster.pod(ordinal))
        return pod is not None and not (pod.get("spec") or {}).get("nodeName") and \
            (pod.get("status") or {}).get("phase") == "Pending"
    return Condition(f"member {ordinal} of storage cluster {name} is Pending", pending,
                     frozenset({"pods"}), _members(cluster))


@condition("member {ordinal:d} of the storage cluster {name:Name} is in maintenance with its "
           "data moved")
def storage_member_moved(ctx, ordinal: int, name: str) -> Condition:
    """What the application says of itself (`app_state`): the member is in maintenance and
    its rebalance onto the others is over."""
    cluster = StorageCluster.of(ctx, name)
    if not cluster.from_app:
        raise NoConcept(f"the profile maps no app_state for storage_cluster: nothing says "
                        f"when member {ordinal}'s data has moved")
    return Condition(f"member {ordinal} of storage cluster {name} is in maintenance with its "
                     "data moved (by what it says of itself)",
                     lambda s: ordinal in cluster.moved(s), frozenset({cluster.state_resource}),
                     lambda s: int(cluster.app(s) is not None))


@condition("the storage cluster {name:Name} lists its Ready members")
def storage_lists_ready(ctx, name: str) -> Condition:
    cluster = StorageCluster.of(ctx, name)
    if not cluster.members_known:  # nothing to judge: UNKNOWN, saying why
        return Condition(f"storage cluster {name} lists exactly its Ready members (the "
                         "profile maps no list of members: storage_cluster.members_path or "
                         "app_state)", lambda s: True, frozenset({"pods"}), lambda s: 0)
    said = " (by what it says of itself)" if cluster.from_app else ""
    return Condition(f"storage cluster {name} lists exactly its Ready members{said}",
                     lambda s: cluster.listed_members(s) == cluster.ready_members(s),
                     frozenset({"pods", cluster.state_resource}),
                     lambda s: int(cluster.listed_members(s) is not None))


def _gang_seen(gang: Gang):
    return lambda s: int(s.get(gang.resource, gang.namespace, gang.name) is not None)


@condition("group {group:d} of the gang {name:Name} is breached")
def gang_breached(ctx, group: int, name: str) -> Condition:
    gang = Gang.of(ctx, name)
    return Condition(f"group {group} of gang {name} has {gang.mapping['breach_condition']}=True",
                     lambda s: gang.breached(s, group), gang.resources, _gang_seen(gang))


@condition("group {group:d} of the gang {name:Name} is not breached")
def gang_not_breached(ctx, group: int, name: str) -> Condition:
    gang = Gang.of(ctx, name)
    return Condition(f"group {group} of gang {name} has {gang.mapping['breach_condition']}=False",
                     lambda s: (gang.breach(s, group) or {}).get("status") == "False",
                     gang.resources, _gang_seen(gang))


@condition("group {group:d} of the gang {name:Name} has {count:d} scheduled pods")
def gang_scheduled(ctx, group: int, name: str, count: int) -> Condition:
    gang = Gang.of(ctx, name)
    return Condition(f"group {group} of gang {name} has {count} scheduled pods",
                     lambda s: sum(1 for p in gang.live_pods(s, group) if node_of(p)) == count,
                     frozenset({"pods"}),
                     lambda s: s.count("pods", gang.namespace, gang.selector(group), exists))


@condition("the gang {name:Name} has {count:d} Ready pods")
def gang_ready(ctx, name: str, count: int) -> Condition:
    gang = Gang.of(ctx, name)
    return Condition(f"gang {name} has {count} Ready pods",
                     lambda s: sum(1 for p in gang.live_pods(s) if is_ready(p)) == count,
                     frozenset({"pods"}),
                     lambda s: s.count("pods", gang.namespace, gang.selector(), exists))


@condition("the pod group {name:Name} has {count:d} bound pods")
def pod_group_bound(ctx, name: str, count: int) -> Condition:
    group = PodGroup.of(ctx, name)
    return Condition(f"{group.ref} has {count} bound pods",
                     lambda s: len(group.bound(s)) == count, frozenset({"pods"}),
                     lambda s: len(group.pods(s)))


@condition("the pod group {name:Name} has {count:d} Succeeded pods")
def pod_group_succeeded(ctx, name: str, count: int) -> Condition:
    group = PodGroup.of(ctx, name)
    return Condition(f"{group.ref} has {count} Succeeded pods",
                     lambda s: sum(1 for p in group.pods(s)
                                   if (p.get("status") or {}).get("phase") == "Succeeded")
                     == count, frozenset({"pods"}), lambda s: len(group.pods(s)))


@condition("every claim of a departed pod is released")
def departed_claims_released(ctx) -> Condition:
    return Condition("no claim is reserved for, or generated for, a pod that is gone or "
                     "finished",
                     lambda s: departed_released(s, ctx.namespace),
                     frozenset({"pods", "resourceclaims"}),
                     lambda s: len(s.select("resourceclaims", ctx.namespace)))
