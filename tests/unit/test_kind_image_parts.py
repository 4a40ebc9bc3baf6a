"""The pure parts of building a kind node image here: the image archives written without an
engine, and the changes made to kind's containerd config and runtime spec."""

from __future__ import annotations

import json
import tarfile

import pytest

from aftershock.containers.images import archive, base, containerd
from aftershock.errors import UserError

KIND_CONFIG = """version = 2

[proxy_plugins]
[proxy_plugins."fuse-overlayfs"]
  type = "snapshot"
  address = "/run/containerd-fuse-overlayfs.sock"

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
"""


def test_containerd_may_not_lower_oom_scores_and_has_no_rootless_snapshotter():
    text = base.containerd_config(KIND_CONFIG)
    assert "restrict_oom_score_adj = true" in text and "= false" not in text
    assert "proxy_plugins" not in text and "fuse-overlayfs" not in text
    assert 'snapshotter = "overlayfs"' in text and 'sandbox_image = "registry.k8s.io' in text


def test_a_config_without_the_setting_is_refused_rather_than_left_unsafe():
    with pytest.raises(UserError, match="restrict_oom_score_adj"):
        base.containerd_config('[plugins."io.containerd.grpc.v1.cri"]\n')


def test_the_runtime_spec_runs_kinds_hook_and_sets_no_rlimits():
    spec = json.loads(base.base_runtime_spec(json.dumps(
        {"process": {"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]},
         "hooks": {"createContainer": [{"path": "/x"}]}})))
    assert "rlimits" not in spec["process"]
    assert spec["hooks"]["createContainer"] == [{"path": "/x"},
                                                {"path": "/kind/bin/mount-product-files.sh"}]


def test_an_image_archive_names_its_tag_and_is_reproducible(tmp_path):
    binary = tmp_path / "kube-apiserver"
    binary.write_bytes(b"\x7fELF...")
    image = archive.Image("registry.k8s.io/kube-apiserver:v1.34.4",
                          (archive.Entry("/usr/local/bin/kube-apiserver", binary),
                           archive.Entry("/bin/sh", link="/usr/local/bin/kube-apiserver")),
                          entrypoint=("/usr/local/bin/kube-apiserver",))
    first = archive.write(image, tmp_path / "a.tar")
    assert archive.write(image, tmp_path / "b.tar") == first  # same inputs, same image
    assert archive.tags(tmp_path / "a.tar") == ["registry.k8s.io/kube-apiserver:v1.34.4"]
    with tarfile.open(tmp_path / "a.tar") as tar:
        manifest = json.load(tar.extractfile("manifest.json"))[0]
        settings = json.load(tar.extractfile(manifest["Config"]))
        with tarfile.open(fileobj=tar.extractfile(manifest["Layers"][0])) as layer:
            names = {m.name: m for m in layer.getmembers()}
    assert settings["config"]["Entrypoint"] == ["/usr/local/bin/kube-apiserver"]
    assert settings["config"]["Env"] == [f"PATH={archive.PATH}"]
    assert names["usr/local/bin/kube-apiserver"].mode == 0o755
    assert names["bin/sh"].issym() and {"usr", "usr/local", "usr/local/bin"} <= set(names)


def test_images_are_tagged_as_kubeadm_and_containerd_ask_for_them(tmp_path):
    from aftershock.containers.images import preloaded as images

    kube = tmp_path / "k8s"
    constants = kube / "cmd" / "kubeadm" / "app" / "constants"
    constants.mkdir(parents=True)
    (constants / "constants.go").write_text(
        'const (\n\tDefaultEtcdVersion = "3.6.5-0"\n\tCoreDNSVersion = "v1.12.1"\n'
        '\tPauseVersion = "3.10.1"\n)\n')
    binaries = tmp_path / "bin"
    binaries.mkdir()
    for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
                 "kubectl", "etcd", "coredns", "pause"):
        (binaries / name).write_bytes(b"x")
    rootfs = tmp_path / "net.tar"
    with tarfile.open(rootfs, "w"):
        pass
    planned = images.plan("1.34.4", binaries, binaries, kube, rootfs, binaries / "pause")
    tags = {image.tag for image in planned} | {a for image in planned for a in image.aliases}
    assert {"registry.k8s.io/kube-apiserver:v1.34.4", "registry.k8s.io/kube-proxy:v1.34.4",
            "registry.k8s.io/etcd:3.6.5-0", "registry.k8s.io/coredns/coredns:v1.12.1",
            "registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10.1",
            images.LISTENER_TAG} <= tags
    assert planned[-1].tag.startswith(images.ROUTES_TAG)  # the build reads the CNI's from it
    routes = next(image.tag for image in planned if image.tag.startswith(images.ROUTES_TAG))
    manifest = images.cni_manifest(routes)
    assert f"image: {routes}" in manifest and "would you kindly patch this file" in manifest


def test_kinds_files_get_its_modes_and_the_binaries_are_where_kind_looks(tmp_path):
    module = tmp_path / "kind"
    files = module / "images" / "base" / "files"
    for relative in ("usr/local/bin/entrypoint", "kind/bin/mount-product-files.sh",
                     "etc/containerd/config.toml", "etc/systemd/system/kubelet.service"):
        (files / relative).parent.mkdir(parents=True, exist_ok=True)
        (files / relative).write_text("x")
        (files / relative).chmod(0o444)  # as the module cache holds them
    root = tmp_path / "root"
    base.copy_kind_files(module, root)
    assert (root / "usr/local/bin/entrypoint").stat().st_mode & 0o777 == 0o755
    assert (root / "kind/bin/mount-product-files.sh").stat().st_mode & 0o777 == 0o755
    assert (root / "etc/containerd/config.toml").stat().st_mode & 0o777 == 0o644
    base.link_debian_binaries(root)
    assert str((root / "opt/cni/bin/ptp").readlink()) == "/usr/lib/cni/ptp"
    built = tmp_path / "built"
    built.mkdir()
    for name in containerd.BINARIES:
        (built / name).write_text(name)
    base.install_containerd(built, root)
    installed = root / "usr/local/bin/containerd-shim-runc-v2"
    assert installed.read_text() == "containerd-shim-runc-v2"
    assert installed.stat().st_mode & 0o777 == 0o755


def test_the_node_runs_kinds_containerd_built_here_not_debians(monkeypatch):
    """bookworm's containerd 1.6 ignores CDI specs (D8's driver half could never fail)."""
    assert "containerd" not in base.PACKAGES
    assert int(containerd.version().split(".")[0]) >= 2
    before = base.key("v0.33.0")
    monkeypatch.setattr(containerd, "version", lambda: "2.9.9")
    assert base.key("v0.33.0") != before  # another containerd is another base image


def test_units_that_make_no_sense_in_a_node_are_removed(tmp_path):
    root = tmp_path
    system = root / "lib/systemd/system"
    for unit in ("multi-user.target.wants/getty.target",
                 "sockets.target.wants/systemd-udevd.socket",
                 "sockets.target.wants/systemd-journald.socket",
                 "sysinit.target.wants/systemd-tmpfiles-setup.service"):
        (system / unit).parent.mkdir(parents=True, exist_ok=True)
        (system / unit).write_text("")
    (root / "etc/systemd").mkdir(parents=True)
    (root / "etc/systemd/journald.conf").write_text("[Journal]\n")
    (root / "sbin").mkdir()
    base.trim_systemd(root)
    left = sorted(str(p.relative_to(system)) for p in system.rglob("*") if p.is_file())
    assert left == ["sockets.target.wants/systemd-journald.socket"]
    assert (root / "etc/systemd/journald.conf").read_text().endswith("ReadKMsg=no\n")
    assert str((root / "sbin/init").readlink()) == "/usr/lib/systemd/systemd"


def test_chaos_mesh_is_rendered_with_our_images_and_the_nodes_containerd():
    from aftershock.containers.images import chaosmesh

    settings = chaosmesh.values("1.34.4")
    assert "images.registry=aftershock.local" in settings and "--kube-version" in settings
    assert f"images.tag={chaosmesh.version()}" in settings
    assert chaosmesh.image_tag() == f"aftershock.local/chaos-mesh:{chaosmesh.version()}"
    assert chaosmesh.daemon_tag() == f"aftershock.local/chaos-daemon:{chaosmesh.version()}"
    assert {"chaosDaemon.runtime=containerd", "chaosDaemon.imagePullPolicy=Never",
            f"chaosDaemon.socketPath={chaosmesh.RUNTIME_SOCKET}",
            "chaosDaemon.mtls.enabled=false"} <= set(settings)


def test_the_daemons_modules_mount_is_created_on_a_host_without_modules():
    from aftershock.containers.images import chaosmesh

    daemonset = {"kind": "DaemonSet", "spec": {"template": {"spec": {"volumes": [
        {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}},
        {"name": "sys-path", "hostPath": {"path": "/sys"}},
        {"name": "socket-path", "hostPath": {"path": "/run/containerd", "type": "Directory"}}]}}}}
    chaosmesh.host_paths(daemonset)
    volumes = {v["name"]: v["hostPath"] for v in daemonset["spec"]["template"]["spec"]["volumes"]}
    assert volumes["lib-modules"]["type"] == "DirectoryOrCreate"
    assert "type" not in volumes["sys-path"] and volumes["socket-path"]["type"] == "Directory"


def test_the_daemon_image_carries_our_nsexec_and_legacy_iptables(tmp_path):
    from aftershock.containers.images import chaosmesh

    (tmp_path / "chaos-daemon").write_bytes(b"x")
    image = chaosmesh.daemon_image(tmp_path, tmp_path / "rootfs.tar")
    entries = {entry.dest: entry for entry in image.entries}
    assert image.tag == chaosmesh.daemon_tag() and image.base == tmp_path / "rootfs.tar"
    assert entries["/usr/local/bin/chaos-daemon"].source == tmp_path / "chaos-daemon"
    assert entries["/usr/local/bin/nsexec"].data.startswith(b"#!/bin/bash")
    assert entries["/usr/sbin/iptables"].link == "xtables-legacy-multi"


def test_a_chaos_mesh_build_without_the_daemon_is_not_taken_as_built(tmp_path):
    from aftershock.containers.images import chaosmesh

    (tmp_path / "manifest.json").write_text("{}")
    for name in ("chaos-controller-manager", "helm"):
        (tmp_path / name).write_bytes(b"x")
    assert not chaosmesh.built(tmp_path)  # an older build, from before the daemon
    (tmp_path / "chaos-daemon").write_bytes(b"x")
    assert chaosmesh.built(tmp_path)


def test_the_listener_says_what_it_sees_answers_on_its_port_and_ends_on_sigterm(tmp_path):
    import signal
    import socket
    import subprocess

    from aftershock.containers.images import preloaded as images

    binary = images.listener(tmp_path)
    assert images.listener(tmp_path) == binary  # cached by its source
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(binary), str(port)], stdout=subprocess.PIPE, text=True,
                              env={"GPU_DEVICE_0": "gpu-0", "PATH": "/usr/bin"})
    try:
        said = [server.stdout.readline().strip() for _ in range(3)]
        assert said[:2] == ["aftershock-sees env GPU_DEVICE_0=gpu-0",
                            "aftershock-sees env PATH=/usr/bin"]
        lines = [said[2]]
        while not lines[-1].startswith("listening"):
            lines.append(server.stdout.readline().strip())
        assert lines[-2:] == ["aftershock-sees end", f"listening on port {port}"]
        assert "aftershock-sees dev null" in lines  # /dev, entry by entry
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            assert client.recv(16) == b"ok\n"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=5) == 0
    finally:
        server.kill()
        server.stdout.close()


def test_network_chaos_crds_keep_the_field_the_controllers_api_defaults():
    """Without `partitionBehavior` in the CRD the API server prunes what the mutating webhook
    set, every update reads as a changed spec, and no NetworkChaos is ever injected."""
    from aftershock.containers.images import chaosmesh

    network_spec = {"type": "object", "properties": {
        "action": {"type": "string", "enum": ["delay", "partition"]},
        "direction": {"type": "string"}, "target": {"type": "object"}}}
    crd = {"kind": "CustomResourceDefinition", "spec": {"versions": [{"schema": {
        "openAPIV3Schema": {"type": "object", "properties": {
            "spec": network_spec,
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}}]}}
    schedule_spec = {"type": "object", "properties": {"networkChaos": {**network_spec}}}
    rules = {"type": "object", "properties": {"name": {}, "ipsets": {}, "direction": {}}}
    assert chaosmesh.with_newer_fields(crd) == 1
    assert network_spec["properties"]["partitionBehavior"] == {
        "type": "string", "enum": ["drop", "reject"], "default": "drop"}
    assert "partitionBehavior" not in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
        "properties"]["status"]["properties"]
    assert chaosmesh.with_newer_fields(crd) == 0  # once only
    assert chaosmesh.with_newer_fields({"spec": schedule_spec}) == 0  # same dict, done above
    assert chaosmesh.with_newer_fields({"spec": rules}) == 1
    assert "default" not in rules["properties"]["partitionBehavior"]


def test_the_python_base_is_built_for_its_own_python_and_only_when_asked_for(tmp_path):
    from aftershock.containers.images import python_base

    assert python_base.platforms("x86_64")[0] == "manylinux_2_36_x86_64"
    assert {"manylinux_2_17_x86_64", "manylinux2014_x86_64"} <= set(
        python_base.platforms("x86_64"))  # pip implies no older glibc: each is named
    command = python_base.pip_command(tmp_path / "site")
    assert command[command.index("--python-version") + 1] == "3.11"
    assert command[command.index("--target") + 1] == str(tmp_path / "site")
    assert any(word.startswith("kubernetes==") for word in command)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"# FROM {python_base.TAG}\nfrom {python_base.TAG} AS run\n")
    assert python_base.needed_by(dockerfile)
    dockerfile.write_text(f"FROM python:3.11-slim\n# {python_base.TAG}\n")
    assert not python_base.needed_by(dockerfile)


def test_the_images_aftershock_builds_for_kind_need_no_registry():
    from pathlib import Path

    from aftershock.containers.images import python_base
    from aftershock.faults.watchdelay import sidecar as sidecar_delay

    repo = Path(__file__).resolve().parents[2]
    for dockerfile in (sidecar_delay.DOCKERFILE, repo / "implementations" / "Dockerfile"):
        froms = [line.split()[1] for line in dockerfile.read_text().splitlines()
                 if line.upper().startswith("FROM ")]
        assert froms == [python_base.TAG], dockerfile
