"""The pure parts of building a kind node image here: the image archives written without an
engine, and the changes made to kind's containerd config and runtime spec."""

from __future__ import annotations

import json
import tarfile

import pytest

from aftershock.errors import UserError
from aftershock.kindimage import archive, base

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
    from aftershock.kindimage import images

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
    planned = images.plan("1.34.4", binaries, binaries, kube, rootfs)
    tags = {image.tag for image in planned} | {a for image in planned for a in image.aliases}
    assert {"registry.k8s.io/kube-apiserver:v1.34.4", "registry.k8s.io/kube-proxy:v1.34.4",
            "registry.k8s.io/etcd:3.6.5-0", "registry.k8s.io/coredns/coredns:v1.12.1",
            "registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10.1"} <= tags
    routes = next(image.tag for image in planned if image.tag.startswith(images.ROUTES_TAG))
    manifest = images.cni_manifest(routes)
    assert f"image: {routes}" in manifest and "would you kindly patch this file" in manifest


def test_kinds_files_get_its_modes_and_debians_binaries_are_where_kind_looks(tmp_path):
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
    assert str((root / "usr/local/bin/containerd").readlink()) == "/usr/bin/containerd"
    assert str((root / "opt/cni/bin/ptp").readlink()) == "/usr/lib/cni/ptp"


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


def test_chaos_mesh_is_rendered_without_its_daemon_and_with_our_image():
    from aftershock.kindimage import chaosmesh

    assert chaosmesh._daemon({"kind": "DaemonSet", "metadata": {"name": "chaos-daemon"}})
    assert chaosmesh._daemon({"kind": "Service", "metadata": {"name": "chaos-daemon"}})
    assert not chaosmesh._daemon({"kind": "Deployment",
                                  "metadata": {"name": "chaos-controller-manager"}})
    settings = chaosmesh.values("1.34.4")
    assert "images.registry=aftershock.local" in settings and "--kube-version" in settings
    assert f"images.tag={chaosmesh.version()}" in settings
    assert chaosmesh.image_tag() == f"aftershock.local/chaos-mesh:{chaosmesh.version()}"
