"""The managed engine's runtime wrapper: which capabilities it removes, from which file."""

from __future__ import annotations

import json

from aftershock.containers import capless_runc as wrapper

STATUS = "Name:\tx\nCapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\n"
ALL = [f"CAP_{name}" for name in wrapper.NAMES]


def test_the_capabilities_missing_from_the_bounding_set_are_named():
    assert wrapper.missing(STATUS) == {"CAP_SYS_RESOURCE"}
    assert wrapper.missing("CapBnd:\t000001ffffffffff\n") == set()


def test_every_set_loses_them_and_nothing_else():
    caps = {key: list(ALL) for key in wrapper.SETS}
    assert wrapper.strip(caps, {"CAP_SYS_RESOURCE"})
    assert all(caps[key] == [c for c in ALL if c != "CAP_SYS_RESOURCE"] for key in wrapper.SETS)
    assert not wrapper.strip(caps, {"CAP_SYS_RESOURCE"})  # nothing left to change


def test_create_edits_the_bundle_and_exec_the_process_file():
    root = ["--root", "/run/x/moby", "--log", "/l.json", "--log-format", "json",
            "--systemd-cgroup"]
    assert wrapper.target([*root, "create", "--bundle", "/b", "id"], "/cwd") == (
        wrapper.Path("/b/config.json"), "process")
    assert wrapper.target([*root, "run", "id"], "/cwd") == (
        wrapper.Path("/cwd/config.json"), "process")
    assert wrapper.target([*root, "exec", "--process=/tmp/p.json", "-d", "id"], "/cwd") == (
        wrapper.Path("/tmp/p.json"), "")
    assert wrapper.target([*root, "start", "id"], "/cwd") is None
    assert wrapper.target(["--version"], "/cwd") is None


def test_a_bundle_is_rewritten_only_where_it_asks_for_a_missing_capability(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"process": {"capabilities": {"bounding": ALL}}, "x": 1}))
    wrapper.edit(config, "process", {"CAP_SYS_RESOURCE"})
    spec = json.loads(config.read_text())
    assert "CAP_SYS_RESOURCE" not in spec["process"]["capabilities"]["bounding"]
    assert len(spec["process"]["capabilities"]["bounding"]) == len(ALL) - 1 and spec["x"] == 1
    plain = tmp_path / "p.json"
    plain.write_text('{"capabilities": {"bounding": ["CAP_KILL"]}}')
    wrapper.edit(plain, "", {"CAP_SYS_RESOURCE"})
    assert plain.read_text() == '{"capabilities": {"bounding": ["CAP_KILL"]}}'  # untouched
