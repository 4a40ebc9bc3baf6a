"""The kinds a cluster serves, by discovery, and how a step names one the way kubectl does:
``raycluster/web``, ``rayclusters/web``, ``po/web`` (a short name), or with its group,
``resourceclaim.resource.k8s.io/c``. A word no served kind answers to is refused with the
closest kinds that are served."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from aftershock.kube import paths


@dataclass(frozen=True)
class Kind:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    verbs: frozenset[str] = field(default_factory=frozenset)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def words(self) -> set[str]:
        """Every word kubectl takes for it, lower case."""
        return {self.plural, self.singular or self.kind.lower(), self.kind.lower(),
                *self.short_names}

    @property
    def shown(self) -> str:
        """As kubectl names it in ``kubectl get``: the lower-case kind, with its group."""
        return f"{self.kind.lower()}.{self.group}" if self.group else self.kind.lower()


class UnknownKind(LookupError):
    pass


class Catalog:
    """Every kind the cluster serves: at its group's preferred version, or, for a kind that
    version lacks (scheduling.k8s.io's Workload beside v1's PriorityClass), at the first other
    version the group lists that serves it, as kubectl api-resources shows it."""

    def __init__(self, kinds: Iterable[Kind], api: Any = None):
        self.kinds = list(kinds)
        self.api = api  # for the schemas the cluster publishes
        self._documents: dict[tuple[str, str], dict[str, Any]] = {}
        # Kinds an implementation will install (its CRDs), not served yet, with their schemas
        self.pending: dict[tuple[str, str], dict[str, Any]] = {}

    def add_crds(self, documents: Iterable[Any]) -> None:
        """The CustomResourceDefinitions among ``documents`` (an implementation's manifests,
        installed when it starts): their kinds can be named before they are served."""
        served = {(k.group, k.plural) for k in self.kinds}
        for doc in documents:
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") or {}
            names = spec.get("names") or {}
            key = (spec.get("group", ""), names.get("plural", ""))
            if key in served or not all(key):
                continue
            versions = spec.get("versions") or []
            chosen = next((v for v in versions if v.get("storage")), versions[0] if versions
                          else {})
            self.kinds.append(Kind(key[0], chosen.get("name", ""), key[1], names.get("kind", ""),
                                   spec.get("scope") == "Namespaced",
                                   names.get("singular") or "",
                                   tuple(names.get("shortNames") or ())))
            self.pending[key] = (chosen.get("schema") or {}).get("openAPIV3Schema") or {}
            served.add(key)

    @classmethod
    def from_api(cls, api: Any) -> Catalog:
        """By discovery, through an ApiClient-like ``api.get(path) -> dict``."""
        found = [_kind("", "v1", item) for item in api.get("/api/v1").get("resources") or ()]
        for group in api.get("/apis").get("groups") or ():
            found += _group_kinds(api, group)
        return cls((kind for kind in found if "/" not in kind.plural), api)  # no subresources

    def resolve(self, word: str) -> Kind:
        """The kind a step's word names: a plural, singular, kind or short name, optionally
        with its group after a dot (``resourceclaims.resource.k8s.io``). Where groups share
        the word, the core group wins (as kubectl's ``events``), else the word is ambiguous."""
        name, _, group = word.lower().partition(".")
        matching = [k for k in self.kinds if name in k.words and (not group or k.group == group)]
        if not matching:
            raise UnknownKind(self.problem(word))
        core = [k for k in matching if k.group == ""]
        if core:
            return core[0]
        groups = sorted({k.group for k in matching})
        if len(groups) > 1:
            raise UnknownKind(f"'{word}' names a kind in {len(groups)} API groups ("
                              + ", ".join(groups) + f"): say which, as in {name}.{groups[0]}")
        return matching[0]

    def of_manifest(self, api_version: str, kind: str) -> Kind:
        """The kind a manifest's apiVersion and kind name (by its group: the recorder lists
        it at the version the cluster prefers; the manifest is sent at its own)."""
        group = api_version.rpartition("/")[0]
        for known in self.kinds:
            if known.kind == kind and known.group == group:
                return known
        served = sorted({k.api_version for k in self.kinds if k.kind == kind})
        if served:
            raise UnknownKind(f"{kind} is served as {', '.join(served)}, not in the group of "
                              f"{api_version}")
        raise UnknownKind(self.problem(kind))

    def field_problem(self, kind: Kind, path: str | list[paths.Step]) -> str | None:
        """Why ``path`` is no field of ``kind`` by the schema the cluster publishes for it
        (OpenAPI v3), or None; None too where it publishes none (nothing to check against)."""
        found = self._published(kind)
        return paths.schema_problem(found[0], path, found[1]) if found else None

    def field_type(self, kind: Kind, path: str) -> str | None:
        """The type the published schema gives the field at ``path`` (``integer``,
        ``string``, ...), or None where it says none or publishes no schema."""
        found = self._published(kind)
        return paths.schema_type(found[0], path, found[1]) if found else None

    def unordered_lists(self, kind: Kind) -> list[str]:
        """The lists of ``kind`` whose order its published schema says means nothing (a
        list-map or a set); none where it publishes no schema."""
        found = self._published(kind)
        return paths.unordered_lists(found[0], found[1]) if found else []

    def _published(self, kind: Kind) -> tuple[dict[str, Any], Any] | None:
        """The schema of ``kind`` and how to follow its references: its CRD's, for a kind
        not served yet, else the cluster's OpenAPI v3; None where there is none."""
        if (kind.group, kind.plural) in self.pending:
            schema = self.pending[(kind.group, kind.plural)]
            return (schema, None) if schema else None
        found = self._schema(kind)
        if found is None:
            return None
        schema, schemas = found
        return schema, lambda node: _resolved(node, schemas)

    def _schema(self, kind: Kind) -> tuple[dict[str, Any], dict[str, Any]] | None:
        key = (kind.group, kind.version)
        if key not in self._documents:
            where = f"/openapi/v3/apis/{kind.group}/{kind.version}" if kind.group else \
                "/openapi/v3/api/v1"
            try:
                self._documents[key] = self.api.get(where)
            except Exception:  # none published (or not readable): nothing to check against
                self._documents[key] = {}
        schemas = (self._documents[key].get("components") or {}).get("schemas") or {}
        for schema in schemas.values():
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                if (gvk.get("group", ""), gvk.get("version"), gvk.get("kind")) == \
                        (kind.group, kind.version, kind.kind):
                    return schema, schemas
        return None

    def problem(self, word: str) -> str:
        words = sorted({w for k in self.kinds for w in (k.kind.lower(), k.plural)})
        close = difflib.get_close_matches(word.lower().partition(".")[0], words, n=3,
                                          cutoff=0.6)
        hint = ("; closest served: " + ", ".join(close)) if close else ""
        return f"no kind '{word}' is served by this cluster{hint}"


def unordered_lists_of(catalog: Catalog, resources: Iterable[str]) -> dict[str, list[str]]:
    """For each of ``resources`` (plurals) the lists whose order its schema says means
    nothing; a resource the cluster does not serve, or whose lists are all ordered, is left
    out."""
    found = {}
    for resource in resources:
        try:
            lists = catalog.unordered_lists(catalog.resolve(resource))
        except UnknownKind:
            continue
        if lists:
            found[resource] = lists
    return found


def _resolved(node: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI v3 node with its reference followed: ``$ref``, or one ``allOf`` of it (how
    Kubernetes publishes a field of a named type, beside its description and default)."""
    for _ in range(8):  # a reference to a reference: a few at most
        if "$ref" in node:
            node = schemas.get(node["$ref"].rsplit("/", 1)[-1]) or {}
        elif len(node.get("allOf") or ()) == 1:
            node = {**{k: v for k, v in node.items() if k != "allOf"}, **node["allOf"][0]}
        else:
            break
    return node


def _kind(group: str, version: str, item: dict[str, Any]) -> Kind:
    return Kind(group, version, item.get("name", ""), item.get("kind", ""),
                bool(item.get("namespaced")), item.get("singularName") or "",
                tuple(item.get("shortNames") or ()), frozenset(item.get("verbs") or ()))


def _group_kinds(api: Any, group: dict[str, Any]) -> list[Kind]:
    preferred = (group.get("preferredVersion") or {}).get("version")
    listed = [v.get("version") for v in group.get("versions") or () if v.get("version")]
    kinds: list[Kind] = []
    for version in [preferred, *(v for v in listed if v != preferred)] if preferred else listed:
        with contextlib.suppress(Exception):  # a version that stopped answering: left out
            seen = {k.plural for k in kinds}
            kinds += [kind for item in api.get(f"/apis/{group['name']}/{version}").get(
                "resources") or () if (kind := _kind(group["name"], version, item)).plural
                not in seen]
    return kinds
