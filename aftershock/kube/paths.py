"""Paths into an object, as profiles name them: dotted keys, and list elements by index or by
key, e.g. ``spec.replicas``, ``spec.replicatedJobs[0].replicas``,
``spec.workerGroupSpecs[groupName=workers].replicas``. Read, set (creating maps on the way),
turned into a JSON patch against the object as it is, and checked against a CRD's schema."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SEGMENT = re.compile(r"([^.\[\]]+)((?:\[[^\]]*\])*)")
SELECTOR = re.compile(r"\[(?:(\d+)|([A-Za-z0-9_.-]+)=([^\]]*))\]")


class PathError(ValueError):
    pass


@dataclass(frozen=True)
class Key:
    name: str


@dataclass(frozen=True)
class Index:
    position: int


@dataclass(frozen=True)
class Match:
    key: str
    value: str


Step = Key | Index | Match


def parse(path: str) -> list[Step]:
    """'a.b[0].c[name=x].d' → [Key a, Key b, Index 0, Key c, Match name=x, Key d]."""
    steps: list[Step] = []
    for part in path.split(".") if path else []:
        found = SEGMENT.fullmatch(part)
        if not found:
            raise PathError(f"'{path}': cannot read '{part}' (expected key, key[0] or "
                            "key[field=value])")
        steps.append(Key(found.group(1)))
        selectors = found.group(2)
        matched = SELECTOR.findall(selectors)
        if "".join(f"[{i or f'{k}={v}'}]" for i, k, v in matched) != selectors:
            raise PathError(f"'{path}': cannot read '{selectors}' (expected [0] or "
                            "[field=value])")
        for index, key, value in matched:
            steps.append(Index(int(index)) if index else Match(key, value))
    if not steps:
        raise PathError("an empty path")
    return steps


def _element(items: list, step: Index | Match) -> int | None:
    if isinstance(step, Index):
        return step.position if step.position < len(items) else None
    for position, item in enumerate(items):
        if isinstance(item, dict) and str(item.get(step.key)) == step.value:
            return position
    return None


def get(obj: Any, path: str) -> Any:
    """The value at ``path``, or None where any part is missing."""
    return _follow(obj, parse(path))


def remove(obj: dict, path: str) -> dict:
    """``obj`` with the map key at ``path`` taken out; as it was where any part is missing."""
    *above, last = parse(path)
    holder = _follow(obj, above)
    if isinstance(last, Key) and isinstance(holder, dict):
        holder.pop(last.name, None)
    return obj


def _follow(obj: Any, steps: list[Step]) -> Any:
    node = obj
    for step in steps:
        if isinstance(step, Key):
            if not isinstance(node, dict):
                return None
            node = node.get(step.name)
        else:
            if not isinstance(node, list):
                return None
            position = _element(node, step)
            if position is None:
                return None
            node = node[position]
    return node


def put(obj: dict, path: str, value: Any) -> dict:
    """Set ``value`` at ``path``, creating maps on the way; an element selected by key that
    is not there yet is appended (with that key), one selected by index must exist (or be the
    next one)."""
    steps = parse(path)
    node: Any = obj
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        last = after is None
        fresh: Any = [] if isinstance(after, Index | Match) else {}
        if isinstance(step, Key):
            if not isinstance(node, dict):
                raise PathError(f"'{path}': '{step.name}' is not in a map")
            if last:
                node[step.name] = value
            else:
                node = node.setdefault(step.name, fresh)
            continue
        if not isinstance(node, list):
            raise PathError(f"'{path}': a list was expected before {_shown(step)}")
        position = _element(node, step)
        if position is None:
            position = _append(node, step, path)
        if last:
            node[position] = value
        else:
            if not isinstance(node[position], dict | list):
                node[position] = fresh
            node = node[position]
    return obj


def _append(items: list, step: Index | Match, path: str) -> int:
    if isinstance(step, Index) and step.position != len(items):
        raise PathError(f"'{path}': no element {step.position} (the list has {len(items)})")
    items.append({step.key: step.value} if isinstance(step, Match) else {})
    return len(items) - 1


def shown(steps: list[Step]) -> str:
    """A path's steps as written: 'a.b[0].c[name=x]'."""
    return "".join(_shown(step) if not isinstance(step, Key) or at == 0 else f".{step.name}"
                   for at, step in enumerate(steps))


def _shown(step: Step) -> str:
    return f"[{step.position}]" if isinstance(step, Index) else \
        f"[{step.key}={step.value}]" if isinstance(step, Match) else step.name


def pointer(obj: dict, path: str) -> tuple[str, list[dict[str, Any]]]:
    """The JSON pointer of ``path`` in ``obj`` as it is now, and the JSON patch tests that
    pin each element selected by key (so a list reordered meanwhile makes the patch fail
    rather than change the wrong element)."""
    parts: list[str] = []
    tests: list[dict[str, Any]] = []
    node: Any = obj
    for step in parse(path):
        if isinstance(step, Key):
            parts.append(step.name.replace("~", "~0").replace("/", "~1"))
            node = node.get(step.name) if isinstance(node, dict) else None
            continue
        position = _element(node, step) if isinstance(node, list) else None
        if position is None:
            raise PathError(f"'{path}': {_shown(step)} selects nothing in the object as it is")
        parts.append(str(position))
        if isinstance(step, Match):
            tests.append({"op": "test", "path": "/" + "/".join([*parts, step.key]),
                          "value": node[position].get(step.key)})
        node = node[position]
    return "/" + "/".join(parts), tests


def patch(obj: dict, path: str, value: Any) -> list[dict[str, Any]]:
    """A JSON patch that sets ``path`` to ``value`` in ``obj`` as it is now."""
    where, tests = pointer(obj, path)
    op = "replace" if get(obj, path) is not None else "add"
    return [*tests, {"op": op, "path": where, "value": value}]


def unmatched(obj: Any, path: str) -> tuple[str, list[str]] | None:
    """Where ``path`` selects a list element by key (``conditions[type=Ready]``) and the list
    the object has there holds none with that value: the selector as written, and the values
    of its key the list does hold. None when every selector found its element, or the path
    ends before a list (the field is absent, not the element)."""
    node = obj
    walked = ""
    for step in parse(path):
        if isinstance(step, Key):
            if not isinstance(node, dict) or step.name not in node:
                return None
            node = node[step.name]
            walked = f"{walked}.{step.name}" if walked else step.name
            continue
        if not isinstance(node, list):
            return None
        position = _element(node, step)
        if position is None:
            if isinstance(step, Index):
                return None  # an index beyond the list: absent, as a short list is
            values = sorted({str(item.get(step.key)) for item in node
                             if isinstance(item, dict) and step.key in item})
            return f"{walked}{_shown(step)}", values
        node = node[position]
        walked += _shown(step)
    return None


def schema_problem(schema: dict[str, Any], path: str | list[Step],
                   resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> str | None:
    """Why a CRD's openAPIV3Schema (or an OpenAPI v3 schema, its references followed by
    ``resolve``) cannot address ``path``, or None. A list element selected by a key the items
    do not have (``conditions[tpye=Ready]``) is a problem too: it would select nothing, ever.
    ``path`` may be given as its steps, for a map key with a dot in it (an annotation's)."""
    return _walk(schema, path, resolve)[0]


def schema_type(schema: dict[str, Any], path: str | list[Step],
                resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> str | None:
    """The type the schema gives the field at ``path`` (``integer``, ``number``, ``string``,
    ``boolean``, ``object``, ``array``), or None where it says none (an int-or-string, a field
    under preserve-unknown-fields, a path it cannot address)."""
    problem, node = _walk(schema, path, resolve)
    if problem or node is None or node.get("x-kubernetes-int-or-string"):
        return None
    kind = node.get("type")
    return kind if isinstance(kind, str) else None


def unordered_lists(schema: dict[str, Any],
                   resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                   depth: int = 12) -> list[str]:
    """The lists whose order the schema says carries no meaning (``x-kubernetes-list-type``
    map or set: a Service's ports, a pod's containers), as flattened paths: ``spec.ports``,
    ``spec.template.spec.containers[*].ports``."""
    resolve = resolve or (lambda node: node)
    found: list[str] = []

    def visit(node: dict[str, Any], at: str, left: int) -> None:
        node = resolve(node)
        if left == 0 or node.get("x-kubernetes-preserve-unknown-fields"):
            return
        if node.get("type") == "array":
            if node.get("x-kubernetes-list-type") in ("map", "set"):
                found.append(at)
            visit(node.get("items") or {}, f"{at}[*]", left - 1)
            return
        for name, child in (node.get("properties") or {}).items():
            visit(child, f"{at}.{name}" if at else name, left - 1)

    visit(schema, "", depth)
    return found


def _walk(schema: dict[str, Any], path: str | list[Step],
          resolve: Callable[[dict[str, Any]], dict[str, Any]] | None
          ) -> tuple[str | None, dict[str, Any] | None]:
    """(why the schema cannot address ``path``, or None; the node it addresses, or None where
    it is open: preserve-unknown-fields)."""
    resolve = resolve or (lambda node: node)
    node = resolve(schema)
    walked = ""
    for step in parse(path) if isinstance(path, str) else path:
        node = resolve(node)
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return None, None
        if isinstance(step, Key):
            properties = node.get("properties") or {}
            if node.get("type") == "array":
                return (f"'{walked}' is a list: name one element, as in {walked}[0].{step.name} "
                        f"or {walked}[<field>=<value>].{step.name}"), None
            if step.name in properties:
                node = properties[step.name]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                known = ", ".join(sorted(properties)) or "none"
                return (f"the schema has no field '{step.name}' under '{walked or '.'}' "
                        f"(fields there: {known})"), None
            walked = f"{walked}.{step.name}" if walked else step.name
        else:
            if node.get("type") != "array":
                return (f"'{walked}' is not a list in the schema: {_shown(step)} cannot "
                        "apply"), None
            node = resolve(node.get("items") or {})
            if isinstance(step, Match) and not node.get("x-kubernetes-preserve-unknown-fields"):
                keys = node.get("properties") or {}
                if keys and step.key not in keys:
                    return (f"the items of '{walked}' have no field '{step.key}' to select "
                            f"one by (fields there: {', '.join(sorted(keys))})"), None
            walked += _shown(step)
    return None, resolve(node)
