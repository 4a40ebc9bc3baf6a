"""YAML loading that remembers where every value came from, so errors can name file:line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from aftershock.errors import UserError


@dataclass(frozen=True)
class Located:
    """A loaded YAML document plus the line of each mapping key / sequence item (by path)."""

    path: str
    data: Any
    lines: dict[tuple[Any, ...], int]

    def line(self, *keys: Any) -> int:
        """Line of the deepest known prefix of ``keys`` (1-based)."""
        for end in range(len(keys), -1, -1):
            found = self.lines.get(tuple(keys[:end]))
            if found is not None:
                return found
        return 1

    def error(self, message: str, *keys: Any) -> UserError:
        return UserError(message, path=self.path, line=self.line(*keys))


def _walk(node: yaml.Node, at: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> None:
    lines.setdefault(at, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[(*at, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*at, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*at, index), lines)


def read_text(path: str | Path) -> str:
    """A user's text file, or one line saying why it cannot be read (at which line, if the
    bytes are not UTF-8)."""
    try:
        return Path(path).read_text()
    except UnicodeDecodeError as exc:
        line = Path(path).read_bytes()[:exc.start].count(b"\n") + 1
        raise UserError(f"not UTF-8 text ({exc.reason})", path=str(path), line=line) from None
    except OSError as exc:
        raise UserError(f"cannot read file: {exc.strerror}", path=str(path)) from None


def load(path: str | Path) -> Located:
    """Parse one YAML document; a syntax error becomes a UserError naming file:line."""
    shown = str(path)
    text = read_text(path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise UserError(f"not valid YAML: {exc.problem}", path=shown, line=line) from None
    except yaml.YAMLError as exc:  # the reader's: a character YAML does not allow
        position = getattr(exc, "position", None)
        line = text[:position].count("\n") + 1 if isinstance(position, int) else None
        why = getattr(exc, "reason", None) or str(exc).splitlines()[0]
        raise UserError(f"not valid YAML: {why}", path=shown, line=line) from None
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _walk(node, (), lines)
    return Located(shown, data, lines)


_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # an operator's CRDs can be megabytes


class ManifestLoader(_BASE):  # type: ignore[misc,valid-type]
    """YAML as the API server's tools read it: a bare ``=`` (an enum value in real CRDs, e.g.
    label-matcher operators) is the string "=", not YAML 1.1's 'value' tag PyYAML refuses."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:value"]
        for first, resolvers in _BASE.yaml_implicit_resolvers.items()
    }


def manifests(path: str | Path, text: str | None = None) -> list[Any]:
    """Every document of a manifest file (its text may be given, e.g. placeholders filled); a
    file that is not YAML is a UserError naming file:line."""
    try:
        source = Path(path).read_text() if text is None else text
        return [doc for doc in yaml.load_all(source, Loader=ManifestLoader) if doc]
    except OSError as exc:
        raise UserError(f"cannot read manifest: {exc.strerror}", path=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                        path=str(path), line=mark.line + 1 if mark else None) from None
