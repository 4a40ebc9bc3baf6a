"""The parse types the words of steps and of phrases share (``{name:Name}``, ``{n:Ordinal}``)."""

from __future__ import annotations


def _name_type(text: str) -> str:
    return text


_name_type.pattern = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"  # an object name: no spaces


def _ordinal_type(text: str) -> int:
    return int(text[:-2])


_ordinal_type.pattern = r"[1-9][0-9]*(?:st|nd|rd|th)"  # 1st, 2nd, 3rd, 11th


def _ref_type(text: str) -> str:
    return text


# An object as kubectl names it: kind/name, the kind maybe with its group (claim.resource.k8s.io)
_ref_type.pattern = r"[A-Za-z][A-Za-z0-9.-]*/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"


def _comparison_type(text: str) -> str:
    return text


# A field compared with a value (aftershock.kube.comparison), told from other words by its operator
_comparison_type.pattern = r"\S+ +(?:(?:==|!=|<=|>=|<|>) *\S.*|exists|absent)"


def _having_type(text: str) -> str:
    return text


# What an object has: a comparison, or a bare path meaning it exists
# (status.reservedFor[name=x]); it ends before " until ", which starts a scope's end
_having_type.pattern = (r"\S+(?: +(?:(?:==|!=|<=|>=|<|>) *\S(?:(?! until ).)*|exists|absent))?")
EXTRA_TYPES = {"Name": _name_type, "Ordinal": _ordinal_type, "Ref": _ref_type,
               "Comparison": _comparison_type, "Having": _having_type}
