"""Profiles (profiles/*.yaml): how an implementation is installed and started, and how the
words of the features map onto it. Validated: errors name file, line, field and what was
expected.

An implementation runs out of the cluster (``start``: a process with a kubeconfig, on any
provider) or in it (``install_in_cluster``: manifests or a helm chart plus the image they run,
loaded into the nodes — kind only); a profile may offer both."""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aftershock.errors import UserError
from aftershock.go.builds import Build, GoBuild, SourceBuild, source_tree, values
from aftershock.kube import labels
from aftershock.machine.schema import validate
from aftershock.machine.yamlsrc import Located, load, manifests
from aftershock.profile import charts
from aftershock.profile import files as profile_paths
from aftershock.profile.placeholders import PLACEHOLDER
from aftershock.profile.schema import (  # noqa: F401 (re-exported)
    CONCEPTS,
    SCHEMA,
    SEEN_IDENTITIES,
    known_concept,
)
from aftershock.timeline.resources import written_by

PROPERTY_ID = re.compile(r"^[A-Z]+[0-9]+$")  # the catalogue's ids (the scenario knows which)


@dataclass(frozen=True)
class Start:
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "."
    ready_log: str | None = None
    ready_http: str | None = None
    ready_lease: str | None = None
    ready_condition: dict[str, Any] | None = None
    ready_timeout: float = 30.0
    stop_grace: float = 5.0
    service_account: str = "implementation"
    ports: tuple[str, ...] = ()  # free ports it is given: {port_<name>}
    serving_certificate: bool = False  # {tls_dir} and {ca_bundle}
    files: dict[str, str] = field(default_factory=dict)  # name → template, into {files}
    manifests: tuple[str, ...] = ()  # applied once it is ready, removed at the end
    companions: tuple[Companion, ...] = ()  # more processes, started before it


@dataclass(frozen=True)
class Companion:
    """One more process of an implementation (KAI-scheduler's binder beside its scheduler)."""

    name: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Helm:
    chart: str
    repo: str | None = None
    version: str | None = None
    release: str | None = None
    values: tuple[str, ...] = ()
    settings: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtraImage:
    """One more image an in-cluster implementation runs: a Go program built here, alone."""

    image: str
    build: GoBuild
    program: str
    entrypoint: tuple[str, ...] = ()


@dataclass(frozen=True)
class InCluster:
    """An implementation installed into the cluster and run from its image."""

    image: str
    deployment: str | None = None  # what runs it: a Deployment, or a DaemonSet (a node agent)
    daemonset: str | None = None
    manifests: tuple[str, ...] = ()
    helm: Helm | None = None
    build_context: str | None = None
    dockerfile: str | None = None
    program: str | None = None  # the profile's built program, at this path of an image made here
    container: str | None = None
    service_account: str = "implementation"
    ready_timeout: float = 120.0
    images: tuple[ExtraImage, ...] = ()
    serving_certificate: str | None = None  # a TLS Secret made before its manifests
    node_logs: str | None = None  # where its workloads log, under each node's node-local data

    @property
    def workload(self) -> tuple[str, str]:
        """(kind, name) of what runs the implementation."""
        if self.daemonset:
            return "DaemonSet", self.daemonset
        assert self.deployment is not None
        return "Deployment", self.deployment


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
    build: Build | None = None
    more_builds: dict[str, Build] = field(default_factory=dict)  # {binary_<name>}
    rbac_from: tuple[str, ...] = ()
    gang_scheduling: bool = False  # the cluster it runs on needs kube-scheduler's gangs on
    # property id -> why it does not apply to this implementation (judged NOT APPLICABLE)
    not_applicable: dict[str, str] = field(default_factory=dict)
    # Where the files it names are looked up: its own folder, then those of the profiles it
    # extends (nearest first)
    dirs: tuple[Path, ...] = ()

    @property
    def in_cluster_only(self) -> bool:
        return self.in_cluster is not None and self.start is None

    def cluster_rules(self) -> tuple[dict[str, Any], ...]:
        """The profile's cluster-wide rules, and those of the RBAC manifests it names (an
        operator's own ClusterRole)."""
        from_files = []
        for manifest in self.rbac_from:
            path = self.resolve(manifest)
            if charts.is_chart(path):  # an operator's own chart, rendered here
                from_files += charts.rules(path)
                continue
            for doc in manifests(path):
                if doc.get("kind") in ("ClusterRole", "Role"):
                    from_files += doc.get("rules") or []
        return (*self.cluster_rbac, *from_files)

    def written_kinds(self) -> list[tuple[str, str]]:
        """(API group, plural) of every kind its RBAC lets the implementation write: what the
        recorder must record so that any oracle over what it does can be judged."""
        return written_by([*self.rbac, *self.cluster_rules()])

    def concept(self, name: str) -> dict[str, Any] | None:
        """A concept's mapping; ``concept.part`` is an optional part of one
        (``gang_scheduler.queue``)."""
        found: Any = self.concepts
        for key in name.split("."):
            found = found.get(key) if isinstance(found, dict) else None
        return found

    def pinned(self, kubernetes: str | None = None) -> str:
        """What of the implementation ran, for a report: its module version or commit; for a
        program its profile starts from files, each file's name and the start of its SHA-256;
        for a controller built into Kubernetes, that Kubernetes."""
        if self.build is not None:
            return self.build.pinned
        if self.in_cluster is not None and self.in_cluster.build_context:
            return f"an image built here from {self.in_cluster.build_context}"
        if self.start is None and self.in_cluster is None:
            return f"built into Kubernetes {kubernetes or ''}".rstrip()
        return ", ".join(_digest(path) for path in self._started_from()) or \
            "started by its profile (nothing built to pin)"

    def _started_from(self) -> list[Path]:
        """The files or packages its start command names (a script, `-m package`)."""
        if self.start is None:
            return []
        base, command = self.resolve(self.start.cwd), self.start.command
        named = [command[i + 1].replace(".", "/") for i, word in enumerate(command[:-1])
                 if word == "-m"] + [word for word in command if "{" not in word]
        found = []
        for name in named:
            for candidate in (base / name, base / f"{name}.py"):
                if candidate.exists() and candidate not in found and candidate != base:
                    found.append(candidate)
                    break
        return found

    def resolve(self, relative: str) -> Path:
        """Paths in a profile are relative to the profile file (wherever it is kept), else to
        a profile it extends; {module_dir} is the built implementation's module (its CRDs, its
        RBAC); {source_dir} the whole source tree it was built from; {aftershock} the profiles
        aftershock ships, {project} the project the profile is in."""
        folders = self.folders
        values = profile_paths.path_values(folders[0])
        if "{module_dir}" in relative or "{source_dir" in relative:  # fetched when named
            values.update(self.module_values())
        return profile_paths.find(folders, profile_paths.named(relative, values, folders))

    def module_values(self) -> dict[str, str]:
        """{module_dir} and {source_dir} of its build; {source_dir_<name>} of a program it
        builds from another tree."""
        found = values(self.build)
        for name, build in self.more_builds.items():
            if not isinstance(build, SourceBuild):  # a package of the build's own module
                continue
            if build.git != getattr(self.build, "git", None) or \
                    build.commit != getattr(self.build, "commit", None):
                found[f"source_dir_{name}"] = values(build)["source_dir"]
        return found

    def fetch(self) -> Profile:
        """Its source trees, fetched now where they are not yet (``SourceUnreachable`` when
        one cannot be), and the files it names in them checked, at file:line: a run fetches
        what it needs, and loading it (collection, ``--collect-only``) fetches nothing."""
        for build in (self.build, *self.more_builds.values()):
            if isinstance(build, SourceBuild):
                source_tree(build)
        doc, dirs = document(self.path)
        profile_paths.check(doc, dirs)
        return self

    @property
    def workdir(self) -> Path:
        """Where the implementation's commands (its start, a data probe) run."""
        return self.resolve(self.start.cwd) if self.start else self.folders[0]

    @property
    def folders(self) -> tuple[Path, ...]:
        """Where the files it names are looked up (a profile made in code: its own folder)."""
        return self.dirs or (self.path.parent,)


def node_agents_apart(profiles: list[Profile]) -> None:
    """Two profiles of one DRA driver name on real kubelets share each node's state of it (its
    plugin directory, its checkpoint): the second would meet the first's, which another
    version may not read (dra-example-driver v0.2.1 refuses v0.4.0's checkpoint as corrupted),
    and be judged for it. Refused before anything starts."""
    seen: dict[str, Profile] = {}
    for profile in profiles:
        driver = (profile.concept("device_driver") or {}).get("driver")
        if not driver:
            continue
        first = seen.setdefault(driver, profile)
        if first.name != profile.name:
            raise UserError(
                f"profiles {first.name} ({first.path}) and {profile.name} ({profile.path}) both "
                f"run the DRA driver {driver}: on one cluster of real nodes the second meets "
                f"the first's state on every node (/var/lib/kubelet/plugins/{driver}); run "
                "them apart, one aftershock run each")


EXTENDS_DEPTH = 8  # a chain of profiles each stating what differs from the next


def load_profile(path: str | Path) -> Profile:
    if not Path(path).is_file():
        raise UserError("no such profile", path=str(path))
    doc, dirs = document(Path(path).resolve())
    validate(doc, SCHEMA)
    profile_paths.check(doc, dirs)
    raw = doc.data
    concepts = raw.get("concepts") or {}  # an operator with no concept of ours names none
    _check_node_selector(doc, concepts.get("node_records"))
    _check_gang(doc, concepts.get("gang"))
    _check_not_applicable(doc, raw.get("not_applicable") or {})
    _check_driver(doc, concepts.get("device_driver"))
    _check_start_placeholders(doc, raw.get("start"))
    _check_seen(doc, concepts.get("device_driver"))
    in_cluster = _in_cluster(doc, raw.get("install_in_cluster"), raw.get("build"))
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
            ready_lease=ready.get("lease"), ready_condition=ready.get("condition"),
            ready_timeout=float(ready.get("timeout_seconds", 30)),
            stop_grace=float(start.get("stop_grace_seconds", 5)),
            service_account=start.get("service_account", "implementation"),
            ports=tuple(start.get("ports") or ()),
            serving_certificate=bool(start.get("serving_certificate", False)),
            files=dict(start.get("files") or {}),
            manifests=tuple(start.get("manifests") or ()),
            companions=tuple(Companion(c["name"], tuple(c["command"]),
                                       {k: str(v) for k, v in (c.get("env") or {}).items()})
                             for c in start.get("companions") or ()),
        ) if start else None,
        rbac=tuple(raw.get("rbac") or ()),
        cluster_rbac=tuple(raw.get("cluster_rbac") or ()),
        concepts=dict(concepts),
        watch_delay_target=raw.get("watch_delay_target"),
        actor=raw.get("actor"),
        in_cluster=in_cluster,
        build=profile_paths.build_of(doc, raw.get("build"), dirs),
        more_builds=profile_paths.more_builds(doc, raw.get("build")),
        rbac_from=tuple(raw.get("rbac_from") or ()),
        gang_scheduling=bool((raw.get("cluster") or {}).get("gangScheduling", False)),
        not_applicable=dict(raw.get("not_applicable") or {}),
        dirs=dirs,
    )


def _check_not_applicable(doc: Located, declared: dict[str, str]) -> None:
    for id, why in declared.items():
        if not PROPERTY_ID.match(str(id)):
            raise doc.error(f"field 'not_applicable.{id}': a property id like B4 was expected",
                            "not_applicable", id)
        if not why.strip():
            raise doc.error(f"field 'not_applicable.{id}': say why it does not apply (a KEP's "
                            "or the implementation's documented word)", "not_applicable", id)


def _check_gang(doc: Located, gang: dict[str, Any] | None) -> None:
    if gang is None:
        return
    if ("group_status_path" in gang) == ("group_status" in gang):
        raise doc.error("field 'concepts.gang' needs either 'group_status_path' (a list of "
                        "replica statuses on the gang) or 'group_status' (an object per "
                        "replica), exactly one", "concepts", "gang")
    if gang.get("termination_delay_format", "seconds") not in ("seconds", "duration"):
        raise doc.error("field 'concepts.gang.termination_delay_format' must be seconds or "
                        "duration", "concepts", "gang", "termination_delay_format")


def _check_start_placeholders(doc: Located, start: dict[str, Any] | None) -> None:
    """A start's command, env and companions may name {files}, {tls_dir}, {ca_bundle} and
    {port_<name>} only when the start gives them (files:, serving_certificate:, ports:): left
    unfilled, "{files}/tmp" is a folder of that name made beside the profile, for good."""
    if not start:
        return
    given = {f"port_{name}" for name in start.get("ports") or ()}
    given |= {"files"} if start.get("files") else set()
    given |= {"tls_dir", "ca_bundle"} if start.get("serving_certificate") else set()
    where = [(("start", "command"), start.get("command") or []),
             (("start", "env"), list((start.get("env") or {}).values()))]
    where += [(("start", "companions", index), [*c.get("command", []),
                                                 *(c.get("env") or {}).values()])
              for index, c in enumerate(start.get("companions") or [])]
    for keys, texts in where:
        for text in texts:
            for name in PLACEHOLDER.findall(str(text)):
                if name in given or not (name.startswith("port_") or name in GIVEN_BY):
                    continue
                need = GIVEN_BY.get(name, f"ports: [{name[len('port_'):]}]")
                raise doc.error(f"field '{'.'.join(map(str, keys))}' names {{{name}}}, which a "
                                f"start gives only with {need}", *keys)


# What a start must say for the placeholder it names to be filled.
GIVEN_BY = {"files": "files:", "tls_dir": "serving_certificate: true",
            "ca_bundle": "serving_certificate: true"}


def _check_driver(doc: Located, driver: dict[str, Any] | None) -> None:
    if driver is not None and ("prepare_log" in driver) == ("node_state" in driver):
        raise doc.error("field 'concepts.device_driver' needs either 'prepare_log' (the "
                        "driver's own log) or 'node_state' (what the nodes show), exactly one",
                        "concepts", "device_driver")
    count = (driver or {}).get("devices_per_node")
    if count is not None and (isinstance(count, bool) or count < 1):
        raise doc.error("field 'concepts.device_driver.devices_per_node' must be a whole "
                        "number of at least 1", "concepts", "device_driver", "devices_per_node")


def _check_seen(doc: Located, driver: dict[str, Any] | None) -> None:
    """Each of seen_in_container's patterns: env or dev, a regular expression, and one thing it
    shows, a template of what the expression has."""
    where = ("concepts", "device_driver", "seen_in_container", "patterns")
    for index, pattern in enumerate(((driver or {}).get("seen_in_container") or {}).get(
            "patterns") or []):
        field = f"field 'concepts.device_driver.seen_in_container.patterns[{index}]'"
        sources = [k for k in ("env", "dev") if k in pattern]
        shown = [k for k in SEEN_IDENTITIES if k in pattern]
        if len(sources) != 1 or len(shown) != 1:
            raise doc.error(f"{field} needs env or dev (exactly one), and device, claim or "
                            "claim_uid (exactly one)", *where, index)
        try:
            groups = re.compile(pattern[sources[0]]).groups
            pattern[shown[0]].format(*[""] * (groups + 1), value="")
        except re.error as exc:
            raise doc.error(f"{field}.{sources[0]}: not a regular expression ({exc})",
                            *where, index, sources[0]) from None
        except (IndexError, KeyError, ValueError):
            raise doc.error(f"{field}.{shown[0]}: a template of {{value}} and the expression's "
                            f"{groups} groups ({{1}}..) was expected", *where, index,
                            shown[0]) from None


def _check_node_selector(doc: Located, records: dict[str, Any] | None) -> None:
    try:
        labels.parse((records or {}).get("node_selector", ""))
    except ValueError as exc:
        raise doc.error(f"field 'concepts.node_records.node_selector': {exc}", "concepts",
                        "node_records", "node_selector") from None


def document(path: Path, chain: tuple[Path, ...] = ()) -> tuple[Located, tuple[Path, ...]]:
    """A profile's document with what it extends merged under it (``extends: <profile>``: its
    mappings merged key by key, a list or a value replaced whole, null removing a key), and the
    folders its files are looked up in, its own first."""
    doc = load(path)
    said = doc.data.get("extends") if isinstance(doc.data, dict) else None
    if said is None:
        return doc, (path.parent,)
    if not isinstance(said, str):
        raise doc.error("field 'extends': expected the path of a profile (relative to this "
                        "one, or {aftershock}/..., {project}/...)", "extends")
    if "name" not in doc.data:
        raise doc.error("a profile that extends another states its own name", "extends")
    values = profile_paths.path_values(path.parent)
    try:
        base_path = profile_paths.find((path.parent,),
                                       profile_paths.named(said, values, (path.parent,)))
    except UserError as exc:
        raise doc.error(f"field 'extends': {exc}", "extends") from None
    if not base_path.is_file():
        raise doc.error(f"field 'extends' names {said}, which is not a file (relative to this "
                        "profile, or {aftershock}/... for the profiles aftershock ships: "
                        f"{profile_paths.shipped_profiles()})", "extends")
    if base_path in (*chain, path):
        circle = " → ".join(p.name for p in (*chain, path, base_path))
        raise doc.error(f"field 'extends': the profiles extend each other in a circle "
                        f"({circle})", "extends")
    if len(chain) >= EXTENDS_DEPTH:
        raise doc.error(f"field 'extends': more than {EXTENDS_DEPTH} profiles deep", "extends")
    base, dirs = document(base_path, (*chain, path))
    validate(base, SCHEMA)  # its own mistakes are named in its own file
    merged = _merged(_anchored(base.data, base_path.parent),
                     {k: v for k, v in doc.data.items() if k != "extends"})
    lines = {key: doc.line("extends") for key in base.lines} | doc.lines
    return Located(doc.path, merged, lines), tuple(dict.fromkeys((path.parent, *dirs)))


# The folders a profile names (a start's working directory, a Go module, an image's build
# context, a chart): one a base states is its own folder's, made absolute before merging (a
# folder is found from every profile's folder, so looking it up would take the wrong one)
FOLDERS = (("start", "cwd"), ("build", "path"), ("install_in_cluster", "build", "context"),
           ("install_in_cluster", "build", "dockerfile"), ("install_in_cluster", "helm", "chart"))


def _anchored(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for keys in FOLDERS:
        holder = data
        for key in keys[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        said = holder.get(keys[-1]) if isinstance(holder, dict) else None
        if isinstance(said, str) and not said.startswith(("{", "/")) and \
                (folder / said).exists():
            holder[keys[-1]] = str((folder / said).resolve())
    return data


def _merged(base: Any, over: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(over, dict):
        return over
    merged = dict(base)
    for key, value in over.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merged(base.get(key), value)
    return merged


def _in_cluster(doc: Located, raw: dict[str, Any] | None,
                built: dict[str, Any] | None) -> InCluster | None:
    if raw is None:
        return None
    if ("manifests" in raw) == ("helm" in raw):
        raise doc.error("field 'install_in_cluster' needs either 'manifests' or 'helm' "
                        "(exactly one)", "install_in_cluster")
    if ("deployment" in raw) == ("daemonset" in raw):
        raise doc.error("field 'install_in_cluster' needs either 'deployment' or 'daemonset' "
                        "(exactly one: what runs the implementation)", "install_in_cluster")
    helm = raw.get("helm")
    build = raw.get("build") or {}
    if "build" in raw and ("context" in build) == ("program" in build):
        raise doc.error("field 'install_in_cluster.build' needs either 'context' (a directory "
                        "with a Dockerfile) or 'program' (where the profile's built program "
                        "goes in an image made here), exactly one", "install_in_cluster",
                        "build")
    if "program" in build and built is None:
        raise doc.error("field 'install_in_cluster.build.program' puts the profile's built "
                        "program into an image, but the profile has no 'build'",
                        "install_in_cluster", "build", "program")
    return InCluster(
        image=raw["image"],
        deployment=raw.get("deployment"),
        daemonset=raw.get("daemonset"),
        program=build.get("program"),
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
        images=tuple(_extra_image(doc, index, item)
                     for index, item in enumerate(raw.get("images") or ())),
        serving_certificate=raw.get("serving_certificate"),
        node_logs=raw.get("node_logs"),
    )


def _extra_image(doc: Located, index: int, raw: dict[str, Any]) -> ExtraImage:
    try:
        build = GoBuild.parse(raw["go"])
    except ValueError as exc:
        raise doc.error(f"field 'install_in_cluster.images[{index}].go': {exc}",
                        "install_in_cluster", "images", index, "go") from None
    if not raw["program"].startswith("/"):
        raise doc.error(f"field 'install_in_cluster.images[{index}].program' must be an "
                        f"absolute path in the image, not '{raw['program']}'",
                        "install_in_cluster", "images", index, "program")
    return ExtraImage(raw["image"], build, raw["program"], tuple(raw.get("entrypoint") or ()))


def _digest(path: Path) -> str:
    """A file's or a package's name and the start of the SHA-256 of its Python files."""
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    found = hashlib.sha256()
    for file in files:
        found.update(str(file.relative_to(path.parent)).encode() + b"\0" + file.read_bytes())
    return f"{path.name}@{found.hexdigest()[:12]}"
