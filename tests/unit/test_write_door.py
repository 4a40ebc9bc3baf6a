"""Every write the harness makes goes through one door (aftershock/kube/door.py, and
aftershock/kube/writes.py for resources named by kind): sent with fieldValidation=Strict where
it applies, a refusal a harness error, a patch read back, and a delete of an object that is not
there a harness error unless the call says it may be gone. This fails on any write call anywhere
else: a typed client's create_*, patch_*, replace_* or delete_* method, called or handed on; a
dynamic resource's create, patch, replace, delete or server-side apply, its body by keyword or
by position; a raw HTTP write; and a helm install, upgrade, uninstall or rollback written out.
The exceptions are EXCEPTIONS below, each with its reason (the README names them)."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import kubernetes.client
import pytest
from kubernetes.client.exceptions import ApiException

from aftershock.bdd.steps import workloads
from aftershock.kube import api as kube
from aftershock.kube import door
from aftershock.profile.load import Helm
from aftershock.sut.in_cluster import helm_install

PACKAGE = Path(__file__).resolve().parents[2] / "aftershock"
DOORS = {PACKAGE / "kube" / "door.py", PACKAGE / "kube" / "writes.py"}
# Every write method of the typed clients: the names the kubernetes client gives them.
CLIENT_WRITES = {name for api, cls in inspect.getmembers(kubernetes.client, inspect.isclass)
                 if api.endswith("Api") for name in dir(cls)
                 if re.match(r"(create|patch|replace|delete)_", name)}
# A dynamic resource's writes (resource.create(body=...), resource.delete(name=...), ...).
DYNAMIC_WRITES = {"create", "patch", "replace", "delete", "server_side_apply"}
HTTP_WRITES = {"POST", "PUT", "PATCH", "DELETE"}
HELM_WRITES = {"install", "upgrade", "uninstall", "rollback"}
# Receivers whose create/patch/replace write nothing to a cluster, and the doors themselves.
THROUGH = {"writes", "door"}
NOT_CLIENTS = {
    "pkimod": "machine/certificates.py's create() writes certificate files",
    "paths": "paths.patch() computes a JSON patch; writes.set_field sends it",
    "dataclasses": "dataclasses.replace() copies a dataclass",
}
# What writes around the door on purpose: (file, what) -> why.
EXCEPTIONS = {
    ("aftershock/providers/local_nodes.py", "POST"):
        "the embedded cluster's provider plays every node's kubelet: it registers the Node "
        "objects of its shape itself, over HTTPS with its admin certificate, as a kubelet does "
        "(an answer other than 2xx raises)",
    ("aftershock/providers/local_nodes.py", "PATCH"):
        "the same provider turns a node's kubelet off and on (its aftershock.io/kubelet label) "
        "and resets a node to its shape between scenarios",
    ("aftershock/providers/local_nodes.py", "DELETE"):
        "the same provider removes a node that joined, when it resets the nodes to the shape "
        "between scenarios",
    ("aftershock/timeline/recorder.py", "POST"):
        "a SelfSubjectReview asks the API who the recorder is: nothing is stored",
}


def _receiver(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _through_the_door(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and _receiver(call.func.value) in THROUGH


def _names_helm(node: ast.expr) -> bool:
    """A helm binary: "helm", ".../helm", a variable, attribute or call named for it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit("/", 1)[-1] == "helm"
    if isinstance(node, ast.Name):
        return "helm" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "helm" in node.attr.lower() or _names_helm(node.value)
    if isinstance(node, ast.Call):
        return _names_helm(node.func) or any(_names_helm(arg) for arg in node.args)
    if isinstance(node, ast.BinOp):
        return _names_helm(node.left) or _names_helm(node.right)
    return False


def _helm_write(items: list[ast.expr]) -> str | None:
    for first, second in itertools.pairwise(items):
        if (_names_helm(first) and isinstance(second, ast.Constant)
                and second.value in HELM_WRITES):
            return f"helm {second.value}"
    return None


def _is_str_replace(call: ast.Call) -> bool:
    """str.replace(old, new[, count]) (and os.replace(src, dst)): two or three positional
    arguments, no keyword but count. A dynamic resource's replace takes its body by keyword
    or alone, so a file is renamed here with os.replace, never Path.replace(target)."""
    return 2 <= len(call.args) <= 3 and all(k.arg == "count" for k in call.keywords)


def _findings(tree: ast.AST) -> list[tuple[int, str]]:
    handed_to_door = set()  # a typed method given to door.call / door.delete as a value
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _through_the_door(node):
            handed_to_door.update(id(arg) for arg in node.args)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in CLIENT_WRITES \
                and id(node) not in handed_to_door:
            found.append((node.lineno, node.attr))  # called here, or handed on to be called
        if isinstance(node, (ast.List, ast.Tuple)) and (helm := _helm_write(node.elts)):
            found.append((node.lineno, helm))
        if not isinstance(node, ast.Call) or _through_the_door(node):
            continue
        if helm := _helm_write(node.args):
            found.append((node.lineno, helm))
        methods = [a.value for a in node.args[:1] if isinstance(a, ast.Constant)]
        methods += [k.value.value for k in node.keywords
                    if k.arg == "method" and isinstance(k.value, ast.Constant)]
        found += [(node.lineno, method) for method in methods if method in HTTP_WRITES]
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in DYNAMIC_WRITES:
            continue
        if _receiver(func.value) in NOT_CLIENTS:
            continue
        if func.attr == "replace" and _is_str_replace(node):
            continue
        found.append((node.lineno, func.attr))
    return sorted(found)


def writes_outside_the_door() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in DOORS:
            continue
        where = str(path.relative_to(PACKAGE.parent))
        for line, what in _findings(ast.parse(path.read_text())):
            if (where, what) not in EXCEPTIONS:
                found.append(f"{where}:{line}: {what}")
    return found


def exceptions_in_use() -> set[tuple[str, str]]:
    used = set()
    for where, _ in EXCEPTIONS:
        tree = ast.parse((PACKAGE.parent / where).read_text())
        used.update((where, what) for _, what in _findings(tree))
    return used & set(EXCEPTIONS)


def test_no_write_goes_around_the_door():
    assert writes_outside_the_door() == []


def test_every_exception_is_still_needed():
    """An exception nothing uses any more goes from the list (and from the README)."""
    assert exceptions_in_use() == set(EXCEPTIONS)


def _scan(tmp_path, monkeypatch, source: str) -> list[str]:
    (tmp_path / "aftershock").mkdir()
    (tmp_path / "aftershock" / "rogue.py").write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "aftershock")
    monkeypatch.setattr(sys.modules[__name__], "DOORS", set())
    return writes_outside_the_door()


def test_the_scan_finds_a_write_around_the_door(tmp_path, monkeypatch):
    """The test above can fail: a module that patches a node directly is found."""
    assert _scan(tmp_path, monkeypatch, (
        "def cordon(core):\n    core.patch_node('n1', {'spec': {'unschedulable': True}})\n"
    )) == ["aftershock/rogue.py:2: patch_node"]


def test_the_scan_finds_a_delete_around_the_door(tmp_path, monkeypatch):
    """A typed delete, one handed on to be called later, and a dynamic resource's delete."""
    assert _scan(tmp_path, monkeypatch, (
        "def gone(core, rbac, resource):\n"
        "    core.delete_namespaced_pod('p', 'ns')\n"
        "    for delete in (rbac.delete_cluster_role,):\n"
        "        delete('r')\n"
        "    resource.delete(name='x', namespace='ns')\n"
        "    door.delete(core.delete_node, 'n1')\n"  # through the door: not found
    )) == ["aftershock/rogue.py:2: delete_namespaced_pod",
           "aftershock/rogue.py:3: delete_cluster_role",
           "aftershock/rogue.py:5: delete"]


def test_the_scan_finds_a_body_given_by_position(tmp_path, monkeypatch):
    """A dynamic resource's write with its body by position, told from str.replace and
    dataclasses.replace."""
    assert _scan(tmp_path, monkeypatch, (
        "def make(resource, doc, text, spec):\n"
        "    resource.create(doc, 'ns')\n"
        "    resource.replace(doc)\n"
        "    resource.patch(doc, name='x')\n"
        "    text.replace('a', 'b')\n"
        "    dataclasses.replace(spec, name='n')\n"
    )) == ["aftershock/rogue.py:2: create", "aftershock/rogue.py:3: replace",
           "aftershock/rogue.py:4: patch"]


def test_the_scan_finds_a_helm_install_around_the_door(tmp_path, monkeypatch):
    assert _scan(tmp_path, monkeypatch, (
        "def install(cmd, helm, self):\n"
        "    cmd.run([helm, 'upgrade', '--install', 'demo', 'chart'])\n"
        "    subprocess.run(['/opt/bin/helm', 'uninstall', 'demo'])\n"
        "    cmd.run([str(self.helm_binary), 'install', 'demo', 'chart'])\n"
        "    cmd.run([helm, 'template', 'demo', 'chart'])\n"  # renders: writes nothing
        "    door.helm(helm, 'install', 'demo', 'chart', timeout=60)\n"
    )) == ["aftershock/rogue.py:2: helm upgrade", "aftershock/rogue.py:3: helm uninstall",
           "aftershock/rogue.py:4: helm install"]


def test_the_scan_finds_a_raw_http_write(tmp_path, monkeypatch):
    assert _scan(tmp_path, monkeypatch, (
        "def raw(self, urllib):\n"
        "    self._api('DELETE', '/api/v1/nodes/n1')\n"
        "    urllib.request.Request('https://api/x', method='PATCH')\n"
        "    self._api('GET', '/api/v1/nodes')\n"
    )) == ["aftershock/rogue.py:2: DELETE", "aftershock/rogue.py:3: PATCH"]


def test_every_call_is_strict_and_a_refusal_is_a_harness_error():
    sent = {}

    def create_namespaced_secret(namespace, body, **kwargs):
        sent.update(kwargs)
        raise ApiException(status=400, reason="BadRequest")
    with pytest.raises(door.HarnessWriteFailed, match="HTTP 400"):
        door.call(create_namespaced_secret, "ns", {"metadata": {"name": "s"}})
    assert sent == {"field_validation": "Strict"}


def test_a_patch_must_read_back():
    def patch_node(name, body, **kwargs):
        return {"metadata": {"name": name}, "spec": {}}  # the API dropped it
    with pytest.raises(door.HarnessWriteFailed, match=r"\.spec\.unschedulable"):
        door.call(patch_node, "n1", {"spec": {"unschedulable": True}})


class _Core:
    """A typed client whose objects are all gone."""

    def __init__(self):
        self.sent = []

    def delete_namespaced_pod(self, name, namespace, **kwargs):
        self.sent.append(kwargs)
        raise ApiException(status=404, reason="NotFound")

    def delete_node(self, name, **kwargs):
        raise ApiException(status=404, reason="NotFound")


def _raised(action, *args) -> Exception | None:
    """What ``action`` raised (which exception is the point), or None."""
    try:
        action(*args)
    except Exception as exc:
        return exc
    return None


def test_a_delete_step_on_an_object_not_there_is_a_harness_error_naming_it(monkeypatch):
    """`When I delete the pod web-0` whose pod is not there (a misnamed one): the scenario ends
    as a harness error naming it, never as if it had been deleted."""
    monkeypatch.setattr(kube, "core", lambda api: _Core())
    scenario = SimpleNamespace(namespace="ns-1", api=None,
                               timeline=SimpleNamespace(mark=lambda *a, **k: None))
    raised = _raised(workloads.delete, scenario, "pod", "web-0")
    assert isinstance(raised, door.HarnessWriteFailed) and "pod/ns-1/web-0" in str(raised), \
        f"a delete of pod/ns-1/web-0, not there, ended as {raised!r}"


def _door_delete():
    delete = getattr(door, "delete", None)
    assert callable(delete), "the door has no entry for deletes"
    return delete


def test_a_delete_says_when_gone_is_fine_and_sends_no_field_validation():
    delete, core = _door_delete(), _Core()
    with pytest.raises(door.HarnessWriteFailed, match=r"harness error: node/n1 to delete is "
                                                      r"not there"):
        delete(core.delete_node, "n1")
    assert delete(core.delete_namespaced_pod, "p", "ns", grace_period_seconds=0,
                  missing_ok=True) is None
    assert core.sent == [{"grace_period_seconds": 0}], "a DELETE takes no fieldValidation"
    with pytest.raises(TypeError, match=r"door\.delete"):
        door.call(core.delete_node, "n1")


def test_a_delete_names_what_it_deletes_as_kubectl_does():
    delete = _door_delete()

    def delete_namespaced_custom_object(group, version, namespace, plural, name, **kwargs):
        raise ApiException(status=404, reason="NotFound")

    def delete_collection_namespaced_pod(namespace, **kwargs):
        raise ApiException(status=404, reason="NotFound")
    with pytest.raises(door.HarnessWriteFailed, match=r"podchaos\.chaos-mesh\.org/ns/kill "):
        delete(delete_namespaced_custom_object, "chaos-mesh.org", "v1alpha1", "ns", "podchaos",
               "kill")
    with pytest.raises(door.HarnessWriteFailed, match="the pods of namespace/ns "):
        delete(delete_collection_namespaced_pod, "ns")
    with pytest.raises(door.HarnessWriteFailed, match="pod/ns/p "):
        delete(_Core().delete_namespaced_pod, "p", namespace="ns")

    def delete_cluster_role(name, **kwargs):
        raise ApiException(status=404, reason="NotFound")
    with pytest.raises(door.HarnessWriteFailed, match="clusterrole/ns-1-runner "):
        delete(delete_cluster_role, "ns-1-runner")


HELM = "#!/bin/sh\nprintf '%s\\n' \"$@\"\n{tail}"


def _fake_helm(tmp_path: Path, tail: str = "") -> str:
    helm = tmp_path / "helm"
    helm.write_text(HELM.format(tail=tail))
    helm.chmod(helm.stat().st_mode | stat.S_IXUSR)
    return str(helm)


def test_a_helm_write_that_fails_is_a_harness_error_naming_the_release(tmp_path):
    """helm installs through the door: a failure is a harness error naming the release."""
    helm = _fake_helm(tmp_path, "echo 'Error: INSTALLATION FAILED: unknown field' >&2\nexit 1\n")
    raised = _raised(helm_install, helm, Helm(chart="demo"), "demo", "demo", "ns-1",
                     tmp_path / "kubeconfig", "kind-as-1", [], {}, 60)
    assert isinstance(raised, door.HarnessWriteFailed) and \
        "helm release ns-1/demo" in str(raised) and "unknown field" in str(raised), \
        f"a helm install that failed ended as {raised!r}"


def test_helm_uninstall_of_a_release_not_there_and_unchecked_flags(tmp_path):
    helm_write = getattr(door, "helm", None)
    assert callable(helm_write), "the door has no entry for helm"
    gone = _fake_helm(tmp_path, "echo 'Error: uninstall: Release not loaded: demo: release: "
                                "not found' >&2\nexit 1\n")
    with pytest.raises(door.HarnessWriteFailed, match="helm release ns-1/demo to uninstall is "
                                                      "not there"):
        helm_write(gone, "uninstall", "demo", "--namespace", "ns-1", timeout=30)
    helm_write(gone, "uninstall", "demo", "--namespace", "ns-1", timeout=30, missing_ok=True)
    with pytest.raises(door.HarnessWriteFailed, match="would go unchecked"):
        helm_write(gone, "install", "demo", "chart", "--disable-openapi-validation",
                   timeout=30)


def test_what_reads_back():
    stored = {"status": {"conditions": [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-25T19:00:00+00:00"},
        {"type": "PodScheduled", "status": "True"}]}, "metadata": {"finalizers": ["a"]}}
    assert door.unmet({"status": {"conditions": [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-25T19:00:00Z"}]}},
        stored) is None  # a list element held by one stored element; times the server's
    assert door.unmet({"metadata": {"finalizers": None}}, stored) is None  # null removes
    assert door.unmet({"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
                      stored) == ".status.conditions[0]"
