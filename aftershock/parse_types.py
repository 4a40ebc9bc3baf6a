"""The parse types the words of steps and of phrases share (``{name:Name}``, ``{n:Ordinal}``)."""

from __future__ import annotations


def _name_type(text: str) -> str:
    return text


_name_type.pattern = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"  # an object name: no spaces


def _ordinal_type(text: str) -> int:
    return int(text[:-2])


_ordinal_type.pattern = r"[1-9][0-9]*(?:st|nd|rd|th)"  # 1st, 2nd, 3rd, 11th
EXTRA_TYPES = {"Name": _name_type, "Ordinal": _ordinal_type}
