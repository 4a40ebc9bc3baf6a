"""The paths a profile names, checked when it loads: each is readable (``spec.replicas``,
``spec.groups[0].replicas``, ``spec.groups[name=w].replicas``), each manifest it installs or
reads its RBAC from exists, and where it installs the CRD of a concept's resource, every path
of that concept is one the CRD's schema can address. A wrong one is a UserError naming
file:line.

A file a profile names is relative to its own folder, else to the folder of each profile it
extends (nearest first): a profile for another commit reaches its base's templates. Two
placeholders reach further: ``{aftershock}``, the profiles aftershock ships (its checkout's
profiles/, or the installed package's), and ``{project}``, the project the profile is in (the
nearest folder up whose pyproject.toml names aftershock)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from aftershock.errors import UserError
from aftershock.go.builds import (
    Build,
    GoBuild,
    LocalBuild,
    SourceBuild,
    checked_toolchain,
    is_fetched,
    values,
)
from aftershock.kube import paths
from aftershock.machine import yamlsrc
from aftershock.machine.shape import find_root
from aftershock.machine.yamlsrc import Located
from aftershock.profile.placeholders import fill

NOT_PATHS = {"data_probe", "manifest", "prepare_log"}  # fields ending like paths, not paths


SHIPPED = Path(__file__).resolve().parents[1] / "profiles"  # in an installed wheel
CHECKOUT = Path(__file__).resolve().parents[2] / "profiles"  # in a checkout of aftershock
RELATIVE = "paths are relative to the profile file, or to a profile it extends"
UNFETCHED = re.compile(r"\{(?:module_dir|source_dir(?:_[a-z0-9_]+)?)\}")


def shipped_profiles() -> Path:
    """{aftershock}: the profiles aftershock ships."""
    return SHIPPED if SHIPPED.is_dir() else CHECKOUT


def path_values(directory: Path) -> dict[str, str]:
    """{aftershock} and, where the profile is in a project, {project}."""
    found = {"aftershock": str(shipped_profiles())}
    project = find_root(directory)
    if project is not None:
        found["project"] = str(project)
    return found


def find(dirs: tuple[Path, ...], named: str) -> Path:
    """A file a profile names (placeholders filled): absolute, or the first of its folders
    that has it (else as named from the first)."""
    for directory in dirs:
        candidate = (directory / named).resolve()
        if candidate.exists():
            return candidate
    return (dirs[0] / named).resolve()


def named(text: str, values: dict[str, str], dirs: tuple[Path, ...]) -> str:
    """A path with its placeholders filled; {project} outside any project is an error."""
    if "{project}" in text and "project" not in values:
        raise UserError(f"'{text}': {{project}} is the project the profile is in, and "
                        f"{dirs[0]} is in none (no pyproject.toml naming aftershock above it)")
    return fill(text, values)


def check(doc: Located, dirs: tuple[Path, ...]) -> None:
    raw = doc.data
    values = {**path_values(dirs[0]), **_module_values(doc, dirs)}

    def present(text: str, where: str, *keys: Any, chart: bool = False) -> Path | None:
        try:
            filled = named(text, values, dirs)
        except UserError as exc:
            raise doc.error(f"field '{where}': {exc}", *keys) from None
        if UNFETCHED.search(filled):
            return None  # in a source tree not fetched yet: checked once it is
        found = find(dirs, filled)
        if chart and found.is_dir() and (found / "Chart.yaml").is_file():
            return found  # a Helm chart's folder: its ClusterRoles, rendered
        if not found.is_file():
            raise doc.error(f"field '{where}' names {text}, which is not a file ({RELATIVE})",
                            *keys)
        return found

    manifests = [found for position, m in
                 enumerate((raw.get("install") or {}).get("manifests") or [])
                 if (found := present(m, "install.manifests", "install", "manifests", position))]
    for position, manifest in enumerate(raw.get("rbac_from") or []):
        present(manifest, "rbac_from", "rbac_from", position, chart=True)
    start = raw.get("start") or {}
    for position, manifest in enumerate(start.get("manifests") or []):
        present(manifest, "start.manifests", "start", "manifests", position)
    for name, template in (start.get("files") or {}).items():
        if "/" in name or name in (".", ".."):
            raise doc.error(f"field 'start.files': '{name}' is not a plain file name", "start",
                            "files", name)
        present(template, f"start.files.{name}", "start", "files", name)
    schemas = crd_schemas(manifests)
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


def _module_values(doc: Located, dirs: tuple[Path, ...]) -> dict[str, str]:
    """{module_dir} (and {source_dir}) of a profile built from Go: its module in the module
    cache, or its source tree at its commit where it was fetched already (only when a path the
    loader checks names them). A tree not fetched yet is fetched when a run needs it
    (``Profile.fetch``), and the paths naming it are checked then."""
    build = build_of(doc, doc.data.get("build"), dirs)
    checked = [*((doc.data.get("install") or {}).get("manifests") or []),
               *(doc.data.get("rbac_from") or []),
               *((doc.data.get("start") or {}).get("manifests") or []),
               *((doc.data.get("start") or {}).get("files") or {}).values()]
    found: dict[str, str] = {}
    if any("{module_dir}" in str(p) or "{source_dir}" in str(p) for p in checked):
        found.update(fetched_values(build))
    for name, other in more_builds(doc, doc.data.get("build")).items():
        if any(f"{{source_dir_{name}}}" in str(p) for p in checked) and \
                fetched_values(other):
            found[f"source_dir_{name}"] = fetched_values(other)["source_dir"]
    return found


def fetched_values(build: Build | None) -> dict[str, str]:
    """The placeholders of a build whose files are here: a source tree only once fetched."""
    if isinstance(build, SourceBuild) and not is_fetched(build):
        return {}
    return values(build)


def build_of(doc: Located, raw: dict[str, Any] | None,
             dirs: tuple[Path, ...] | None = None) -> Build | None:
    """The profile's build: a published module (go) or a source tree (git), exactly one."""
    if raw is None:
        return None
    if sum(key in raw for key in ("go", "git", "path")) != 1:
        raise doc.error("field 'build' needs one of 'go' (a published module), 'git' (a "
                        "source tree at a commit) or 'path' (a Go module of the project, "
                        "relative to the profile)", "build")
    if "path" in raw:
        return _local_build(doc, raw, dirs or (Path(doc.path).parent,))
    if "git" in raw and "own_module" in raw:
        raise doc.error("field 'build.own_module' goes with 'go': a source tree is always built "
                        "in its own module", "build", "own_module")
    if "go" in raw:
        extra = sorted(set(raw) & {"commit", "dir", "package"})
        if extra:
            raise doc.error(f"field 'build.{extra[0]}' goes with 'git', not 'go'", "build",
                            extra[0])
        try:
            return GoBuild.parse(raw["go"], raw.get("binary"), bool(raw.get("own_module")),
                                 _patches(doc, raw, dirs), _toolchain(doc, raw))
        except ValueError as exc:
            raise doc.error(f"field 'build.go': {exc}", "build", "go") from None
    if "commit" not in raw:
        raise doc.error("field 'build.commit' is required with 'git' (the full commit id to "
                        "build)", "build")
    try:
        return SourceBuild.parse(raw, _patches(doc, raw, dirs))
    except ValueError as exc:
        field, why = exc.args
        raise doc.error(f"field 'build.{field}': {why}", "build", field) from None


def _patches(doc: Located, raw: dict[str, Any],
             dirs: tuple[Path, ...] | None) -> tuple[Path, ...]:
    """The build's patch files, found as the profile's other files are."""
    dirs = dirs or (Path(doc.path).parent,)
    found = []
    for index, name in enumerate(raw.get("patches") or ()):
        try:
            patch = find(dirs, named(str(name), path_values(dirs[0]), dirs))
        except UserError as exc:
            raise doc.error(f"field 'build.patches[{index}]': {exc}", "build", "patches",
                            index) from None
        if not patch.is_file():
            raise doc.error(f"field 'build.patches[{index}]': no file {patch}", "build",
                            "patches", index)
        found.append(patch)
    return tuple(found)


def _local_build(doc: Located, raw: dict[str, Any], dirs: tuple[Path, ...]) -> LocalBuild:
    extra = sorted(set(raw) - {"path", "package", "binary", "toolchain"})
    if extra:
        raise doc.error(f"field 'build.{extra[0]}' goes with 'go' or 'git', not 'path'",
                        "build", extra[0])
    try:
        folder = find(dirs, named(str(raw["path"]), path_values(dirs[0]), dirs))
    except UserError as exc:
        raise doc.error(f"field 'build.path': {exc}", "build", "path") from None
    if not (folder / "go.mod").is_file():
        raise doc.error(f"field 'build.path': {folder} holds no go.mod (a Go module's folder, "
                        "relative to the profile)", "build", "path")
    package = str(raw.get("package", "."))
    name = raw.get("binary") or posixpath.basename(posixpath.normpath(
        f"{folder}/{package}"))
    return LocalBuild(folder, package, str(name), _toolchain(doc, raw))


def _toolchain(doc: Located, raw: dict[str, Any]) -> str:
    try:
        return checked_toolchain(str(raw.get("toolchain", "")))
    except ValueError as exc:
        raise doc.error(f"field 'build.toolchain': {exc}", "build", "toolchain") from None


def more_builds(doc: Located, raw: dict[str, Any] | None) -> dict[str, Build]:
    """The build's other programs of the same source tree, by name."""
    more = (raw or {}).get("more") or {}
    if not more:
        return {}
    if "go" in (raw or {}):
        return _more_of_module(doc, raw, more)
    if "git" not in (raw or {}):
        raise doc.error("field 'build.more' goes with 'git' or 'go': more programs of one "
                        "source tree or module", "build", "more")
    main = SourceBuild.parse(raw)
    found = {}
    for name, what in more.items():
        _placeholder_name(doc, name)
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


def _placeholder_name(doc: Located, name: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise doc.error(f"field 'build.more': '{name}' is not a name for a placeholder "
                        "(lower case letters, digits and _)", "build", "more")


def _more_of_module(doc: Located, raw: dict[str, Any], more: dict[str, Any]
                    ) -> dict[str, Build]:
    """More programs of a published module: each a package of it, at the build's version and
    built as the build is (in the module's own directory when it is)."""
    main = GoBuild.parse(raw["go"], raw.get("binary"), bool(raw.get("own_module")),
                         toolchain=_toolchain(doc, raw))
    found: dict[str, Build] = {}
    for name, what in more.items():
        _placeholder_name(doc, name)
        if not isinstance(what, str) or "@" in what or "/" not in what:
            raise doc.error(f"field 'build.more.{name}' must be a package of the same module, "
                            "its import path without a version (the build's is its)", "build",
                            "more", name)
        found[name] = replace(main, package=what, binary=name)
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
