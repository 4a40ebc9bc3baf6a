"""Concept mappings of made-up implementations, for the unit tests that judge histories."""

RG = {"resource": {"group": "x.io", "version": "v1", "plural": "groups", "kind": "Group"},
      "replicas_path": "spec.replicas", "pod_selector": {"app": "{name}"}}
GANG = {"resource": {"group": "x.io", "version": "v1", "plural": "gangs", "kind": "Gang"},
        "group_status_path": "status.groups", "group_label": "group",
        "groups_path": "spec.groups", "min_available_path": "spec.minAvailable",
        "pod_selector": {"app": "{name}"}, "breach_condition": "Breached",
        "termination_reason": "GangTerminated", "scheduled_zero_reason": "ScheduledZero"}
STORAGE = {"resource": {"group": "x.io", "version": "v1", "plural": "storageclusters",
                        "kind": "StorageCluster"},
           "workload": {"kind": "StatefulSet", "name": "{name}"}, "member_pod": "{name}-{ordinal}",
           "members_path": "status.members", "terminal_path": "status.finished",
           "destructive_reasons": ["DataWiped"]}
# A gang whose replicas keep their status on objects of their own (Grove: a PodClique per
# PodCliqueSet replica), and whose termination delay is a duration string.
CHILD_GANG = {
    "resource": {"group": "x.io", "version": "v1", "plural": "sets", "kind": "Set"},
    "groups_path": "spec.replicas", "replicas_path": "spec.cliques[name=w].replicas",
    "min_available_path": "spec.cliques[name=w].minAvailable",
    "termination_delay_path": "spec.delay", "termination_delay_format": "duration",
    "group_status": {"resource": {"group": "x.io", "version": "v1", "plural": "cliques",
                                  "kind": "Clique"}, "name": "{name}-{group}-w"},
    "group_label": "replica", "pod_selector": {"part-of": "{name}"},
    "breach_condition": "Breached", "breach_reasons": ["Below"], "healthy_reasons": ["Fine"],
    "termination_reason": "Terminated", "scheduled_zero_reason": "Lost"}
