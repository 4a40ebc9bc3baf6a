"""Container images written directly as `docker save` archives: one layer of files, a config,
a manifest naming the image. No engine and no registry are needed to make one; `ctr images
import` (inside a node) and `docker load` both read them.

Layers are reproducible: fixed modification times and owners, entries in order, so the same
files give the same image ID, and a cached node image is reused only when its inputs match.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# the binaries are built for this machine, and containerd refuses an image of another platform
ARCHITECTURE = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


@dataclass(frozen=True)
class Entry:
    """One file of a layer: where it goes, and its bytes from a file or given inline."""

    dest: str
    source: Path | None = None
    data: bytes | None = None
    mode: int = 0o755
    link: str | None = None  # a symlink to this target instead of a file


@dataclass(frozen=True)
class Image:
    tag: str  # e.g. registry.k8s.io/kube-apiserver:v1.37.2
    entries: tuple[Entry, ...]
    entrypoint: tuple[str, ...] = ()
    env: tuple[str, ...] = (f"PATH={PATH}",)
    user: str = ""
    base: Path | None = None  # a root file system tar laid under the entries (same layer)
    labels: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()  # more tags for the same image


def _directories(dest: str) -> list[str]:
    parts = dest.strip("/").split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _info(name: str, kind: bytes, mode: int, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size, info.linkname = kind, mode, size, link
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
    return info


def layer(entries: Iterable[Entry], base: Path | None = None) -> bytes:
    """An uncompressed layer tar: ``base`` first (if any), then the entries and their parent
    directories, each directory once."""
    out = io.BytesIO()
    seen: set[str] = set()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if base is not None:
            with tarfile.open(base) as rootfs:
                for member in rootfs:
                    name = member.name.removeprefix("./").rstrip("/")
                    if not name or name in seen:
                        continue
                    seen.add(name)
                    member.name = name
                    tar.addfile(member, rootfs.extractfile(member) if member.isfile() else None)
        for entry in entries:
            for directory in _directories(entry.dest):
                if directory not in seen:
                    seen.add(directory)
                    tar.addfile(_info(directory, tarfile.DIRTYPE, 0o755))
            name = entry.dest.strip("/")
            if entry.link is not None:
                tar.addfile(_info(name, tarfile.SYMTYPE, 0o777, link=entry.link))
                continue
            data = entry.data if entry.data is not None else Path(entry.source).read_bytes()
            tar.addfile(_info(name, tarfile.REGTYPE, entry.mode, len(data)), io.BytesIO(data))
    return out.getvalue()


def config(image: Image, diff_id: str) -> dict:
    settings: dict = {"Env": list(image.env)}
    if image.entrypoint:
        settings["Entrypoint"] = list(image.entrypoint)
    if image.user:
        settings["User"] = image.user
    if image.labels:
        settings["Labels"] = dict(image.labels)
    return {"architecture": ARCHITECTURE, "os": "linux", "config": settings,
            "rootfs": {"type": "layers", "diff_ids": [diff_id]}, "history": [
                {"created_by": "aftershock kind build-image"}]}


def write(image: Image, path: Path) -> str:
    """The image as a `docker save` archive at ``path``; returns its ID (sha256 of config)."""
    data = layer(image.entries, image.base)
    diff_id = f"sha256:{hashlib.sha256(data).hexdigest()}"
    settings = json.dumps(config(image, diff_id), sort_keys=True).encode()
    image_id = hashlib.sha256(settings).hexdigest()
    layer_dir = diff_id.removeprefix("sha256:")
    manifest = [{"Config": f"{image_id}.json", "RepoTags": [image.tag, *image.aliases],
                 "Layers": [f"{layer_dir}/layer.tar"]}]
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, blob in ((f"{layer_dir}/layer.tar", data), (f"{image_id}.json", settings),
                           ("manifest.json", json.dumps(manifest).encode())):
            tar.addfile(_info(name, tarfile.REGTYPE, 0o644, len(blob)), io.BytesIO(blob))
    return f"sha256:{image_id}"


def tags(path: Path) -> list[str]:
    """The tags a `docker save` archive names (what kind reads to see what it holds)."""
    with tarfile.open(path) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
    return [tag for item in manifest for tag in item.get("RepoTags") or ()]
