"""Profiles (profiles/*.yaml): how an implementation is installed and started, and how the
words of the features map onto it. Validated: errors name file, line, field and what was
expected.

An implementation runs out of the cluster (``start``: a process with a kubeconfig, on any
provider) or in it (``install_in_cluster``: manifests or a helm chart plus the image they run,
loaded into the nodes — kind only); a profile may offer both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.errors import UserError
from aftershock.schema import Field, validate
from aftershock.yamlsrc import Located, load

STRINGS = Field("list", items=Field(str), expected="a list of strings")
STRING_MAP = Field("map", items=Field((str, int, float)), expected="a mapping of strings")
RESOURCE = Field("map", required=True, schema={
    "group": Field(str, required=True), "version": Field(str, required=True),
    "plural": Field(str, required=True), "kind": Field(str, required=True),
}, expected="group, version, plural and kind")

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
    }),
    "storage_cluster": Field("map", schema={
        "resource": RESOURCE,
        "size_path": Field(str, required=True),
        "retention_path": Field(str, required=True),
        "retention_values": Field("list", required=True, items=Field(str)),
        "lossy_retention_values": Field("list", items=Field(str),
                                        expected="the modes in which removed data may go"),
        "autoscale_path": Field(str),
        "members_path": Field(str, required=True, expected="a dotted path to the Ready members"),
        "terminal_path": Field(str, required=True,
                               expected="a dotted path to the members whose removal finished"),
        "workload": Field("map", required=True, schema={
            "kind": Field(str, required=True, choices=("StatefulSet",)),
            "name": Field(str, required=True, expected="a name; {name} is the cluster's"),
        }),
        "member_pod": Field(str, required=True, expected="a pod name with {name} and {ordinal}"),
        "destructive_reasons": Field("list", required=True, items=Field(str),
                                     expected="the Event reasons of destructive actions"),
        "data_probe": Field("list", required=True, items=Field(str),
                            expected="a command (a list of strings)"),
    }),
    "stateful_set": Field("map", schema={"resource": RESOURCE}),
    "gang": Field("map", schema={
        "resource": RESOURCE,
        "groups_path": Field(str, required=True, expected="a dotted path to the gang replicas"),
        "replicas_path": Field(str, required=True, expected="a dotted path to pods per group"),
        "min_available_path": Field(str, required=True),
        "termination_delay_path": Field(str, required=True),
        "group_status_path": Field(str, required=True,
                                   expected="a dotted path to the list of group statuses"),
        "group_label": Field(str, required=True, expected="the pod label holding the group"),
        "pod_selector": Field("map", required=True, items=Field(str),
                              expected="labels; {name} is the gang's name"),
        "breach_condition": Field(str, required=True),
        "breach_reasons": Field("list", required=True, items=Field(str)),
        "termination_reason": Field(str, required=True, expected="an Event reason"),
        "scheduled_zero_reason": Field(str, required=True, expected="an Event reason"),
    }),
    "device_driver": Field("map", schema={
        "driver": Field(str, required=True),
        "device_class": Field(str, required=True),
        "prepare_log": Field(str, required=True,
                             expected="the driver's prepare/unprepare log; {workdir} allowed"),
    }),
    "node_records": Field("map", schema={
        "resource": RESOURCE,
        "index_path": Field(str, required=True),
        "node_path": Field(str, required=True),
        "touched_path": Field(str, required=True, expected="a dotted path to the last touch"),
        "staleness_seconds": Field((int, float), required=True),
        "poll_seconds": Field((int, float), required=True),
        "slots": Field(int, required=True, expected="how many indexes (0 to slots-1)"),
    }),
}

SCHEMA = {
    "name": Field(str, required=True),
    "description": Field(str),
    "install": Field("map", schema={
        "manifests": Field("list", items=Field(str), expected="a list of file paths"),
        "commands": Field("list", items=STRINGS, expected="a list of commands"),
    }),
    "start": Field("map", schema={
        "command": Field("list", required=True, items=Field(str),
                         expected="a list of strings (the command and its arguments)"),
        "env": STRING_MAP,
        "cwd": Field(str),
        "ready": Field("map", schema={"log": Field(str), "http": Field(str),
                                      "timeout_seconds": Field((int, float))}),
        "stop_grace_seconds": Field((int, float)),
        "service_account": Field(str),
    }),
    "install_in_cluster": Field("map", schema={
        "image": Field(str, required=True,
                       expected="the image the manifests or chart run, loaded into the nodes"),
        "build": Field("map", schema={
            "context": Field(str, required=True, expected="a directory, relative to the repo"),
            "dockerfile": Field(str, expected="a Dockerfile, relative to the repo"),
        }),
        "manifests": Field("list", items=Field(str),
                           expected="a list of file paths ({namespace}, {image} and "
                                    "{service_account} are filled in)"),
        "helm": Field("map", schema={
            "chart": Field(str, required=True, expected="a chart directory or a chart name"),
            "repo": Field(str, expected="the chart repository URL"),
            "version": Field(str),
            "release": Field(str),
            "values": Field("list", items=Field(str), expected="a list of values files"),
            "set": STRING_MAP,
        }),
        "deployment": Field(str, required=True,
                            expected="the name of the Deployment running the implementation"),
        "container": Field(str, expected="its container (default: the first)"),
        "service_account": Field(str),
        "ready_timeout_seconds": Field((int, float)),
    }),
    "actor": Field(str, expected="the username its API calls carry (built-in controllers)"),
    "watch_delay_target": Field(str, choices=("kube-controller-manager", "kube-scheduler"),
                                expected="the component a watch delay restarts"),
    "rbac": Field("list", items=Field("map", items=None), expected="a list of RBAC PolicyRules"),
    "cluster_rbac": Field("list", items=Field("map", items=None),
                          expected="a list of RBAC PolicyRules granted cluster-wide"),
    "concepts": Field("map", required=True, schema=CONCEPTS),
}


@dataclass(frozen=True)
class Start:
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."
    ready_log: str | None = None
    ready_http: str | None = None
    ready_timeout: float = 30.0
    stop_grace: float = 5.0
    service_account: str = "implementation"


@dataclass(frozen=True)
class Helm:
    chart: str
    repo: str | None = None
    version: str | None = None
    release: str | None = None
    values: tuple[str, ...] = ()
    settings: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InCluster:
    """An implementation installed into the cluster and run from its image."""

    image: str
    deployment: str
    manifests: tuple[str, ...] = ()
    helm: Helm | None = None
    build_context: str | None = None
    dockerfile: str | None = None
    container: str | None = None
    service_account: str = "implementation"
    ready_timeout: float = 120.0


@dataclass(frozen=True)
class Profile:
    name: str
    path: Path
    manifests: tuple[str, ...]
    commands: tuple[tuple[str, ...], ...]
    start: Start | None
    rbac: tuple[dict[str, Any], ...]
    cluster_rbac: tuple[dict[str, Any], ...]
    concepts: dict[str, dict[str, Any]]
    watch_delay_target: str | None = None
    actor: str | None = None
    in_cluster: InCluster | None = None

    @property
    def in_cluster_only(self) -> bool:
        return self.in_cluster is not None and self.start is None

    def concept(self, name: str) -> dict[str, Any] | None:
        return self.concepts.get(name)

    def resolve(self, relative: str) -> Path:
        """Paths in a profile are relative to the profile file (wherever it is kept)."""
        return (self.path.parent / relative).resolve()

    @property
    def workdir(self) -> Path:
        """Where the implementation's commands (its start, a data probe) run."""
        return self.resolve(self.start.cwd) if self.start else self.path.parent


def load_profile(path: str | Path) -> Profile:
    if not Path(path).is_file():
        raise UserError("no such profile", path=str(path))
    doc = load(path)
    validate(doc, SCHEMA)
    raw = doc.data
    in_cluster = _in_cluster(doc, raw.get("install_in_cluster"))
    start = raw.get("start")
    ready = (start or {}).get("ready") or {}
    return Profile(
        name=raw["name"],
        path=Path(path).resolve(),
        manifests=tuple((raw.get("install") or {}).get("manifests") or ()),
        commands=tuple(tuple(c) for c in (raw.get("install") or {}).get("commands") or ()),
        start=Start(
            command=tuple(start["command"]),
            env={k: str(v) for k, v in (start.get("env") or {}).items()},
            cwd=start.get("cwd", "."),
            ready_log=ready.get("log"), ready_http=ready.get("http"),
            ready_timeout=float(ready.get("timeout_seconds", 30)),
            stop_grace=float(start.get("stop_grace_seconds", 5)),
            service_account=start.get("service_account", "implementation"),
        ) if start else None,
        rbac=tuple(raw.get("rbac") or ()),
        cluster_rbac=tuple(raw.get("cluster_rbac") or ()),
        concepts=dict(raw["concepts"]),
        watch_delay_target=raw.get("watch_delay_target"),
        actor=raw.get("actor"),
        in_cluster=in_cluster,
    )


def _in_cluster(doc: Located, raw: dict[str, Any] | None) -> InCluster | None:
    if raw is None:
        return None
    if ("manifests" in raw) == ("helm" in raw):
        raise doc.error("field 'install_in_cluster' needs either 'manifests' or 'helm' "
                        "(exactly one)", "install_in_cluster")
    helm = raw.get("helm")
    build = raw.get("build") or {}
    return InCluster(
        image=raw["image"],
        deployment=raw["deployment"],
        manifests=tuple(raw.get("manifests") or ()),
        helm=Helm(chart=helm["chart"], repo=helm.get("repo"), version=helm.get("version"),
                  release=helm.get("release"), values=tuple(helm.get("values") or ()),
                  settings={k: str(v) for k, v in (helm.get("set") or {}).items()},
                  ) if helm else None,
        build_context=build.get("context"),
        dockerfile=build.get("dockerfile"),
        container=raw.get("container"),
        service_account=raw.get("service_account", "implementation"),
        ready_timeout=float(raw.get("ready_timeout_seconds", 120)),
    )
