"""What the proxy holds per client watch (a ``Stream`` of ``Frame``s waiting for release), and
what a request path names."""

from __future__ import annotations

import re
import threading
from collections import deque
from dataclasses import dataclass, field

from aftershock.faults.watchdelay.frames import JSON

PATH = re.compile(r"^/(?:api/v1|apis/[^/]+/[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/?]+)")


@dataclass
class Frame:
    data: bytes  # with its own framing (a JSON line, a length-prefixed protobuf message)
    received: float
    release: float
    kind: str
    resource: str
    namespace: str
    name: str
    rv: str


@dataclass(eq=False)
class Stream:
    """One client watch: frames waiting for their release time, in arrival order."""

    path: str
    resource: str
    encoding: str = JSON
    frames: deque[Frame] = field(default_factory=deque)
    changed: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False
    expire: bool = False
    cut: bool = False  # end it without the final chunk: the client sees a broken stream
    upstream_done: bool = False


def resource_of(path: str) -> str:
    """The resource a request path names ('pods' for /api/v1/namespaces/n/pods/p/status)."""
    found = PATH.match(path)
    return found.group("res") if found else ""


def namespace_of(path: str) -> str:
    found = PATH.match(path)
    return (found.group("ns") or "") if found else ""
