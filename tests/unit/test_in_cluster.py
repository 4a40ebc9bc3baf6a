"""An implementation installed in the cluster: the exact helm and build commands, its
manifests' placeholders, when its Deployment counts as rolled out, and where it may run."""

import json
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes.client.exceptions import ApiException

from aftershock.bdd.steps.implementation import runs_in_cluster
from aftershock.errors import UserError
from aftershock.kube.manifests import rolled_out, settled
from aftershock.machine.capabilities import Capability, MissingCapability
from aftershock.profile.load import Helm, load_profile
from aftershock.pytest_plugin import _cannot_install
from aftershock.sut import in_cluster
from aftershock.sut.in_cluster import (
    build_command,
    helm_install,
    helm_uninstall,
    rendered_manifests,
    top_owner,
)

PROFILE = """name: demo
install_in_cluster:
  image: acme/demo:dev
  build: {context: images/demo}
  manifests: [deploy.yaml]
  deployment: demo
concepts: {}
"""
DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: demo}
spec:
  template:
    spec:
      serviceAccountName: "{service_account}"
      containers:
      - {name: manager, image: "{image}", args: ["--namespace={namespace}", --price=$5, "{other}"]}
---
"""


@pytest.fixture
def profile(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "deploy.yaml").write_text(DEPLOY)  # paths: from the profile file
    path = tmp_path / "profiles" / "demo.yaml"
    path.write_text(PROFILE)
    return load_profile(path)


def test_helm_installs_the_chart_into_the_scenario_namespace_and_waits(tmp_path):
    """Through the door (aftershock.kube.door.helm): a helm that prints the arguments it was run
    with shows the exact command."""
    helm = tmp_path / "helm"
    helm.write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")
    helm.chmod(0o755)
    chart = Helm(chart="demo", repo="https://charts.example.com", version="1.2.3",
                 values=("v.yaml",), settings={"image": "acme/demo:dev"})
    assert helm_install(str(helm), chart, "demo", "demo", "ns-1", Path("/k/kubeconfig"),
                        "kind-as-1", [Path("/r/v.yaml")], {"image": "acme/demo:dev"},
                        120).split("\n")[:-1] == [
        "upgrade", "--install", "demo", "demo", "--namespace", "ns-1",
        "--kubeconfig", "/k/kubeconfig", "--kube-context", "kind-as-1", "--wait",
        "--timeout", "120s", "--repo", "https://charts.example.com", "--version", "1.2.3",
        "--values", "/r/v.yaml", "--set", "image=acme/demo:dev"]
    assert helm_uninstall(str(helm), "demo", "ns-1", Path("/k/kubeconfig"), "kind-as-1",
                          missing_ok=False).split("\n")[:-1] == [
        "uninstall", "demo", "--namespace", "ns-1", "--kubeconfig", "/k/kubeconfig",
        "--kube-context", "kind-as-1", "--wait"]


def test_the_image_is_built_from_the_profiles_context(profile, tmp_path):
    context = tmp_path / "profiles" / "images" / "demo"
    assert build_command(profile, "docker") == [
        "docker", "build", "--tag", "acme/demo:dev", "--file", str(context / "Dockerfile"),
        str(context)]


def test_manifests_get_the_namespace_image_and_service_account(profile):
    (deployment,) = rendered_manifests(profile, "ns-1")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "implementation"
    assert pod["containers"][0]["image"] == "acme/demo:dev"
    assert pod["containers"][0]["args"] == ["--namespace=ns-1", "--price=$5", "{other}"], \
        "a literal $ and a placeholder the harness does not fill stay as written"


@pytest.mark.parametrize(("status", "generation", "done"), [
    ({"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1},
     2, True),
    ({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1},
     2, False),
    ({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1, "availableReplicas": 2},
     2, False),
    ({"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1}, 2, False),
])
def test_a_deployment_is_rolled_out_when_every_replica_is_new_and_available(status, generation,
                                                                            done):
    deployment = {"metadata": {"generation": generation}, "spec": {"replicas": 1},
                  "status": status}
    assert rolled_out(deployment) is done
    assert rolled_out({"metadata": {"generation": 3}, "spec": {"replicas": 0},
                       "status": {"observedGeneration": 3}})


def test_a_rollout_counts_only_once_no_old_pod_is_left_running():
    """A terminating pod still runs the old implementation (as PID 1 it may ignore SIGTERM for
    its grace period): on kind the undelayed one made the replica group's pods while the
    delayed one started, and the faulty operator's R1 violation went unseen."""
    new = {"metadata": {"name": "op-new"}}
    old = {"metadata": {"name": "op-old", "deletionTimestamp": "2026-11-25T12:00:00Z"}}
    assert settled([new], 1)
    assert not settled([new, old], 1)  # the Deployment already says rolled out here
    assert not settled([old], 0)  # stopped only once its last pod is gone
    assert settled([], 0)
    assert not settled([], 1)


def _scenario(provider, capabilities):
    info = SimpleNamespace(provider=provider)
    return SimpleNamespace(cluster=SimpleNamespace(info=info, capabilities=capabilities))


def test_an_in_cluster_only_profile_is_skipped_where_no_image_can_be_loaded(profile):
    with pytest.raises(MissingCapability) as caught:
        runs_in_cluster(_scenario("local", frozenset()), profile)
    assert caught.value.capability == Capability.LOAD_IMAGE
    expected = ("provider 'local' lacks capability 'load_image': profile demo installs its "
                "implementation in the cluster only (install_in_cluster); run it with "
                "--cluster=kind")
    assert str(caught.value) == expected
    assert _cannot_install(profile, "local") == expected
    assert _cannot_install(profile, "kind") is None
    assert runs_in_cluster(_scenario("kind", frozenset({Capability.LOAD_IMAGE})), profile)


def test_a_profile_with_both_forms_runs_as_a_process_where_no_image_can_be_loaded(profile):
    both = SimpleNamespace(in_cluster=profile.in_cluster, start=object(), name="both",
                           in_cluster_only=False)
    assert not runs_in_cluster(_scenario("local", frozenset()), both)
    assert runs_in_cluster(_scenario("kind", frozenset({Capability.LOAD_IMAGE})), both)
    assert _cannot_install(both, "local") is None
    process_only = SimpleNamespace(in_cluster=None, start=object())
    assert not runs_in_cluster(_scenario("kind", frozenset({Capability.LOAD_IMAGE})),
                               process_only)


class _Owners:
    """A dynamic client that knows a few objects by (kind, name)."""

    def __init__(self, objects):
        self.objects = objects
        self.resources = self

    def get(self, api_version=None, kind=None, name=None, namespace=None):
        if name is None:
            return SimpleNamespace(get=lambda name, namespace: self.get(api_version, kind, name))
        if (kind, name) not in self.objects:
            raise ApiException(status=404)
        return SimpleNamespace(to_dict=lambda: self.objects[(kind, name)])


def _ref(kind, name, api_version="apps/v1"):
    return {"apiVersion": api_version, "kind": kind, "name": name, "controller": True}


def test_a_node_agent_removes_what_made_the_scenarios_pods_not_only_the_pods():
    """A pod's ReplicaSet's Deployment goes, or the Deployment makes new pods while the agent
    is gone; a bare pod is its own owner; a chain that loops or breaks ends."""
    dynamic = _Owners({
        ("ReplicaSet", "web-1"): {"metadata": {"name": "web-1",
                                               "ownerReferences": [_ref("Deployment", "web")]}},
        ("Deployment", "web"): {"metadata": {"name": "web"}},
        ("ReplicaSet", "a"): {"metadata": {"name": "a", "ownerReferences": [_ref("ReplicaSet",
                                                                                 "a")]}},
    })
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web-1-x", "ownerReferences": [_ref("ReplicaSet", "web-1")]}}
    assert top_owner(dynamic, "ns", pod) == ("apps/v1", "Deployment", "web")
    assert top_owner(dynamic, "ns", {"metadata": {"name": "solo"}}) == ("v1", "Pod", "solo")
    gone = {"metadata": {"name": "p", "ownerReferences": [_ref("ReplicaSet", "gone")]}}
    assert top_owner(dynamic, "ns", gone) == ("apps/v1", "ReplicaSet", "gone")
    looping = {"metadata": {"name": "p", "ownerReferences": [_ref("ReplicaSet", "a")]}}
    assert top_owner(dynamic, "ns", looping) == ("apps/v1", "ReplicaSet", "a")


def test_a_built_program_goes_alone_into_an_image_written_here_and_loaded(tmp_path,
                                                                          monkeypatch):
    """build.program: no Dockerfile and no engine build; the archive kind loads holds the
    program at the path given."""
    program = tmp_path / "agent"
    program.write_bytes(b"\x7fELF built")
    (tmp_path / "p.yaml").write_text(
        "name: agent\nbuild: {go: example.com/agent/cmd/agent@v1.0.0}\ninstall_in_cluster:\n"
        "  image: acme/agent:v1\n  build: {program: /usr/bin/agent}\n  manifests: [ds.yaml]\n"
        "  daemonset: agent\nconcepts: {}\n")
    (tmp_path / "ds.yaml").write_text("kind: DaemonSet\n")
    monkeypatch.setattr(in_cluster.gobuild, "ensure", lambda build: program)
    loaded = []

    def load(path):
        with tarfile.open(path) as outer:
            layer = next(m for m in outer.getmembers() if m.name.endswith(".tar"))
            with tarfile.open(fileobj=outer.extractfile(layer)) as files:
                loaded.append(files.extractfile("usr/bin/agent").read())
            loaded.append(json.loads(outer.extractfile("manifest.json").read())[0]["RepoTags"])

    cluster = SimpleNamespace(load_image_archive=load,
                              load_image=lambda image: pytest.fail("no engine image"))
    implementation = in_cluster.InClusterImplementation(
        load_profile(tmp_path / "p.yaml"), cluster, None, "ns", tmp_path / "work")
    implementation._load_image()
    assert loaded == [b"\x7fELF built", ["acme/agent:v1"]]
    assert implementation.spec.workload == ("DaemonSet", "agent")


def test_more_images_are_each_one_program_built_here_with_its_entrypoint(tmp_path, monkeypatch):
    """install_in_cluster.images: AIStore's aisnode and ais-init beside the operator's image,
    each its own Go program alone in an image the cluster loads (and serves to pulls)."""
    (tmp_path / "p.yaml").write_text(
        "name: op\nbuild: {go: example.com/op/cmd/op@v1.0.0}\ninstall_in_cluster:\n"
        "  image: acme/op:v1\n  build: {program: /manager}\n  manifests: [d.yaml]\n"
        "  deployment: op\n  images:\n"
        "    - {image: acme/node:v1, go: example.com/node/cmd/node@v1.4.9,\n"
        "       program: /usr/bin/node}\n"
        "    - {image: acme/init:v1, go: example.com/node/cmd/init@v1.4.9,\n"
        "       program: /usr/bin/init, entrypoint: [init]}\nconcepts: {}\n")
    (tmp_path / "d.yaml").write_text("kind: Deployment\n")
    built = {}

    def ensure(build):
        built[build.binary] = tmp_path / build.binary
        built[build.binary].write_bytes(build.binary.encode())
        return built[build.binary]

    monkeypatch.setattr(in_cluster.gobuild, "ensure", ensure)
    loaded = {}

    def load(path):
        with tarfile.open(path) as outer:
            manifest = json.loads(outer.extractfile("manifest.json").read())[0]
            config = json.loads(outer.extractfile(manifest["Config"]).read())
            loaded[manifest["RepoTags"][0]] = config["config"].get("Entrypoint")

    implementation = in_cluster.InClusterImplementation(
        load_profile(tmp_path / "p.yaml"), SimpleNamespace(load_image_archive=load), None,
        "ns", tmp_path / "work")
    implementation._load_image()
    assert loaded == {"acme/node:v1": None, "acme/init:v1": ["init"], "acme/op:v1": None}
    assert sorted(built) == ["init", "node", "op"]


@pytest.mark.parametrize("image, why", [
    ("{image: a/b:c, go: not-pinned, program: /x}", "is not a pinned Go package"),
    ("{image: a/b:c, go: example.com/x/cmd/x@v1.0.0, program: x}", "must be an absolute path"),
])
def test_a_bad_extra_image_is_one_clear_line_naming_where(tmp_path, image, why):
    path = tmp_path / "p.yaml"
    path.write_text("name: op\ninstall_in_cluster:\n  image: acme/op:v1\n  manifests: [d.yaml]\n"
                    f"  deployment: op\n  images:\n    - {image}\nconcepts: {{}}\n")
    (tmp_path / "d.yaml").write_text("kind: Deployment\n")
    with pytest.raises(UserError) as raised:
        load_profile(path)
    assert why in str(raised.value) and "p.yaml:7" in str(raised.value)


def test_the_serving_key_pair_is_a_tls_secret_and_its_ca_the_bundle(tmp_path, monkeypatch):
    (tmp_path / "p.yaml").write_text(
        "name: op\ninstall_in_cluster:\n  image: acme/op:v1\n  manifests: [d.yaml]\n"
        "  deployment: op\n  serving_certificate: op-webhook\nconcepts: {}\n")
    (tmp_path / "d.yaml").write_text("kind: Deployment\n")
    made = []
    monkeypatch.setattr(in_cluster.door, "call", lambda method, namespace, body: made.append(
        (namespace, body)))
    work = tmp_path / "work"
    work.mkdir()
    implementation = in_cluster.InClusterImplementation(
        load_profile(tmp_path / "p.yaml"), SimpleNamespace(), None, "ns", work)
    bundle = implementation._serving_certificate()
    [(namespace, secret)] = made
    assert namespace == "ns" and secret["type"] == "kubernetes.io/tls"
    assert secret["metadata"]["name"] == "op-webhook"
    assert sorted(secret["data"]) == ["ca.crt", "tls.crt", "tls.key"]
    assert secret["data"]["ca.crt"] == bundle
    assert list(work.iterdir()) == [], "the key pair is not left on disk"


def test_what_the_workloads_log_on_the_nodes_is_saved_with_its_log(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "name: op\ninstall_in_cluster:\n  image: acme/op:v1\n  manifests: [d.yaml]\n"
        "  deployment: op\n  node_logs: ais-logs\nconcepts: {}\n")
    (tmp_path / "d.yaml").write_text("kind: Deployment\n")
    node_data = tmp_path / "node-data"
    (node_data / "node-1" / "ais-logs" / "ns" / "t-0").mkdir(parents=True)
    (node_data / "node-1" / "ais-logs" / "ns" / "t-0" / "aistarget.INFO").write_text("I up\n")
    (node_data / "node-1" / "ais-logs" / "earlier-ns" / "t-0").mkdir(parents=True)
    (node_data / "node-2").mkdir()
    cluster = SimpleNamespace(paths=SimpleNamespace(host=SimpleNamespace(node_data=node_data)))
    implementation = in_cluster.InClusterImplementation(
        load_profile(tmp_path / "p.yaml"), cluster, None, "ns", tmp_path / "work")
    implementation.save_node_logs()
    saved = tmp_path / "work" / "node-logs" / "node-1" / "ns" / "t-0" / "aistarget.INFO"
    assert saved.read_text() == "I up\n"
    assert not (tmp_path / "work" / "node-logs" / "node-2").exists()
    assert not (tmp_path / "work" / "node-logs" / "node-1" / "earlier-ns").exists(), \
        "an earlier scenario's namespace on a reused cluster is not this run's"
