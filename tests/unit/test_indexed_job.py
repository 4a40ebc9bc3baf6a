"""The explore campaign as a Kubernetes Indexed Job (deploy/explore-indexed-job.yaml), read as
kubectl would: a planning Job, then an Indexed Job whose pod K runs shard K+1 of N from that
planning into a run dir of its own on the shared volume, unprivileged, with the image
`containers/images/harness.py` builds. And what that image is made of, from a checkout.
benchmarks/explore_indexed_job.py runs it on kind."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from aftershock.cli import explore as explore_cli
from aftershock.containers.images import harness, python_base
from aftershock.go import toolchain
from aftershock.providers.kind_config import NODE_DATA_IN_NODE
from aftershock.runs.shards import parse

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "deploy" / "explore-indexed-job.yaml"


@pytest.fixture(scope="module")
def jobs() -> dict[str, dict]:
    docs = [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc]
    assert [doc["kind"] for doc in docs] == ["Job", "Job"]
    return {doc["metadata"]["labels"]["aftershock.io/step"]: doc for doc in docs}


def _pod(job: dict) -> dict:
    return job["spec"]["template"]["spec"]


def _container(job: dict) -> dict:
    containers = _pod(job)["containers"]
    assert len(containers) == 1
    return containers[0]


def _env(job: dict) -> dict[str, str]:
    return {variable["name"]: variable["value"] for variable in _container(job)["env"]}


def _script(job: dict) -> str:
    container = _container(job)
    assert container["command"] == ["sh", "-c"]
    return container["args"][0]


def _explore_argv(job: dict, index: int) -> list[str]:
    """The explore command line pod ``index`` runs, its variables filled in as sh would."""
    values = {**_env(job), "JOB_COMPLETION_INDEX": str(index)}
    line = _script(job).split(";")[0]
    line = re.sub(r"\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)", str(index + 1), line)
    line = re.sub(r"\$(\w+)", lambda found: values[found[1]], line)
    return shlex.split(line)


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_the_labels_apply_each_job_alone(jobs):
    assert set(jobs) == {"plan", "shards"}
    for step, job in jobs.items():
        assert job["apiVersion"] == "batch/v1"
        assert job["spec"]["template"]["metadata"]["labels"]["aftershock.io/step"] == step
    text = MANIFEST.read_text()
    for step in jobs:
        assert f"kubectl apply -f explore-indexed-job.yaml -l aftershock.io/step={step}" in text
    assert "kubectl wait --for=condition=complete" in text


def test_the_planning_job_runs_the_reference_runs_once_into_planned(jobs):
    plan = jobs["plan"]
    assert "completionMode" not in plan["spec"] and plan["spec"]["backoffLimit"] == 0
    argv = _explore_argv(plan, 0)
    assert argv[:2] == ["aftershock", "explore"] and "--plan-only" in argv
    assert _option(argv, "--out") == "/runs/planned"
    assert "--shard" not in argv and "--from" not in argv


def test_the_indexed_job_runs_shard_index_plus_one_of_n(jobs):
    spec = jobs["shards"]["spec"]
    assert spec["completionMode"] == "Indexed"
    shards = int(_env(jobs["shards"])["SHARDS"])
    assert spec["completions"] == spec["parallelism"] == shards == 2
    # one failing shard fails its index alone: the others run on and merge
    assert spec["backoffLimitPerIndex"] == 0 and "backoffLimit" not in spec
    outs = set()
    for index in range(shards):
        argv = _explore_argv(jobs["shards"], index)
        shard = parse(_option(argv, "--shard"))
        assert (shard.index, shard.count) == (index + 1, shards)
        assert _option(argv, "--from") == "/runs/planned"
        outs.add(_option(argv, "--out"))
        explore_cli.budget_seconds(_option(argv, "--budget"))  # a budget explore takes
    assert outs == {f"/runs/shard-{index}" for index in range(shards)}


def test_both_jobs_explore_the_same_profile_workload_and_seed(jobs):
    plan, shards = _explore_argv(jobs["plan"], 0), _explore_argv(jobs["shards"], 0)
    for option in ("--profile", "--workload", "--seed"):
        assert _option(plan, option) == _option(shards, option)
    assert (REPO / _option(plan, "--profile")).is_file()
    assert (REPO / _option(plan, "--workload")).is_file()


def test_a_finding_completes_the_index_and_any_other_failure_fails_it(jobs):
    for job in jobs.values():
        assert _script(job).endswith('code=$?; if [ "$code" -eq 1 ]; then exit 0; fi; '
                                     'exit "$code"')
        assert _pod(job)["restartPolicy"] == "Never"


def test_the_extra_options_are_split_into_words(jobs):
    env = _env(jobs["shards"])
    assert env["EXTRA"] == ""
    assert " $EXTRA " in _script(jobs["shards"])  # unquoted: "--max-plans 40" is two words


def test_every_pod_writes_its_run_dir_to_the_one_volume_the_kind_node_mounts(jobs):
    for job in jobs.values():
        assert _container(job)["volumeMounts"] == [{"name": "runs", "mountPath": "/runs"}]
        volume, = _pod(job)["volumes"]
        assert volume["name"] == "runs"
        assert volume["hostPath"] == {"path": f"{NODE_DATA_IN_NODE}/runs", "type": "Directory"}
    text = MANIFEST.read_text()
    assert "persistentVolumeClaim: {claimName: aftershock-runs}" in text
    assert "ReadWriteMany" in text


def test_the_pods_run_the_harness_image_unprivileged(jobs):
    for job in jobs.values():
        container = _container(job)
        assert container["image"] == harness.tag()
        assert container["securityContext"] == {"allowPrivilegeEscalation": False,
                                                "capabilities": {"drop": ["ALL"]}}
        pod = _pod(job)["securityContext"]
        assert pod["runAsNonRoot"] is True
        assert pod["runAsUser"] == pod["runAsGroup"] == pod["fsGroup"] == harness.USER
        assert "privileged" not in json.dumps(job)
        assert container["resources"]["requests"]["memory"]


# --- the image ------------------------------------------------------------------------------

def test_the_image_holds_the_demos_profile_workload_and_implementation():
    files = {str(path) for path in harness.project_files(REPO)}
    assert {"profiles/replicagroup-correct.yaml", "workloads/replica_group.steps",
            "implementations/__init__.py", "implementations/replicagroup/__main__.py",
            "clusters/three-nodes.yaml"} <= files
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in files)
    # a Go implementation is built by its profile, not run from the image
    assert not any(name.startswith("implementations/drakubelet/") for name in files)


def test_the_image_runs_as_its_user_with_the_toolchain_under_its_cache():
    text = harness.dockerfile("k8s-v1.37.2_x", "abc123")
    assert text.splitlines()[0] == f"FROM {python_base.TAG}"
    assert f"USER {harness.USER}:{harness.USER}" in text
    assert f"ENV AFTERSHOCK_CACHE={harness.CACHE} HOME=/tmp" in text
    assert f"WORKDIR {harness.PROJECT}" in text and 'ENTRYPOINT ["aftershock"]' in text
    assert f"LABEL {harness.LABEL}=abc123" in text


def test_the_image_pins_what_constraints_pins_but_what_bookworms_python_cannot_run():
    pins = "PyYAML==6.0.3\nsoupsieve==4.1.2\nkubernetes==37.0.2\n"
    assert harness.image_constraints(pins) == "PyYAML==6.0.3\nkubernetes==37.0.2\n"
    command = harness.pip_command(Path("a.whl"), Path("site"), Path("c.txt"))
    assert command[command.index("--python-version") + 1] == harness.BOOKWORM_PYTHON
    assert command[command.index("-c") + 1] == "c.txt" and command[-1] == "a.whl"
    assert "--only-binary=:all:" in command


def test_the_key_changes_with_a_file_the_image_holds(tmp_path):
    root = tmp_path / "checkout"
    for name in (*harness.WHEEL_SOURCES[:4], "profiles/p.yaml", "clusters/c.yaml",
                 "implementations/__init__.py", "aftershock/__init__.py",
                 "implementations/kube/x.yaml", "workloads/w.steps"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    binaries = tmp_path / "bin"
    binaries.mkdir()
    (binaries / "manifest.json").write_text("{}")
    built = toolchain.Binaries(binaries, None, "kubectl")  # type: ignore[arg-type]
    before = harness.key(root, built)
    assert harness.key(root, built) == before
    (root / "workloads" / "w.steps").write_text("changed")
    assert harness.key(root, built) != before


# --- the toolchain where there is no Go ------------------------------------------------------

def test_with_no_go_the_toolchain_is_the_one_built_elsewhere_for_these_versions(
        tmp_path, monkeypatch):
    monkeypatch.setenv("AFTERSHOCK_CACHE", str(tmp_path))
    wanted = toolchain.Versions.resolve_without_go()
    for go, kubernetes in (("go1.26.8", wanted.kubernetes), ("go1.26.8", "1.30.0")):
        directory = tmp_path / "bin" / f"k8s-v{kubernetes}_{go}"
        directory.mkdir(parents=True)
        versions = {**wanted.__dict__, "go": go, "kubernetes": kubernetes}
        (directory / "manifest.json").write_text(json.dumps({"versions": versions}))
    monkeypatch.setattr(toolchain.shutil, "which", lambda name, *a, **k: None)
    found = toolchain.find()
    assert found is not None and found.versions.kubernetes == wanted.kubernetes
    assert found.versions.go == "go1.26.8"
    assert found.directory == tmp_path / "bin" / f"k8s-v{wanted.kubernetes}_go1.26.8"
    assert toolchain.find("1.29.1") is None
