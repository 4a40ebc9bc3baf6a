"""The paths a profile names, checked when it loads: each is readable (``spec.replicas``,
``spec.groups[0].replicas``, ``spec.groups[name=w].replicas``), each manifest it installs or
reads its RBAC from exists, and where it installs the CRD of a concept's resource, every path
of that concept is one the CRD's schema can address. A wrong one is a UserError naming
file:line."""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from aftershock import paths, yamlsrc
from aftershock.sut.gobuild import Build, GoBuild, LocalBuild, SourceBuild, values
from aftershock.sut.placeholders import fill
from aftershock.yamlsrc import Located

NOT_PATHS = {"data_probe", "manifest", "prepare_log"}  # fields ending like paths, not paths


def check(doc: Located, directory: Path) -> None:
    raw = doc.data
    values = _module_values(doc)
    manifests = [fill(m, values) for m in (raw.get("install") or {}).get("manifests") or []]
    for position, manifest in enumerate(manifests):
        if not (directory / manifest).is_file():
            raise doc.error(f"field 'install.manifests' names {manifest}, which is not a file "
                            f"(paths are relative to the profile file)", "install",
                            "manifests", position)
    for position, manifest in enumerate(raw.get("rbac_from") or []):
        if not (directory / fill(manifest, values)).is_file():
            raise doc.error(f"field 'rbac_from' names {manifest}, which is not a file "
                            f"(paths are relative to the profile file)", "rbac_from", position)
    start = raw.get("start") or {}
    for position, manifest in enumerate(start.get("manifests") or []):
        if not (directory / fill(manifest, values)).is_file():
            raise doc.error(f"field 'start.manifests' names {manifest}, which is not a file "
                            f"(paths are relative to the profile file)", "start", "manifests",
                            position)
    for name, template in (start.get("files") or {}).items():
        if "/" in name or name in (".", ".."):
            raise doc.error(f"field 'start.files': '{name}' is not a plain file name", "start",
                            "files", name)
        if not (directory / fill(template, values)).is_file():
            raise doc.error(f"field 'start.files.{name}' names {template}, which is not a "
                            f"file (paths are relative to the profile file)", "start", "files",
                            name)
    schemas = crd_schemas([directory / m for m in manifests])
    for concept, mapping in (raw.get("concepts") or {}).items():
        resource = mapping.get("resource") or {}
        versions = schemas.get((resource.get("group"), resource.get("plural")), {})
        schema = versions.get(resource.get("version"))
        for field, value in mapping.items():
            if not field.endswith("_path") or field in NOT_PATHS or not isinstance(value, str):
                continue
            where = ("concepts", concept, field)
            try:
                paths.parse(value)
            except paths.PathError as exc:
                raise doc.error(f"field 'concepts.{concept}.{field}': {exc}", *where) from None
            problem = paths.schema_problem(schema, value) if schema is not None else None
            if problem:
                crd = f"{resource.get('plural')}.{resource.get('group')}"
                raise doc.error(f"field 'concepts.{concept}.{field}' ({value}): the CRD "
                                f"{crd} ({resource.get('version')}) cannot hold it: {problem}",
                                *where)


def _module_values(doc: Located) -> dict[str, str]:
    """{module_dir} (and {source_dir}) of a profile built from Go: its module in the module
    cache, or its source tree fetched at its commit (only when a path the loader checks
    names them)."""
    build = build_of(doc, doc.data.get("build"))
    checked = [*((doc.data.get("install") or {}).get("manifests") or []),
               *(doc.data.get("rbac_from") or []),
               *((doc.data.get("start") or {}).get("manifests") or []),
               *((doc.data.get("start") or {}).get("files") or {}).values()]
    found: dict[str, str] = {}
    if any("{module_dir}" in str(p) or "{source_dir}" in str(p) for p in checked):
        found.update(values(build))
    for name, other in more_builds(doc, doc.data.get("build")).items():
        if any(f"{{source_dir_{name}}}" in str(p) for p in checked):
            found[f"source_dir_{name}"] = values(other)["source_dir"]
    return found


def build_of(doc: Located, raw: dict[str, Any] | None) -> Build | None:
    """The profile's build: a published module (go) or a source tree (git), exactly one."""
    if raw is None:
        return None
    if sum(key in raw for key in ("go", "git", "path")) != 1:
        raise doc.error("field 'build' needs one of 'go' (a published module), 'git' (a "
                        "source tree at a commit) or 'path' (a Go module of the project, "
                        "relative to the profile)", "build")
    if "path" in raw:
        return _local_build(doc, raw)
    if "git" in raw and "own_module" in raw:
        raise doc.error("field 'build.own_module' goes with 'go': a source tree is always built "
                        "in its own module", "build", "own_module")
    if "go" in raw:
        extra = sorted(set(raw) & {"commit", "dir", "package"})
        if extra:
            raise doc.error(f"field 'build.{extra[0]}' goes with 'git', not 'go'", "build",
                            extra[0])
        try:
            return GoBuild.parse(raw["go"], raw.get("binary"), bool(raw.get("own_module")))
        except ValueError as exc:
            raise doc.error(f"field 'build.go': {exc}", "build", "go") from None
    if "commit" not in raw:
        raise doc.error("field 'build.commit' is required with 'git' (the full commit id to "
                        "build)", "build")
    try:
        return SourceBuild.parse(raw)
    except ValueError as exc:
        field, why = exc.args
        raise doc.error(f"field 'build.{field}': {why}", "build", field) from None


def _local_build(doc: Located, raw: dict[str, Any]) -> LocalBuild:
    extra = sorted(set(raw) - {"path", "package", "binary"})
    if extra:
        raise doc.error(f"field 'build.{extra[0]}' goes with 'go' or 'git', not 'path'",
                        "build", extra[0])
    folder = (Path(doc.path).parent / str(raw["path"])).resolve()
    if not (folder / "go.mod").is_file():
        raise doc.error(f"field 'build.path': {folder} holds no go.mod (a Go module's folder, "
                        "relative to the profile)", "build", "path")
    package = str(raw.get("package", "."))
    name = raw.get("binary") or posixpath.basename(posixpath.normpath(
        f"{folder}/{package}"))
    return LocalBuild(folder, package, str(name))


def more_builds(doc: Located, raw: dict[str, Any] | None) -> dict[str, Build]:
    """The build's other programs of the same source tree, by name."""
    more = (raw or {}).get("more") or {}
    if not more:
        return {}
    if "git" not in (raw or {}):
        raise doc.error("field 'build.more' goes with 'git': more programs of one source tree",
                        "build", "more")
    main = SourceBuild.parse(raw)
    found = {}
    for name, what in more.items():
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise doc.error(f"field 'build.more': '{name}' is not a name for a placeholder "
                            "(lower case letters, digits and _)", "build", "more")
        if isinstance(what, str):
            found[name] = replace(main, package=what, binary=name)
            continue
        if not isinstance(what, dict) or "git" not in what or "commit" not in what:
            raise doc.error(f"field 'build.more.{name}' must be a package of the same tree or "
                            "a map with git and commit (and dir, package)", "build", "more",
                            name)
        try:
            found[name] = SourceBuild.parse({**what, "binary": name})
        except ValueError as exc:
            field, why = exc.args
            raise doc.error(f"field 'build.more.{name}.{field}': {why}", "build", "more",
                            name) from None
    return found


def crd_schemas(files: list[Path]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(group, plural) → version → openAPIV3Schema, of every CRD in these manifests."""
    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for path in files:
        for doc in yamlsrc.manifests(path):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") or {}
            key = (spec.get("group"), (spec.get("names") or {}).get("plural"))
            for version in spec.get("versions") or []:
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                if schema:
                    found.setdefault(key, {})[version.get("name")] = schema
    return found
