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


def load(path: str | Path) -> Located:
    """Parse one YAML document; a syntax error becomes a UserError naming file:line."""
    shown = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UserError(f"cannot read file: {exc.strerror}", path=shown) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise UserError(f"not valid YAML: {exc.problem}", path=shown, line=line) from None
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _walk(node, (), lines)
    return Located(shown, data, lines)
