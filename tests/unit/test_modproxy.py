"""`aftershock modules serve`: a module laid out as a file proxy holds the files the go command
itself zips from the repository (compared with its own download of the same tag, made through a
URL mapping), Go reads it back, and a revision whose hash is not the go.sum's is refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.go import modproxy

MODULE = "github.com/acme/Tools/sub"  # a capital letter: the proxy escapes it


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose module is in sub/, with what a module zip leaves out: another
    module's folder, a vendored package, a symlink; and a LICENSE only at its root."""
    root = tmp_path / "repo"
    files = {"LICENSE": "the root's licence\n", "sub/go.mod": f"module {MODULE}\n\ngo 1.22\n",
             "sub/a.go": "package sub\n", "sub/vendor/modules.txt": "# none\n",
             "sub/vendor/example.com/x/x.go": "package x\n",
             "sub/inner/go.mod": "module example.com/inner\n", "sub/inner/i.go": "package i\n",
             "sub/deep/d.go": "package deep\n", "other/o.go": "package other\n"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "sub" / "link.go").symlink_to("a.go")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    _git(root, "tag", "sub/v1.0.0")
    return root


def _go_download(tmp_path: Path, env_extra: dict[str, str]) -> dict:
    env = {**os.environ, "GOMODCACHE": str(tmp_path / "modcache"), "GOFLAGS": "-mod=mod",
           "GOTOOLCHAIN": "local", "GIT_TERMINAL_PROMPT": "0", **env_extra}
    done = subprocess.run(["go", "mod", "download", "-json", f"{MODULE}@v1.0.0"],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    found = json.loads(done.stdout or "{}")
    assert done.returncode == 0 and "Error" not in found, done.stdout + done.stderr
    subprocess.run(["chmod", "-R", "u+w", str(tmp_path / "modcache")], check=True)
    return found


def test_the_zip_holds_what_the_go_command_zips_and_go_reads_it_back(repo, tmp_path):
    tree, _ = modproxy.exported(repo, "sub/v1.0.0")
    files = modproxy.module_files(tree, "sub")
    assert sorted(files) == ["LICENSE", "a.go", "deep/d.go", "go.mod", "vendor/modules.txt"]
    # the go command's own zip of that tag, fetched from the repository itself
    (tmp_path / "direct").mkdir()
    truth = _go_download(tmp_path / "direct", {
        "GOPROXY": "direct", "GOPRIVATE": "github.com/acme", "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.file://{repo}.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://github.com/acme/Tools"})
    go_sum = tmp_path / "go.sum"
    go_sum.write_text(f"{MODULE} v1.0.0 {truth['Sum']}\n{MODULE} v1.0.0/go.mod "
                      f"{truth['GoModSum']}\n")
    served = modproxy.serve(MODULE, "v1.0.0", repo, go_sum, subdir="sub",
                            into=tmp_path / "proxy")
    assert (served.zip_hash, served.mod_hash) == (truth["Sum"], truth["GoModSum"])
    assert (tmp_path / "proxy" / "github.com" / "acme" / "!tools" / "sub" / "@v" /
            "v1.0.0.zip").is_file()
    (tmp_path / "read").mkdir()
    back = _go_download(tmp_path / "read", {"GOPROXY": f"file://{tmp_path / 'proxy'}",
                                            "GOSUMDB": "off"})
    assert back["Sum"] == truth["Sum"]


def test_a_revision_that_is_not_the_go_sums_is_refused_and_nothing_is_written(repo, tmp_path):
    go_sum = tmp_path / "go.sum"
    go_sum.write_text(f"{MODULE} v1.0.0 h1:{'A' * 43}=\n{MODULE} v1.0.0/go.mod h1:{'B' * 43}=\n")
    with pytest.raises(UserError) as refused:
        modproxy.serve(MODULE, "v1.0.0", repo, go_sum, subdir="sub", into=tmp_path / "proxy")
    assert f"but {go_sum} says h1:AAAA" in str(refused.value)
    assert not (tmp_path / "proxy").exists()
    with pytest.raises(UserError, match=re.escape(f"has no line for {MODULE} v2.0.0")):
        modproxy.serve(MODULE, "v2.0.0", repo, go_sum, subdir="sub")
