"""The daemon image's nsexec (containers/images/data/nsexec.sh): Chaos Mesh's flags become
nsenter's, and what it cannot do is refused. Run with a stand-in nsenter on PATH that prints its
arguments, so nothing enters a namespace here."""

from __future__ import annotations

import os
import subprocess
from importlib import resources

import pytest

SCRIPT = resources.files("aftershock.containers.images") / "data" / "nsexec.sh"


@pytest.fixture
def nsexec(tmp_path):
    fake = tmp_path / "nsenter"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}

    def run(*args: str) -> subprocess.CompletedProcess:
        with resources.as_file(SCRIPT) as script:
            return subprocess.run(["bash", str(script), *args], capture_output=True, text=True,
                                  env=env, timeout=10)
    return run


def test_the_network_namespace_flag_becomes_nsenters(nsexec):
    done = nsexec("-n", "/proc/42/ns/net", "--", "ipset", "create", "a", "hash:net")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["--net=/proc/42/ns/net", "--", "ipset", "create", "a",
                                        "hash:net"]


def test_several_namespaces_keep_their_order_and_the_commands_own_dashes(nsexec):
    done = nsexec("-p", "/proc/7/ns/pid", "-n", "/proc/7/ns/net", "--", "tc", "qdisc", "del",
                  "dev", "eth0", "root", "--", "-x")
    assert done.stdout.splitlines()[:3] == ["--pid=/proc/7/ns/pid", "--net=/proc/7/ns/net", "--"]
    assert done.stdout.splitlines()[-2:] == ["--", "-x"]


def test_a_program_of_the_image_inside_the_targets_mount_namespace_is_refused(nsexec):
    done = nsexec("-l", "-m", "/proc/7/ns/mnt", "-p", "/proc/7/ns/pid", "--", "toda")
    assert done.returncode == 2 and "-l" in done.stderr and done.stdout == ""


def test_unknown_flags_and_a_missing_command_are_refused(nsexec):
    assert nsexec("-x", "y", "--", "true").returncode == 2
    done = nsexec("-n", "/proc/1/ns/net", "--")
    assert done.returncode == 2 and "no command" in done.stderr
