"""Cluster shapes (clusters/*.yaml): which nodes exist, with what labels, taints and capacity."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.errors import UserError
from aftershock.machine.limits import MAX_PODS_PER_NODE, nodes_problem
from aftershock.machine.yamlsrc import Located, load

QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
VERSION = re.compile(r"^v?1\.[0-9]+\.[0-9]+$")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DEFAULT_CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110"}

SHAPE_FIELDS = ("name", "kubernetesVersion", "nodes", "nodeFailure", "gangScheduling",
                "scheduler")
SCHEDULER_FIELDS = ("clientQPS", "clientBurst", "verbosity")
MAX_VERBOSITY = 10  # klog's highest level anything logs at
# kube-scheduler's own defaults for its client's rate (KubeSchedulerConfiguration
# clientConnection); a shape may raise them to schedule as fast as the API server allows
SCHEDULER_QPS, SCHEDULER_BURST, MAX_CLIENT_RATE = 50, 100, 100_000
NODES_FIELDS = ("count", "namePrefix", "template")
NODE_FIELDS = ("name", "labels", "taints", "capacity", "devices")
TEMPLATE_FIELDS = ("labels", "taints", "capacity", "devices")
# The simulated devices a node has, for DRA drivers to publish (the node's "hardware").
DEVICES_LABEL = "aftershock.io/devices"
TAINT_FIELDS = ("key", "value", "effect")
CAPACITY_FIELDS = ("cpu", "memory", "pods", "ephemeral-storage")
FAILURE_FIELDS = ("notReadyTolerationSeconds", "unreachableTolerationSeconds")


@dataclass(frozen=True)
class Taint:
    key: str
    effect: str
    value: str = ""

    def to_api(self) -> dict[str, str]:
        taint = {"key": self.key, "effect": self.effect}
        if self.value:
            taint["value"] = self.value
        return taint


@dataclass(frozen=True)
class NodeSpec:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    devices: int = 0


@dataclass(frozen=True)
class Shape:
    name: str
    nodes: tuple[NodeSpec, ...]
    kubernetes_version: str | None = None
    not_ready_toleration_seconds: int = 300
    unreachable_toleration_seconds: int = 300
    source: str = "<inline>"
    # kube-scheduler's built-in gang scheduling (the Workload and PodGroup API, KEP-4671, behind
    # its feature gates: Kubernetes 1.35 and later)
    gang_scheduling: bool = False
    scheduler_qps: int = SCHEDULER_QPS  # kube-scheduler's --kube-api-qps
    scheduler_burst: int = SCHEDULER_BURST  # its --kube-api-burst
    scheduler_verbosity: int | None = None  # its --v: the level its log is written at

    @property
    def node_names(self) -> list[str]:
        return [node.name for node in self.nodes]


def _at(*keys: Any) -> str:
    return ".".join(map(str, keys))


def _unknown(doc: Located, mapping: dict[str, Any], allowed: tuple[str, ...], *at: Any) -> None:
    for key in mapping:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise doc.error(
                f"unknown field '{_at(*at, key)}'{hint}; "
                f"expected one of: {', '.join(allowed)}",
                *at,
                key,
            )


def _mapping(doc: Located, value: Any, *at: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        where = ".".join(map(str, at)) or "the document"
        raise doc.error(f"field '{where}' must be a mapping, got {type(value).__name__}", *at)
    return value


def _string_map(doc: Located, value: Any, *at: Any) -> dict[str, str]:
    result = {}
    for key, item in _mapping(doc, value, *at).items():
        if not isinstance(item, (str, int, float, bool)):
            raise doc.error(f"field '{_at(*at, key)}' must be a string", *at, key)
        result[str(key)] = str(item).lower() if isinstance(item, bool) else str(item)
    return result


def _capacity(doc: Located, value: Any, *at: Any) -> dict[str, str]:
    given = _string_map(doc, value, *at)
    _unknown(doc, given, CAPACITY_FIELDS, *at)
    for key, quantity in given.items():
        if not QUANTITY.match(quantity):
            raise doc.error(
                f"field '{_at(*at, key)}' must be a quantity like 2, 500m or 80Mi, "
                f"got '{quantity}'",
                *at,
                key,
            )
    pods = given.get("pods", "0")
    if pods.isdigit() and int(pods) > MAX_PODS_PER_NODE:
        raise doc.error(f"field '{_at(*at, 'pods')}' is {pods}: at most {MAX_PODS_PER_NODE} "
                        "pods per node (a kubelet's own default is 110)", *at, "pods")
    return {**DEFAULT_CAPACITY, **given}


def _taints(doc: Located, value: Any, *at: Any) -> tuple[Taint, ...]:
    if not isinstance(value, list):
        raise doc.error(f"field '{_at(*at)}' must be a list", *at)
    taints = []
    for index, item in enumerate(value):
        raw = _mapping(doc, item, *at, index)
        _unknown(doc, raw, TAINT_FIELDS, *at, index)
        if "key" not in raw:
            raise doc.error(f"field '{_at(*at, index)}.key' is required", *at, index)
        effect = raw.get("effect", "NoSchedule")
        if effect not in TAINT_EFFECTS:
            raise doc.error(
                f"field '{_at(*at, index)}.effect' must be one of "
                f"{', '.join(TAINT_EFFECTS)}, got '{effect}'",
                *at,
                index,
                "effect",
            )
        taints.append(Taint(str(raw["key"]), effect, str(raw.get("value", ""))))
    return tuple(taints)


def _node(doc: Located, raw: dict[str, Any], name: str, allowed: tuple[str, ...], *at: Any):
    _unknown(doc, raw, allowed, *at)
    if not DNS_LABEL.match(name):
        raise doc.error(f"node name '{name}' is not a valid DNS label", *at)
    return NodeSpec(
        name=name,
        labels=_string_map(doc, raw.get("labels", {}), *at, "labels"),
        taints=_taints(doc, raw.get("taints", []), *at, "taints"),
        capacity=_capacity(doc, raw.get("capacity", {}), *at, "capacity"),
        devices=_positive_int(doc, raw.get("devices", 0), *at, "devices", minimum=0),
    )


def _positive_int(doc: Located, value: Any, *at: Any, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise doc.error(
            f"field '{_at(*at)}' must be a whole number ≥ {minimum}, got {value!r}", *at
        )
    return value


def _nodes(doc: Located, value: Any) -> tuple[NodeSpec, ...]:
    if isinstance(value, list):
        nodes = []
        for index, item in enumerate(value):
            raw = _mapping(doc, item, "nodes", index)
            if "name" not in raw:
                raise doc.error(f"field 'nodes.{index}.name' is required", "nodes", index)
            nodes.append(_node(doc, raw, str(raw["name"]), NODE_FIELDS, "nodes", index))
        _fits(doc, len(nodes), "nodes")
        names = [node.name for node in nodes]
        for index, name in enumerate(names):
            if names.index(name) != index:
                raise doc.error(f"node name '{name}' appears twice", "nodes", index, "name")
        return tuple(nodes)
    raw = _mapping(doc, value, "nodes")
    _unknown(doc, raw, NODES_FIELDS, "nodes")
    if "count" not in raw:
        raise doc.error("field 'nodes.count' is required (or give 'nodes' as a list)", "nodes")
    count = _positive_int(doc, raw["count"], "nodes", "count")
    _fits(doc, count, "nodes", "count")
    prefix = str(raw.get("namePrefix", "node-"))
    template = _mapping(doc, raw.get("template", {}), "nodes", "template")
    return tuple(
        _node(doc, template, f"{prefix}{index}", TEMPLATE_FIELDS, "nodes", "template")
        for index in range(1, count + 1)
    )


def _fits(doc: Located, nodes: int, *at: Any) -> None:
    """Refused before anything starts when this machine cannot hold that many nodes."""
    problem = nodes_problem(nodes)
    if problem:
        raise doc.error(problem, *at)


def parse(doc: Located) -> Shape:
    raw = _mapping(doc, doc.data)
    _unknown(doc, raw, SHAPE_FIELDS)
    if "nodes" not in raw:
        raise doc.error("field 'nodes' is required")
    version = raw.get("kubernetesVersion")
    if version is not None and not VERSION.match(str(version)):
        raise doc.error(
            f"field 'kubernetesVersion' must look like 1.37.2, got '{version}'", "kubernetesVersion"
        )
    gang = raw.get("gangScheduling", False)
    if not isinstance(gang, bool):
        raise doc.error(f"field 'gangScheduling' must be true or false, got '{gang}'",
                        "gangScheduling")
    scheduler = _mapping(doc, raw.get("scheduler", {}), "scheduler")
    _unknown(doc, scheduler, SCHEDULER_FIELDS, "scheduler")
    rates = {key: _positive_int(doc, scheduler.get(key, default), "scheduler", key)
             for key, default in (("clientQPS", SCHEDULER_QPS), ("clientBurst", SCHEDULER_BURST))}
    for key, rate in rates.items():
        if rate > MAX_CLIENT_RATE:
            raise doc.error(f"field 'scheduler.{key}' must be at most {MAX_CLIENT_RATE}, got "
                            f"{rate}", "scheduler", key)
    verbosity = scheduler.get("verbosity")
    if verbosity is not None and (isinstance(verbosity, bool) or not isinstance(verbosity, int)
                                  or not 0 <= verbosity <= MAX_VERBOSITY):
        raise doc.error(f"field 'scheduler.verbosity' must be a whole number from 0 to "
                        f"{MAX_VERBOSITY}, got '{verbosity}'", "scheduler", "verbosity")
    failure = _mapping(doc, raw.get("nodeFailure", {}), "nodeFailure")
    _unknown(doc, failure, FAILURE_FIELDS, "nodeFailure")
    return Shape(
        name=str(raw.get("name") or Path(doc.path).stem),
        nodes=_nodes(doc, raw["nodes"]),
        kubernetes_version=str(version).lstrip("v") if version else None,
        not_ready_toleration_seconds=_positive_int(
            doc, failure.get("notReadyTolerationSeconds", 300), "nodeFailure",
            "notReadyTolerationSeconds", minimum=0,
        ),
        unreachable_toleration_seconds=_positive_int(
            doc, failure.get("unreachableTolerationSeconds", 300), "nodeFailure",
            "unreachableTolerationSeconds", minimum=0,
        ),
        source=doc.path,
        gang_scheduling=gang,
        scheduler_qps=rates["clientQPS"],
        scheduler_burst=rates["clientBurst"],
        scheduler_verbosity=verbosity,
    )


def load_shape(path: str | Path) -> Shape:
    """Load and validate a shape file; every problem is one UserError naming file:line."""
    if not Path(path).is_file():
        raise UserError("no such cluster shape file", path=str(path))
    return parse(load(path))


def find_root(start: Path) -> Path | None:
    """The project a path is in: the nearest folder, from ``start`` up, whose pyproject.toml
    names aftershock (this repository, or a project `aftershock init` made)."""
    for folder in [start, *start.parents]:
        manifest = folder / "pyproject.toml"
        if manifest.is_file() and "aftershock" in manifest.read_text(errors="replace"):
            return folder
    return None


def shipped_shapes() -> Path:
    """The shapes aftershock ships: the installed package's clusters/, or its checkout's."""
    here = Path(__file__).resolve().parents[1]  # the aftershock package
    packaged = here / "clusters"
    return packaged if packaged.is_dir() else here.parent / "clusters"


def project_shapes(project: Path) -> Path:
    """The project's cluster shapes: its clusters/ (the project is pytest's rootdir, or the
    working directory of a command or a notebook)."""
    return project / "clusters"


def default_shape(project: Path) -> Shape:
    """The project's clusters/three-nodes.yaml; the same nodes built in where it has none."""
    path = project_shapes(project) / "three-nodes.yaml"
    if path.is_file():
        return load_shape(path)
    return Shape(name="three-nodes",
                 nodes=tuple(NodeSpec(f"node-{i}", devices=1) for i in (1, 2, 3)))
