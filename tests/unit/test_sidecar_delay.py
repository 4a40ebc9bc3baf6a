"""The watch delay of an in-cluster implementation: the proxy as a native sidecar in its pod,
built from the repo's watchdelay module, the implementation pointed at it through KUBECONFIG."""

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

from aftershock import __version__
from aftershock.faults.anchors import EventAnchor, KillAfterWrite, Miss, Stall, from_plain
from aftershock.faults.watchdelay import Rule
from aftershock.faults.watchdelay import main as entry
from aftershock.faults.watchdelay import sidecar as sd
from aftershock.machine import certificates as pki

RULES = [Rule(delay=5.0, resource="pods"),
         Rule(delay=1.5, resource="nodes", namespace="ns-1",
              types=frozenset({"MODIFIED", "ADDED"}), jitter=0.5, drop=False)]
TEMPLATE = {"metadata": {"labels": {"app": "demo"}}, "spec": {
    "serviceAccountName": "implementation",
    "containers": [
        {"name": "manager", "image": "acme/demo:dev",
         "env": [{"name": "KUBECONFIG", "value": "/old"}, {"name": "LEVEL", "value": "2"}]},
        {"name": "metrics", "image": "acme/metrics:1"}],
    "volumes": [{"name": "data", "emptyDir": {}}]}}


def test_the_pod_template_gains_the_sidecar_and_the_implementation_reads_its_kubeconfig():
    changed = sd.with_sidecar(TEMPLATE, RULES[:1])
    assert changed["spec"] == {
        "serviceAccountName": "implementation",
        "containers": [
            {"name": "manager", "image": "acme/demo:dev",
             "env": [{"name": "LEVEL", "value": "2"},
                     {"name": "KUBECONFIG", "value": "/etc/aftershock/watchdelay/kubeconfig"}],
             "volumeMounts": [{"name": "aftershock-watchdelay",
                               "mountPath": "/etc/aftershock/watchdelay", "readOnly": True}]},
            {"name": "metrics", "image": "acme/metrics:1"}],
        "volumes": [{"name": "data", "emptyDir": {}},
                    {"name": "aftershock-watchdelay",
                     "configMap": {"name": "aftershock-watchdelay"}}],
        "initContainers": [{
            "name": "aftershock-watchdelay", "image": f"aftershock/watchdelay:{__version__}",
            "imagePullPolicy": "IfNotPresent", "restartPolicy": "Always",
            "args": ["--port", "8001", "--rules",
                     '[{"delay": 5.0, "resource": "pods", "namespace": null, "types": null, '
                     '"jitter": 0.0, "drop": false}]'],
            "startupProbe": {"exec": {"command": [
                "python3", "-c",
                "import socket; socket.create_connection(('127.0.0.1', 8001), 1)"]},
                "periodSeconds": 1, "failureThreshold": 30}}]}
    assert TEMPLATE["spec"]["containers"][0]["env"][0]["value"] == "/old"  # a copy


def test_a_named_container_is_the_one_pointed_at_the_proxy():
    changed = sd.with_sidecar(TEMPLATE, RULES, container="metrics")
    manager, metrics = changed["spec"]["containers"]
    assert manager == TEMPLATE["spec"]["containers"][0]
    assert metrics["env"] == [{"name": "KUBECONFIG",
                               "value": "/etc/aftershock/watchdelay/kubeconfig"}]


def test_the_proxy_kubeconfig_is_plain_http_on_the_pods_loopback():
    config = yaml.safe_load(sd.configmap()["data"]["kubeconfig"])
    assert config["clusters"] == [{"name": "proxy",
                                   "cluster": {"server": "http://127.0.0.1:8001"}}]
    assert config["users"] == [{"name": "proxy", "user": {}}]
    assert sd.configmap()["metadata"] == {"name": "aftershock-watchdelay"}


def test_rules_travel_as_json_and_come_back_equal():
    assert entry.rules_from_json(entry.rules_to_json(RULES)) == RULES
    args = entry.arguments(["--port", "9000", "--rules", entry.rules_to_json(RULES)])
    assert args.port == 9000 and args.log == "/dev/stdout"


def test_upstream_is_the_apiserver_service_with_the_pods_token(tmp_path):
    ca = pki.create(tmp_path / "pki").ca_cert
    secrets = tmp_path / "sa"
    secrets.mkdir()
    (secrets / "ca.crt").write_bytes(ca.read_bytes())
    (secrets / "token").write_text("token-of-the-pod\n")
    upstream = entry.in_cluster_upstream(secrets, {"KUBERNETES_SERVICE_HOST": "10.96.0.1",
                                                   "KUBERNETES_SERVICE_PORT": "443"})
    assert (upstream.host, upstream.port, upstream.token) == ("10.96.0.1", 443,
                                                              "token-of-the-pod")


def test_the_image_is_built_from_the_package_with_its_dockerfile():
    package = Path(sd.__file__).resolve().parents[2]
    assert sd.build_command("docker") == [
        "docker", "build", "--tag", f"aftershock/watchdelay:{__version__}", "--file",
        str(package / "faults" / "data" / "watchdelay.Dockerfile"), str(package)]


def _aftershock_imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    return {node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.startswith("aftershock")}


def test_the_image_holds_every_module_the_sidecar_imports():
    package = Path(sd.__file__).resolve().parents[2]
    dockerfile = sd.DOCKERFILE.read_text()
    copied = {path for line in dockerfile.splitlines() if line.startswith("COPY ")
              for path in line.split()[1:-1]}
    needed, seen = ["aftershock.faults.watchdelay.main"], set()
    while needed:
        module = needed.pop()
        if module in seen:
            continue
        seen.add(module)
        relative = module.removeprefix("aftershock.").replace(".", "/")
        relative += "/__init__.py" if (package / relative).is_dir() else ".py"
        assert relative in copied, f"{relative} is imported by the sidecar but not copied"
        needed += _aftershock_imports(package / relative)
        parent = module.rpartition(".")[0]  # importing a module imports its packages first
        if parent != "aftershock":
            needed.append(parent)
    assert {"__init__.py", "faults/__init__.py", "faults/watchdelay/__init__.py"} <= copied
    assert re.search(r"^ENTRYPOINT .*aftershock\.faults\.watchdelay\.main", dockerfile, re.M)


def test_the_startup_probe_asks_the_pods_loopback_where_the_proxy_listens():
    """A tcpSocket probe goes to the pod's IP, where the proxy (loopback only) never answers:
    the sidecar restarted every 30 s and never started. The probe's own command, run here,
    succeeds only while something listens on the loopback port."""
    import socket
    import subprocess
    import sys

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        command = sd.sidecar(RULES, port=port)["startupProbe"]["exec"]["command"]
        assert "tcpSocket" not in sd.sidecar(RULES, port=port)["startupProbe"]
        run = [sys.executable, *command[1:]]
        assert subprocess.run(run, capture_output=True, timeout=10).returncode == 0
    assert subprocess.run(run, capture_output=True, timeout=10).returncode != 0


def test_anchored_faults_travel_to_the_sidecar_as_json_and_come_back_equal():
    faults = [Stall(EventAnchor("pods", "MODIFIED", 9, "ns"), 4.0),
              Miss(EventAnchor("replicagroups", "ADDED", 1, None), 3.0),
              KillAfterWrite(2, "create", "pods", "ns")]
    template = sd.with_sidecar(TEMPLATE, [], anchors=faults)
    args = template["spec"]["initContainers"][-1]["args"]
    plain = json.loads(args[args.index("--anchors") + 1])
    assert [from_plain(raw) for raw in plain] == faults
    assert entry.arguments(["--anchors", json.dumps(plain)]).anchors == json.dumps(plain)
    # observing only: no --anchors at all
    assert "--anchors" not in sd.with_sidecar(TEMPLATE, [])["spec"]["initContainers"][-1]["args"]
    with pytest.raises(ValueError, match="stall, miss or kill"):
        from_plain({"pause": {}})
