"""What a profile may say: the schema its YAML is validated against (errors name file:line,
the field and what was expected)."""

from __future__ import annotations

from aftershock.machine.schema import Field

STRINGS = Field("list", items=Field(str), expected="a list of strings")
STRING_MAP = Field("map", items=Field((str, int, float)), expected="a mapping of strings")
RESOURCE = Field("map", required=True, schema={
    "group": Field(str, required=True), "version": Field(str, required=True),
    "plural": Field(str, required=True), "kind": Field(str, required=True),
}, expected="group, version, plural and kind")

# What a pattern of device_driver.seen_in_container says a container shows (D13)
SEEN_IDENTITIES = ("device", "claim", "claim_uid")

CONCEPTS = {
    "replica_group": Field("map", schema={
        "resource": RESOURCE,
        "replicas_path": Field(str, required=True, expected="a dotted path like spec.replicas"),
        "pod_selector": Field("map", required=True, items=Field(str),
                              expected="labels; {name} is the group's name"),
        "singleton_selector": Field("map", items=Field(str)),
        "head_path": Field(str, expected="a dotted path switching the singleton (head) pod on"),
        "finalizer_path": Field(str, expected="a dotted path to a finalizer the pods carry"),
        "manifest": Field(str, expected="a YAML file with {name} and {replicas} placeholders"),
        "scalable": Field(bool, expected="false where the implementation refuses a change of "
                                        "replicas_path after creation (a JobSet's replicated "
                                        "jobs): a scenario that scales the group is skipped"),
        "pod_actor": Field(str, expected="the username that creates and deletes the group's "
                                         "pods, when not the implementation itself (e.g. the "
                                         "replicaset controller under a Deployment)"),
    }),
    "storage_cluster": Field("map", schema={
        "resource": RESOURCE,
        "manifest": Field(str, expected="a YAML file for the cluster ({name}, {namespace}, "
                                        "{size}, {mode}); the paths below are set in it"),
        "size_path": Field(str, required=True),
        "retention_path": Field(str, expected="a dotted path to the scale-down mode (none: the "
                                              "implementation has one, retention_values' only "
                                              "value)"),
        "retention_values": Field("list", required=True, items=Field(str)),
        "lossy_retention_values": Field("list", items=Field(str),
                                        expected="the modes in which removed data may go"),
        "parked_retention_values": Field("list", items=Field(str),
                                         expected="the modes that keep a removed member's data "
                                                  "on its disk without serving it (a read may "
                                                  "cleanly not find it)"),
        "autoscale_path": Field(str),
        "members_path": Field(str, expected="a dotted path to the Ready members"),
        "terminal_path": Field(str, expected="a dotted path to the members whose removal "
                                             "finished"),
        "workload": Field("map", required=True, schema={
            "kind": Field(str, required=True, choices=("StatefulSet",)),
            "name": Field(str, required=True, expected="a name; {name} is the cluster's"),
        }),
        "member_pod": Field(str, required=True, expected="a pod name with {name} and {ordinal}"),
        "destructive_reasons": Field("list", items=Field(str),
                                     expected="the Event reasons of destructive actions"),
        "data_probe": Field("list", required=True, items=Field(str),
                            expected="a command (a list of strings)"),
        "app_state": Field("list", items=Field(str),
                           expected="a command (a list of strings) that, given the word "
                                    "'watch', reads what the application says of itself on a "
                                    "schedule and prints one JSON line per read: at, version, "
                                    "members and finished (the ordinals), or error; instead "
                                    "of members_path and terminal_path; a read may "
                                    "add moved: the members in maintenance whose data was "
                                    "moved to the others"),
        "maintenance": Field("list", items=Field(str),
                             expected="a command (a list of strings; {ordinal} is the member) "
                                      "that puts a member into maintenance, its data moved to "
                                      "the others, as the application's guide says before its "
                                      "node is retired; prints one JSON document"),
    }),
    "stateful_set": Field("map", schema={"resource": RESOURCE}),
    "gang": Field("map", schema={
        "resource": RESOURCE,
        "groups_path": Field(str, required=True, expected="a dotted path to the gang replicas"),
        "replicas_path": Field(str, required=True, expected="a dotted path to pods per group"),
        "min_available_path": Field(str, required=True),
        "termination_delay_path": Field(str, required=True),
        "group_status_path": Field(str, expected="a dotted path to the list of group statuses "
                                                 "(or group_status)"),
        "group_status": Field("map", schema={
            "resource": RESOURCE,
            "name": Field(str, required=True, expected="its name; {name} is the gang's, "
                                                       "{group} the replica's index"),
            "path": Field(str, expected="where its conditions are (default: status)")},
            expected="each replica's status on an object of its own"),
        "manifest": Field(str, expected="a YAML file for the gang ({name}, {namespace}); the "
                                        "paths above are set in it"),
        "termination_delay_format": Field(str, expected="seconds (a number, the default) or "
                                                        "duration (a string such as 30s)"),
        "group_label": Field(str, required=True, expected="the pod label holding the group"),
        "pod_selector": Field("map", required=True, items=Field(str),
                              expected="labels; {name} is the gang's name"),
        "breach_condition": Field(str, required=True),
        "breach_reasons": Field("list", required=True, items=Field(str)),
        "healthy_reasons": Field("list", items=Field(str),
                                 expected="breach-condition reasons that say the replica is seen "
                                          "healthy"),
        "termination_reason": Field(str, required=True, expected="an Event reason"),
        "scheduled_zero_reason": Field(str, required=True, expected="an Event reason"),
        "binding": Field(str, choices=("per_pod", "all_or_nothing"),
                         expected="per_pod (the default), or all_or_nothing when the "
                                  "implementation leaves binding a replica whole to a gang "
                                  "scheduler"),
    }),
    "gang_scheduler": Field("map", schema={
        "scheduler_name": Field(str, required=True,
                                expected="the schedulerName a pod names to be scheduled by it"),
        "resource": RESOURCE,
        "min_member_path": Field(str, required=True,
                                 expected="a dotted path to the group's minimum in its object"),
        "manifest": Field(str, expected="a YAML file for the group's object ({name}, "
                                        "{namespace}, {min_member}, {size}); none where the "
                                        "implementation makes it from the pods (Kueue's "
                                        "Workload), named after the group, its minimum the "
                                        "group's size"),
        "pod_manifest": Field(str, required=True,
                              expected="a YAML file for one of its pods ({name} the group's, "
                                       "{pod}, {namespace}, {scheduler_name}, {size}, "
                                       "{min_member})"),
        "pod_selector": Field("map", required=True, items=Field(str),
                              expected="labels its pod manifest sets; {name} is the group's"),
        "claims": Field("map", schema={
            "path": Field(str, required=True,
                          expected="a dotted path to the list of claims (KEP-5729's "
                                   "spec.resourceClaims: {name, resourceClaimName})"),
        }, expected="that a group's object names claims its pods share, reserved for the "
                    "group (@concept:gang_scheduler.claims)"),
        "disruption_mode_path": Field(str, expected="a dotted path to the group's disruption "
                                      "mode (KEP-5710's spec.disruptionMode: {all: {}} evicts "
                                      "it whole; Single, the default, one pod at a time, and B3 "
                                      "does not apply)"),
        "preemption": Field("map", schema={
            "pod_manifest": Field(str, required=True,
                                  expected="a YAML file for a pod that may preempt ({pod}, "
                                           "{namespace}, {scheduler_name}, "
                                           "{priority_class})"),
        }, expected="that it preempts a group for a pod of higher priority (B3 on "
                    "preemption; @concept:gang_scheduler.preemption)"),
        "single": Field("map", schema={
            "pod_manifest": Field(str, required=True,
                                  expected="a YAML file for a pod of no group it schedules "
                                           "({pod}, {namespace}, {scheduler_name})"),
        }, expected="that it schedules pods of no group too (B6 with single pods; "
                    "@concept:gang_scheduler.single)"),
        "queue": Field("map", schema={
            "resource": RESOURCE,
            "manifest": Field(str, required=True,
                              expected="a YAML file for a queue ({queue} its name, "
                                       "{cpu_limit} its CPU limit in cpu_unit)"),
            "cpu_limit_path": Field(str, required=True,
                                    expected="a dotted path to the queue's CPU limit"),
            "cpu_unit": Field(str, expected="the quantity one unit of that limit is (1m: "
                                            "millicores); 1 (a core) by default"),
            "group_queue_path": Field(str, required=True,
                                      expected="a dotted path to the queue a group names"),
            "default": Field(str, required=True,
                             expected="the queue a group is in when a step names none"),
        }, expected="its queues, when it has them (B5; @concept:gang_scheduler.queue)"),
    }),
    "device_driver": Field("map", schema={
        "driver": Field(str, required=True),
        "device_class": Field(str, required=True),
        "prepare_log": Field(str, expected="the driver's prepare/unprepare log; {workdir} "
                                           "allowed"),
        "node_state": Field(str, choices=("kubelet",),
                            expected="where D5 reads what each node has prepared: kubelet (its "
                                     "DRA checkpoint)"),
        "devices_per_node": Field(int, expected="how many devices a node has (D12: its "
                                                "ResourceSlices list no more)"),
        "seen_in_container": Field("map", schema={
            "patterns": Field("list", required=True, items=Field("map", schema={
                "env": Field(str, expected="a regular expression an environment variable's "
                                          "name matches whole"),
                "dev": Field(str, expected="a regular expression a /dev entry's name matches "
                                          "whole"),
                "device": Field(str, expected="the device it shows: {value} the variable's "
                                             "value, {1} the expression's first group"),
                "claim": Field(str, expected="the claim it shows, by name (its characters "
                                            "other than letters and digits as _)"),
                "claim_uid": Field(str, expected="the claim it shows, by uid"),
            }), expected="a list of {env or dev, and device, claim or claim_uid}"),
        }, expected="how a container shows a device the driver gave it (D13; "
                    "@concept:device_driver.seen_in_container)"),
    }),
    "node_records": Field("map", schema={
        "resource": RESOURCE,
        "index_path": Field(str, required=True),
        "node_path": Field(str, required=True),
        "touched_path": Field(str, required=True, expected="a dotted path to the last touch"),
        "staleness_seconds": Field((int, float), required=True),
        "poll_seconds": Field((int, float), required=True),
        "slots": Field(int, required=True, expected="how many indexes (0 to slots-1)"),
        "node_selector": Field(str, expected="the nodes it keeps records for, as a label "
                                             "selector: key, !key, key=value or key!=value"),
    }),
}


def known_concept(name: str) -> bool:
    """A concept, or an optional part of one (``gang_scheduler.queue``), the schema knows."""
    fields: dict[str, Field] | None = CONCEPTS
    for key in name.split("."):
        found = (fields or {}).get(key)
        if found is None or found.schema is None:
            return False
        fields = found.schema
    return True

SCHEMA = {
    "name": Field(str, required=True),
    "description": Field(str),
    "build": Field("map", schema={
        "go": Field(str, expected="a pinned Go package, module/path/cmd@vX.Y.Z (go install)"),
        "git": Field(str, expected="a git repository URL to build from (with 'commit')"),
        "path": Field(str, expected="a Go module's folder in the project, relative to the "
                                    "profile (its own go.mod and go.sum)"),
        "commit": Field(str, expected="the full commit id (40 hex digits) to build"),
        "dir": Field(str, expected="the Go module's folder in the repository (default: its "
                                   "root)"),
        "package": Field(str, expected="the package to build, relative to the module's folder "
                                       "(default: .)"),
        "binary": Field(str, expected="the program it makes (default: the package's name)"),
        "toolchain": Field(str, expected="the Go toolchain to build it with (e.g. go1.27.3) "
                                         "when its go.mod needs a newer Go than the machine's: "
                                         "taken from the Go module proxy as GOTOOLCHAIN does"),
        "own_module": Field(bool, expected="true to build a published module in its own "
                                           "directory, where its replace lines hold"),
        "patches": Field("list", items=Field(str),
                         expected="diffs applied (patch -p1) to a copy of the module, or of the "
                                  "repository with 'git', before it is built: files relative "
                                  "to the profile"),
        "more": Field("map", items=None,
                      expected="more programs, name: a package of the same source tree (of the "
                               "same module, by its import path, for a 'go' build), or "
                               "{git, commit, dir, package} of another (each filled in as "
                               "{binary_<name>}, another tree's as {source_dir_<name>})"),
    }),
    "rbac_from": Field("list", items=Field(str),
                       expected="RBAC manifests (ClusterRole or Role) whose rules it is granted "
                                "cluster-wide, e.g. {module_dir}/config/rbac/role.yaml, or a "
                                "Helm chart's folder (its ClusterRoles and Roles, rendered "
                                "with its default values)"),
    "install": Field("map", schema={
        "manifests": Field("list", items=Field(str), expected="a list of file paths"),
        "commands": Field("list", items=STRINGS, expected="a list of commands"),
    }),
    "start": Field("map", schema={
        "command": Field("list", required=True, items=Field(str),
                         expected="a list of strings (the command and its arguments)"),
        "env": STRING_MAP,
        "cwd": Field(str),
        "ready": Field("map", schema={
            "log": Field(str, expected="a line its log prints once it is ready"),
            "http": Field(str, expected="a URL that answers 2xx once it is ready (https: "
                                        "its certificate not verified, as a kubelet's probe)"),
            "lease": Field(str, expected="a Lease in the scenario's namespace it holds "
                                         "(leader election)"),
            "condition": Field("map", schema={
                "resource": RESOURCE, "name": Field(str, required=True),
                "type": Field(str, required=True)},
                expected="an object in the scenario's namespace whose condition turns True"),
            "timeout_seconds": Field((int, float))}),
        "stop_grace_seconds": Field((int, float)),
        "service_account": Field(str),
        "ports": Field("list", items=Field(str),
                       expected="names of free ports it is given on 127.0.0.1, each filled in "
                                "as {port_<name>}"),
        "serving_certificate": Field(bool, expected="true: a key pair for {host} in "
                                                    "{tls_dir} (tls.crt, tls.key, ca.crt) and "
                                                    "its CA as {ca_bundle}"),
        "files": Field("map", items=Field(str),
                       expected="file name: a template file (relative to the profile), written "
                                "into {files} with its placeholders filled"),
        "manifests": Field("list", items=Field(str),
                           expected="manifests applied once it is ready, with its placeholders "
                                    "filled (webhook configurations pointing at it); removed "
                                    "when the scenario ends"),
        "companions": Field("list", items=Field("map", schema={
            "name": Field(str, required=True, expected="a name for its log lines"),
            "command": Field("list", required=True, items=Field(str),
                             expected="a list of strings (the command and its arguments)"),
            "env": STRING_MAP,
        }), expected="more processes of the implementation (a gang scheduler's binder), "
                     "started before it with its placeholders and identity, stopped with it"),
    }),
    "install_in_cluster": Field("map", schema={
        "image": Field(str, required=True,
                       expected="the image the manifests or chart run, loaded into the nodes"),
        "build": Field("map", schema={
            "context": Field(str, expected="a directory, relative to the profile file"),
            "dockerfile": Field(str, expected="a Dockerfile, relative to the profile file"),
            "program": Field(str, expected="an absolute path in the image for the profile's "
                                           "built program"),
        }),
        "manifests": Field("list", items=Field(str),
                           expected="a list of file paths ({namespace}, {image}, "
                                    "{service_account} and {ca_bundle} are filled in)"),
        "images": Field("list", items=Field("map", schema={
            "image": Field(str, required=True, expected="its name, aftershock.local/..."),
            "go": Field(str, required=True, expected="a pinned Go package, "
                                                     "module/path/cmd@vX.Y.Z"),
            "program": Field(str, required=True, expected="an absolute path in the image"),
            "entrypoint": Field("list", items=Field(str)),
        }), expected="more images it runs, each one Go program built here; served to the "
                     "nodes by the cluster's registry, so a pod that always pulls finds them"),
        "node_logs": Field(str, expected="a directory under each node's node-local data where "
                                         "the workloads it makes write their logs (saved with "
                                         "its own)"),
        "serving_certificate": Field(str, expected="the name of a TLS Secret (tls.crt, tls.key, "
                                                   "ca.crt) made in the namespace before its "
                                                   "manifests, for a webhook server; its CA "
                                                   "is {ca_bundle}"),
        "helm": Field("map", schema={
            "chart": Field(str, required=True, expected="a chart directory or a chart name"),
            "repo": Field(str, expected="the chart repository URL"),
            "version": Field(str),
            "release": Field(str),
            "values": Field("list", items=Field(str), expected="a list of values files"),
            "set": STRING_MAP,
        }),
        "deployment": Field(str, expected="the name of the Deployment running the "
                                          "implementation"),
        "daemonset": Field(str, expected="the name of the DaemonSet running the implementation "
                                         "(a node agent)"),
        "container": Field(str, expected="its container (default: the first)"),
        "service_account": Field(str),
        "ready_timeout_seconds": Field((int, float)),
    }),
    "actor": Field(str, expected="the username its API calls carry (built-in controllers)"),
    "cluster": Field("map", schema={
        "gangScheduling": Field(bool, expected="true: kube-scheduler's own gang scheduling on "
                                               "(the shape field of that name)"),
    }, expected="what the cluster must have for it: a shape's switches"),
    "not_applicable": Field("map", items=Field(str), expected="a property id (B4) and why it "
                            "does not apply to this implementation, with its source (a KEP's "
                            "or the implementation's documented word)"),
    "watch_delay_target": Field(str, choices=("kube-controller-manager", "kube-scheduler"),
                                expected="the component a watch delay restarts"),
    "rbac": Field("list", items=Field("map", items=None), expected="a list of RBAC PolicyRules"),
    "cluster_rbac": Field("list", items=Field("map", items=None),
                          expected="a list of RBAC PolicyRules granted cluster-wide"),
    "concepts": Field("map", schema=CONCEPTS),
}
