"""Nothing secret leaves a run in its reports: Secret values, service-account and bearer tokens,
client keys. Known values (the Secrets a scenario's namespace held, the tokens the harness
issued) are replaced wherever they appear; token-shaped text and credential fields are replaced
even when nobody told us the value."""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MASK = "[REDACTED]"
MIN_LENGTH = 4  # shorter "secrets" would blank out ordinary words
PATTERNS = (
    # JSON Web Tokens: service-account tokens and most bearer tokens.
    (re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{MASK}"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----",
                re.DOTALL), MASK),
    # kubeconfig and similar YAML: `token: …`, `client-key-data: …`, `password: …`
    (re.compile(r"(?im)^(\s*-?\s*(?:token|client-key-data|password)\s*:\s*)(?!\[REDACTED\])\S.*$"),
     rf"\1{MASK}"),
    # the same keys in JSON
    (re.compile(r'("(?:token|client-key-data|password|Authorization)"\s*:\s*")[^"]+(")'),
     rf"\1{MASK}\2"),
)
TEXT_SUFFIXES = {".txt", ".log", ".json", ".jsonl", ".yaml", ".yml", ".kubeconfig", ".html",
                 ".md", ".xml", ".csv", ".properties", ".svg", ".ini", ".key", ".crt", ".pem",
                 ""}


class Redactor:
    def __init__(self, values: Iterable[str] = ()):
        self.values: set[str] = set()
        for value in values:
            self.add(value)

    def add(self, value: str | bytes | None) -> None:
        """A secret value, and the base64 text it travels as in a Secret's data."""
        if not value:
            return
        raw = value if isinstance(value, bytes) else value.encode()
        text = raw.decode(errors="replace")
        for form in (text, base64.b64encode(raw).decode()):
            if len(form) >= MIN_LENGTH:
                self.values.add(form)

    def add_secret(self, secret: dict[str, Any]) -> None:
        """Every value of a Secret object (data is base64, stringData plain); of a
        service-account token Secret, its token (its namespace and the cluster's CA are no
        secret, and masking the namespace's name would blank out every object of the run)."""
        data = secret.get("data") or {}
        if secret.get("type") == "kubernetes.io/service-account-token":
            data = {key: value for key, value in data.items() if key == "token"}
        for encoded in data.values():
            if encoded:
                self.values.add(encoded)
                with contextlib.suppress(ValueError):
                    self.add(base64.b64decode(encoded))
        for plain in (secret.get("stringData") or {}).values():
            self.add(plain)

    def text(self, text: str) -> str:
        for value in sorted(self.values, key=len, reverse=True):
            text = text.replace(value, MASK)
        for pattern, replacement in PATTERNS:
            text = pattern.sub(replacement, text)
        return text

    def file(self, path: Path) -> bool:
        """Rewrite a text file in place; True if anything was redacted. Binary files are left."""
        if path.suffix.lower() not in TEXT_SUFFIXES and not path.name.endswith("-attachment"):
            return False
        try:
            original = path.read_text()
        except (UnicodeDecodeError, OSError):
            return False
        cleaned = self.text(original)
        if cleaned == original:
            return False
        path.write_text(cleaned)
        return True

    def tree(self, root: Path) -> list[Path]:
        """Every text file under root; returns the files that changed."""
        if not root.exists():
            return []
        return [path for path in sorted(root.rglob("*")) if path.is_file() and self.file(path)]


def redact_object(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a Kubernetes object fit to show: a Secret's values masked."""
    if obj.get("kind") != "Secret":
        return obj
    masked = dict(obj)
    for key in ("data", "stringData"):
        if masked.get(key):
            masked[key] = {name: MASK for name in masked[key]}
    return masked
