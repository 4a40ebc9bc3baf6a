"""Kubernetes' timestamps (RFC 3339: an object's creationTimestamp, a managedFields time, an
audit event's stage time) as seconds since the epoch: parsed here, once, for every reader."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache


@lru_cache(maxsize=65536)
def seconds(stamp: str) -> float:
    """'2026-12-02T19:01:17.688118Z' → 1796238077.688118; a ValueError for what is none."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
