"""Node-local member data, shared by the operator (its node agent) and the probe.

Pure filesystem code, no cluster. Layout under the data root:

    <root>/<node>/<namespace>/<cluster>/member-<i>/index.json          object name -> sha256
    <root>/<node>/<namespace>/<cluster>/member-<i>/bucket-<b>/<object>   the object's bytes

A read (the probe's ``get``) searches every member index of the cluster on every node: an object
listed in an index whose file is present with the right checksum is "ok"; listed but missing or
corrupt, or an index unreadable, is "error" (what a client sees as a 500); listed nowhere is
"not_found" (a clean miss). A member dir without index.json serves nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

INDEX = "index.json"
BUCKETS = 4
OK, NOT_FOUND, ERROR = "ok", "not_found", "error"


class UnreadableIndex(ValueError):
    """index.json exists but cannot be parsed as a name -> checksum mapping."""


@dataclass(frozen=True)
class Member:
    """One member's dir on one node."""

    node: str
    ordinal: int
    path: Path

    @property
    def key(self) -> str:
        return f"{self.node}/member-{self.ordinal}"


def cluster_dir(root: Path, node: str, namespace: str, cluster: str) -> Path:
    return Path(root) / node / namespace / cluster


def member_dir(root: Path, node: str, namespace: str, cluster: str, ordinal: int) -> Path:
    return cluster_dir(root, node, namespace, cluster) / f"member-{ordinal}"


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def bucket_of(k: int) -> int:
    return k % BUCKETS


def _ordinal(dirname: str) -> int | None:
    prefix, _, number = dirname.partition("-")
    return int(number) if prefix == "member" and number.isdigit() else None


def members_on(root: Path, node: str, namespace: str, cluster: str) -> list[Member]:
    """The member dirs of a cluster on one node, by ordinal."""
    base = cluster_dir(root, node, namespace, cluster)
    if not base.is_dir():
        return []
    found = [Member(node, _ordinal(p.name), p) for p in base.iterdir()
             if p.is_dir() and _ordinal(p.name) is not None]
    return sorted(found, key=lambda m: m.ordinal)


def members(root: Path, namespace: str, cluster: str) -> list[Member]:
    """Every member dir of a cluster on every node, by node then ordinal."""
    root = Path(root)
    if not root.is_dir():
        return []
    nodes = sorted(p.name for p in root.iterdir() if p.is_dir())
    return [m for node in nodes for m in members_on(root, node, namespace, cluster)]


def read_index(path: Path) -> dict[str, str] | None:
    """The member's index; None when it has none; UnreadableIndex when it is corrupt."""
    try:
        raw = (Path(path) / INDEX).read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UnreadableIndex(str(exc)) from exc
    try:
        index = json.loads(raw)
    except ValueError as exc:
        raise UnreadableIndex(f"not JSON: {exc}") from exc
    if not isinstance(index, dict) or not all(isinstance(v, str) for v in index.values()):
        raise UnreadableIndex("not a mapping of object name to checksum")
    return index


def write_index(path: Path, index: dict[str, str]) -> None:
    """Atomically: a temporary file in the same dir, then a rename over index.json."""
    fd, tmp = tempfile.mkstemp(dir=path, prefix=".index-", suffix=".tmp")
    with os.fdopen(fd, "w") as out:
        json.dump(dict(sorted(index.items())), out, indent=1)
    os.replace(tmp, Path(path) / INDEX)


def ensure_member(path: Path) -> bool:
    """The node agent's part: the dir exists with an index. True when it had to create one."""
    path = Path(path)
    if path.is_dir() and (path / INDEX).exists():
        return False
    path.mkdir(parents=True, exist_ok=True)
    if (path / INDEX).exists():
        return False
    write_index(path, {})
    return True


def object_file(path: Path, name: str) -> Path | None:
    """Where the object's bytes are (whichever bucket holds it), or None."""
    for bucket in sorted(Path(path).glob("bucket-*")):
        if (bucket / name).is_file():
            return bucket / name
    return None


def store(path: Path, objects: dict[str, tuple[int, bytes]]) -> dict[str, str]:
    """Write objects (name -> (bucket, bytes)) into a member dir, then index them in one rename."""
    ensure_member(path)
    sums = {}
    for name, (bucket, data) in objects.items():
        target = Path(path) / f"bucket-{bucket}"
        target.mkdir(exist_ok=True)
        (target / name).write_bytes(data)
        sums[name] = checksum(data)
    write_index(path, {**(read_index(path) or {}), **sums})
    return sums


def _check(member: Member, name: str, expected: str) -> tuple[str, str]:
    found = object_file(member.path, name)
    if found is None:
        return ERROR, f"listed in {member.key}/{INDEX} but its file is missing"
    if checksum(found.read_bytes()) != expected:
        return ERROR, f"{member.key}/{found.parent.name}/{name} has the wrong checksum"
    return OK, f"{member.key}/{found.parent.name}/{name}"


def read_one(name: str, indexes: list[tuple[Member, dict[str, str] | None, str]]) -> dict:
    """Classify one object from every member's (member, index, error) — see the module doc."""
    errors = []
    for member, index, problem in indexes:
        if problem:
            errors.append((member.key, f"{member.key}/{INDEX} unreadable: {problem}"))
        elif index and name in index:
            status, detail = _check(member, name, index[name])
            if status == OK:
                return {"object": name, "status": OK, "where": member.key, "detail": detail}
            errors.append((member.key, detail))
    if errors:
        return {"object": name, "status": ERROR, "where": errors[0][0],
                "detail": "; ".join(detail for _, detail in errors)}
    return {"object": name, "status": NOT_FOUND, "where": None, "detail": "listed in no index"}


def load_indexes(root: Path, namespace: str, cluster: str,
                 ) -> list[tuple[Member, dict[str, str] | None, str]]:
    loaded = []
    for member in members(root, namespace, cluster):
        try:
            loaded.append((member, read_index(member.path), ""))
        except UnreadableIndex as exc:
            loaded.append((member, None, str(exc)))
    return loaded


def read_all(root: Path, namespace: str, cluster: str, names: Iterable[str]) -> list[dict]:
    indexes = load_indexes(root, namespace, cluster)
    return [read_one(name, indexes) for name in names]


def inventory(root: Path, namespace: str, cluster: str) -> dict[str, dict]:
    """Per member dir: how many object files it holds, which buckets, whether it has an index."""
    result = {}
    for member in members(root, namespace, cluster):
        buckets = sorted(int(b.name.split("-")[1]) for b in member.path.glob("bucket-*")
                         if b.is_dir() and b.name.split("-")[1].isdigit())
        objects = sum(1 for b in buckets for f in (member.path / f"bucket-{b}").iterdir()
                      if f.is_file())
        result[member.key] = {"objects": objects, "buckets": buckets,
                              "index": (member.path / INDEX).exists()}
    return result
