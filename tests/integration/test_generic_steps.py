"""A known Kubernetes bug written only with the steps for any resource: kubernetes/kubernetes
#132334 (a ResourceClaim deleted while kube-controller-manager was down is never cleaned up)
fails on 1.33.0 and passes on 1.34.4, on the embedded cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from aftershock.go import toolchain

REPO = Path(__file__).resolve().parents[2]
FEATURE = "features/kubernetes/claim_cleanup_on_startup.feature"
pytestmark = pytest.mark.cluster


def _run(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    run = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", FEATURE, "-p", "no:cacheprovider",
         "--run-dir", str(run), *options], capture_output=True, text=True, cwd=REPO,
        timeout=900)
    verdicts = {}
    for path in run.glob("*/judgements.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            verdicts[record["step"].split(" ", 1)[1]] = (record["status"], record["summary"])
    return result, verdicts


def test_a_claim_deleted_while_the_controller_manager_was_down_goes_when_it_starts(tmp_path):
    result, verdicts = _run(tmp_path)  # the default version: 1.34.4, with the fix
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert verdicts["within 30 seconds resourceclaim/gpu is gone"][0] == "pass", verdicts


def test_on_1_33_0_the_claim_stays(tmp_path):
    if toolchain.find("1.33.0") is None:
        pytest.skip("Kubernetes 1.33.0 is not built here: aftershock toolchain build "
                    "--kubernetes-version 1.33.0")
    result, verdicts = _run(tmp_path, "--kubernetes-version", "1.33.0")
    assert result.returncode == 1, result.stdout[-3000:]
    # It was there, deleted and reserved, before the controller manager started...
    assert verdicts["within 5 seconds resourceclaim/gpu matches:"][0] == "pass", verdicts
    # ...and it never went
    status, summary = verdicts["within 30 seconds resourceclaim/gpu is gone"]
    assert status == "violated" and "did not happen within 30s" in summary, verdicts


CELL = '''
Given a cluster with 3 nodes
And I apply:
    """
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings}
    data: {mode: fast}
    """
When I patch configmap/settings:
    """
    data: {mode: safe}
    """
Then within 10 seconds configmap/settings matches:
    """
    data: {mode: safe}
    """
And at no point did configmap/settings have data.mode == slow
'''


def test_a_notebook_takes_the_same_steps_with_their_blocks_and_saves_them_runnable(tmp_path):
    from aftershock.notebook import Session

    saved = tmp_path / "notebook.feature"
    with Session(shape="clusters/three-nodes.yaml") as session:
        results = session.run(CELL)
        assert [r.status for r in results] == ["passed"] * 5, [
            (r.line, r.status, r.message) for r in results]
        # "from now on" is promised for the scenario's end: a notebook judges it when told
        promised = session.step("Then from now on configmap/settings never has data.mode == fast")
        assert promised.status == "promised" and "%scenario judge" in promised.message
        session.step("When I patch configmap/settings:", block="data: {mode: fast}")
        (judged,) = session.judge_promises()
        assert judged.status == "violated" and judged.line.startswith("Then from now on"), \
            judged
        assert "configmap/settings had data.mode == fast" in judged.message
        assert session.judge_promises() == []  # judged once
        session.drop([6, 7])  # the promise and the patch that broke it
        session.save(saved, "Applied from a notebook")
        # A cluster-scoped object applied is deleted when the scenario ends
        session.step("Given I apply:", block="apiVersion: scheduling.k8s.io/v1\n"
                     "kind: PriorityClass\nmetadata: {name: '{name}'}\nvalue: 1000\n")
        name = session.scenario.namespace
        scheduling = client.SchedulingV1Api(session.scenario.api)
        assert scheduling.read_priority_class(name).value == 1000
        session.new_scenario("after")
        with pytest.raises(ApiException) as gone:
            scheduling.read_priority_class(name)
        assert gone.value.status == 404
    assert '      """\n      data: {mode: safe}\n      """' in saved.read_text()
    result = subprocess.run([sys.executable, "-m", "pytest", str(saved), "-q",
                             "-p", "no:cacheprovider"], cwd=REPO, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout[-3000:]


def test_a_kind_the_implementation_installs_is_named_before_it_is_served(tmp_path):
    """sample-controller's Foo, named in steps before the implementation's step installs its
    CRD: known from the profile's manifests, recorded once served, its fields checked against
    the CRD's schema."""
    run = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", "tests/data/foo_before_its_crd.feature",
         "--profile", "profiles/thirdparty/sample-controller.yaml", "-p", "no:cacheprovider",
         "--run-dir", str(run)], capture_output=True, text=True, cwd=REPO, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    verdicts = (next(run.glob("*/verdicts.txt"))).read_text()
    assert "never_had: PASS: foo/example never had status.availableReplicas > 2 over" in verdicts


def test_a_kind_or_field_typo_is_one_line_naming_file_line_and_what_is_served(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", "tests/data/typos.feature",
         "-p", "no:cacheprovider", "--run-dir", str(tmp_path / "run")], capture_output=True,
        text=True, cwd=REPO, timeout=600)
    out = result.stdout
    assert result.returncode == 1, out[-3000:]
    assert "tests/data/typos.feature:6: no kind 'configmapp' is served by this cluster; " \
           "closest served: configmap" in out, out[-3000:]
    assert "tests/data/typos.feature:10: deployment has no field status.readyReplica: the " \
           "schema has no field 'readyReplica' under 'status'" in out, out[-3000:]
    assert "tests/data/typos.feature:14: no manifest manifests/absent.yaml (a path is " \
           "relative to the feature file" in out, out[-3000:]
    assert "tests/data/typos.feature:18: 1000000 pods need about" in out, out[-3000:]
    assert "(every replicas and parallelism in the manifests counts)" in out
    assert "tests/data/typos.feature:33: deployment has no field " \
           "status.conditions[tpye=Available].status: the items of 'status.conditions' have " \
           "no field 'tpye' to select one by" in out, out[-3000:]
    assert "tests/data/typos.feature:37: manifests/not-yaml.yaml: the YAML does not parse: " \
           "expected ',' or '}', but got '<stream end>' (line 5, column 1)" in out, out[-3000:]
    assert "Traceback" not in out and "During handling" not in out
