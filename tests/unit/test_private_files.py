"""A private key (and a kubeconfig holding one) is its owner's alone from the moment it exists:
created with mode 0600, never written with the process's umask and chmod'ed after, which
leaves it readable by anyone in between."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aftershock.machine import certificates as pki

PRIVATE = ("ca.key", "apiserver.key", "sa.key", "admin.key", "kube-scheduler.key", "tls.key",
           "admin.kubeconfig")


@pytest.fixture()
def watched(monkeypatch):
    """Every mode change, with what the file held and its mode just before: a key with
    content and a mode others may read was readable by them until that moment. The umask is
    0, as a user's may be: the mode a file is created with is what it gets."""
    seen: list[tuple[str, int, int]] = []
    chmod, fchmod = os.chmod, os.fchmod

    def record(info: os.stat_result, name: str) -> None:
        seen.append((name, info.st_size, info.st_mode & 0o777))

    def watch_chmod(path, mode, *args, **kwargs):
        record(os.stat(path), Path(path).name)
        return chmod(path, mode, *args, **kwargs)

    def watch_fchmod(descriptor, mode):
        record(os.fstat(descriptor), os.readlink(f"/proc/self/fd/{descriptor}").rsplit("/")[-1])
        return fchmod(descriptor, mode)
    monkeypatch.setattr(os, "chmod", watch_chmod)
    monkeypatch.setattr(os, "fchmod", watch_fchmod)
    before = os.umask(0)
    try:
        yield seen
    finally:
        os.umask(before)


def test_no_key_is_ever_readable_by_others(tmp_path, watched):
    made = pki.create(tmp_path / "pki")
    pki.serving_pair(tmp_path / "pki")
    pki.write_kubeconfig(tmp_path / "pki" / "admin.kubeconfig", made, pki.ADMIN,
                         "https://127.0.0.1:6443", "c")
    exposed = sorted({f"{name} held {size} bytes with mode {mode:o}"
                      for name, size, mode in watched
                      if name in PRIVATE and size and mode & 0o077})
    assert exposed == [], f"a key readable by others before its chmod: {exposed}"
    modes = {name: (tmp_path / "pki" / name).stat().st_mode & 0o777 for name in PRIVATE}
    assert modes == dict.fromkeys(PRIVATE, 0o600)


def test_a_key_file_that_was_there_is_made_private_before_it_is_written(tmp_path, watched):
    old = tmp_path / "pki" / "ca.key"
    old.parent.mkdir()
    old.write_text("an old key")
    os.chmod(old, 0o644)
    watched.clear()
    pki.create(tmp_path / "pki")
    assert old.stat().st_mode & 0o777 == 0o600
    assert not [seen for seen in watched if seen[0] == "ca.key" and seen[1] and
                seen[2] & 0o077], "the new key went into the old file's mode"
