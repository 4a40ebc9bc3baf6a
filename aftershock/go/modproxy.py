"""A Go module the module proxy refuses, served from a folder laid out as a module proxy
(``GOPROXY=file://...``): made from a git repository at a revision by the rules the go command
zips a module by (``git archive`` of the revision, as the go command fetches it; no other
module's folder, no vendored package, no symlink; the repository's LICENSE for a module in a
folder of its own without one), and refused unless its hashes are the lines the go.sum of the
module that needs it holds. What ``aftershock modules serve`` does."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from aftershock.errors import UserError
from aftershock.machine.cache import cache_root

VCS = {".git", ".hg", ".svn", ".bzr"}
VERSION = re.compile(r"v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+incompatible)?")


@dataclass(frozen=True)
class Served:
    module: str
    version: str
    files: int
    zip_hash: str
    mod_hash: str
    proxy: Path

    @property
    def goproxy(self) -> str:
        return f"GOPROXY=file://{self.proxy},https://proxy.golang.org,direct"


def default_proxy() -> Path:
    return cache_root() / "goproxy"


def escape(path: str) -> str:
    """A module path or version as a proxy names it: each capital letter as ! and its lower."""
    return re.sub(r"[A-Z]", lambda found: "!" + found.group(0).lower(), path)


def hash1(files: dict[str, bytes]) -> str:
    """The go.sum hash (h1:) of named files: the SHA-256 of their sorted "sha256  name" lines."""
    summary = "".join(f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n"
                      for name in sorted(files))
    return "h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode()


def module_files(tree: dict[str, bytes], subdir: str) -> dict[str, bytes]:
    """The files of the module at ``subdir`` of an exported tree (path → content), as the
    module zip holds them, relative to the module's folder."""
    prefix = f"{subdir.strip('/')}/" if subdir.strip("/") else ""
    inside = {name[len(prefix):]: data for name, data in tree.items() if name.startswith(prefix)}
    others = {name.rsplit("/", 1)[0] + "/" for name in inside
              if name.endswith("/go.mod") and "/" in name}  # another module's folder
    kept = {name: data for name, data in inside.items()
            if not any(name.startswith(folder) for folder in others)
            and not set(name.split("/")[:-1]) & VCS and not _vendored(name)}
    if prefix and "LICENSE" not in kept and "LICENSE" in tree:
        kept["LICENSE"] = tree["LICENSE"]
    return kept


def _vendored(name: str) -> bool:
    """A file of a vendored package (vendor/<path>/file): vendor/modules.txt is not one."""
    if name.startswith("vendor/"):
        rest = name[len("vendor/"):]
    elif "/vendor/" in name:
        rest = name.split("/vendor/", 1)[1]
    else:
        return False
    return "/" in rest


def exported(repo: Path, rev: str) -> tuple[dict[str, bytes], str]:
    """The regular files of a repository at a revision, as ``git archive`` gives them (the go
    command's own export), and the commit's time."""
    if not repo.exists():
        raise UserError(f"--from {repo}: no such git directory")
    archive = subprocess.run(["git", "-c", "core.autocrlf=input", "-c", "core.eol=lf", "-C",
                              str(repo), "archive", "--format=tar", rev], capture_output=True)
    if archive.returncode != 0:
        raise UserError(f"--from {repo}: cannot export {rev}: "
                        f"{archive.stderr.decode(errors='replace').strip()[:300]}")
    files = {}
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        for member in tar.getmembers():
            if member.isfile():  # symlinks and the rest are not in a module zip
                files[member.name] = tar.extractfile(member).read()
    when = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%cI", rev],
                          capture_output=True, text=True).stdout.strip()
    return files, when


def go_sum_lines(go_sum: Path, module: str, version: str) -> tuple[str, str]:
    """The h1 lines of module@version (its zip, its go.mod) in a go.sum (or a module's folder)."""
    path = go_sum / "go.sum" if go_sum.is_dir() else go_sum
    if not path.is_file():
        raise UserError(f"--go-sum {go_sum}: no go.sum there")
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == module and words[1] in (version,
                                                                   f"{version}/go.mod"):
            found[words[1]] = words[2]
    if version not in found or f"{version}/go.mod" not in found:
        raise UserError(f"{path} has no line for {module} {version} (the module that needs it "
                        "names it in its go.sum)")
    return found[version], found[f"{version}/go.mod"]


def serve(module: str, version: str, repo: Path, go_sum: Path, rev: str | None = None,
          subdir: str = "", into: Path | None = None) -> Served:
    """Lay out module@version in a file proxy, from ``repo`` at ``rev`` (default: the version's
    tag, ``<subdir>/<version>`` for a module in a folder of its own), once its hashes are the
    go.sum's."""
    if not VERSION.fullmatch(version):
        raise UserError(f"'{version}' is no module version (v1.2.3, v0.0.0-<date>-<commit>)")
    want_zip, want_mod = go_sum_lines(go_sum, module, version)
    tag = rev or (f"{subdir.strip('/')}/{version}" if subdir.strip("/") else version)
    tree, when = exported(repo, tag)
    files = module_files(tree, subdir)
    said = (files.get("go.mod") or b"").decode(errors="replace")
    named = re.search(r"^module\s+\"?([^\s\"]+)", said, re.M)
    if named and named.group(1) != module:
        raise UserError(f"{repo} at {tag}: its go.mod names module {named.group(1)}, not "
                        f"{module}")
    go_mod = files.get("go.mod") or f"module {module}\n".encode()
    zipped = {f"{module}@{version}/{name}": data for name, data in files.items()}
    got_zip, got_mod = hash1(zipped), hash1({"go.mod": go_mod})
    for what, got, want in (("its files", got_zip, want_zip), ("its go.mod", got_mod, want_mod)):
        if got != want:
            raise UserError(f"{module}@{version} from {repo} at {tag}: {what} hash to {got}, "
                            f"but {go_sum} says {want}: not the module it needs (another "
                            "revision, or a folder of its own: --subdir)")
    proxy = into or default_proxy()
    _write(proxy / escape(module) / "@v", escape(version), zipped, go_mod, version, when)
    return Served(module, version, len(files), got_zip, got_mod, proxy)


def _write(folder: Path, version: str, zipped: dict[str, bytes], go_mod: bytes, said: str,
           when: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / f".{version}.zip.tmp"
    with zipfile.ZipFile(scratch, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(zipped):
            archive.writestr(name, zipped[name])
    shutil.move(scratch, folder / f"{version}.zip")
    (folder / f"{version}.mod").write_bytes(go_mod)
    (folder / f"{version}.info").write_text(json.dumps({"Version": said, "Time": when}) + "\n")
    listed = folder / "list"
    known = set(listed.read_text().split()) if listed.is_file() else set()
    listed.write_text("".join(f"{v}\n" for v in sorted(known | {said})))
