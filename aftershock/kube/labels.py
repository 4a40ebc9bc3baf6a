"""Label selectors in kubectl's equality and existence forms: ``a=b,c!=d,e,!f``. The set forms
(``in``, ``notin``) are refused with a message saying which forms are understood."""

from __future__ import annotations

import re
from typing import Any

Requirement = tuple[str, str, str]  # (key, operator, value); operator: = != exists !exists
KEY = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
FORMS = "key, !key, key=value or key!=value, comma-separated"


def parse(text: str) -> tuple[Requirement, ...]:
    """The requirements of ``text``; ValueError names the part it cannot read."""
    requirements = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        requirements.append(_requirement(part))
    return tuple(requirements)


def _requirement(part: str) -> Requirement:
    if "!=" in part:
        key, value = part.split("!=", 1)
        operator = "!="
    elif "=" in part:
        key, value = part.replace("==", "=", 1).split("=", 1)
        operator = "="
    elif part.startswith("!"):
        key, value, operator = part[1:], "", "!exists"
    else:
        key, value, operator = part, "", "exists"
    key, value = key.strip(), value.strip()
    if not KEY.match(key) or " " in value:
        raise ValueError(f"cannot read '{part}' as a label requirement ({FORMS})")
    return key, operator, value


def has_all(selector: dict[str, str] | None, labels: dict[str, Any] | None) -> bool:
    """Whether ``labels`` has every key=value of ``selector`` (a matchLabels map; none or an
    empty one selects everything)."""
    if not selector:
        return True
    labels = labels or {}
    for key, value in selector.items():  # noqa: SIM110 (a loop: no generator per object)
        if labels.get(key) != value:
            return False
    return True


def matches(requirements: tuple[Requirement, ...], labels: dict[str, Any] | None) -> bool:
    labels = labels or {}
    return all(_holds(operator, labels.get(key), key in labels, value)
               for key, operator, value in requirements)


def _holds(operator: str, label: Any, present: bool, value: str) -> bool:
    if operator == "exists":
        return present
    if operator == "!exists":
        return not present
    if operator == "=":
        return label == value
    return label != value  # "!=": an absent label is not equal either
