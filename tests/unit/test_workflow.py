"""The workflows users copy: they cannot run here, so they are read and linted. Conformance: a
matrix job per shard installs kind at the pinned tag and runs its shard of the suite with
--cluster=kind; a merge job joins the shards and uploads the allure HTML whatever the outcome.
The explore campaign: one job makes the plans, a matrix job per shard explores its share of
them on the embedded cluster, a merge job joins them and fails on a bug. actionlint (built by
`python -m tests.lint_workflows`) checks both fully when it has been built."""

import subprocess
from pathlib import Path

import pytest
import yaml

from aftershock.go.kind_binary import KIND_VERSION
from tests import lint_workflows

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "conformance.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps(workflow: dict, job: str | None = None) -> list[dict]:
    jobs = [workflow["jobs"][job]] if job else workflow["jobs"].values()
    return [step for one in jobs for step in one["steps"]]


def _named(workflow: dict, words: str, job: str | None = None) -> dict:
    found = [step for step in _steps(workflow, job) if words in step.get("name", "")]
    assert len(found) == 1, f"one step named like '{words}'"
    return found[0]


def test_it_runs_on_pushes_pull_requests_and_by_hand(workflow):
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request", "workflow_dispatch"} <= set(triggers)
    assert workflow["permissions"] == {"contents": "read"}


def test_every_step_is_named_and_every_action_pinned_to_a_version(workflow):
    for step in _steps(workflow):
        assert step.get("name"), step
        if "uses" in step:
            assert "@" in step["uses"], step["uses"]


def test_kind_is_installed_at_the_providers_pinned_tag(workflow):
    assert workflow["env"]["KIND_VERSION"] == KIND_VERSION
    assert 'go install "sigs.k8s.io/kind@${KIND_VERSION}"' in _named(workflow,
                                                                       "Install kind")["run"]
    assert any(step.get("uses", "").startswith("actions/setup-go@")
               for step in _steps(workflow))


def test_each_job_of_the_matrix_runs_its_shard_on_kind_into_its_own_run_dir(workflow):
    job = workflow["jobs"]["shard"]
    assert job["strategy"]["matrix"]["shard"] == list(range(1, workflow["env"]["SHARDS"] + 1))
    assert job["strategy"]["fail-fast"] is False
    script = _named(workflow, "Conformance suite", "shard")["run"]
    assert "aftershock run" in script and "--cluster=kind" in script
    assert '--shard "${{ matrix.shard }}/$SHARDS"' in script
    assert '--run-dir "$SHARD_DIR"' in script and "features/harness" in script
    for profile in (part for part in script.split() if part.startswith("profiles/")):
        assert (WORKFLOW.parents[2] / profile).is_file(), profile
    upload = _named(workflow, "Upload the shard", "shard")
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ env.SHARD_DIR }}/"


def test_the_merge_job_joins_every_shard_whatever_their_outcome(workflow):
    job = workflow["jobs"]["merge"]
    assert job["needs"] == "shard" and job["if"] == "always()"
    download = _named(workflow, "Download the shards", "merge")
    assert download["with"]["pattern"].startswith("aftershock-shard-")
    assert _named(workflow, "Upload the shard", "shard")["with"]["name"].startswith(
        "aftershock-shard-")
    assert 'aftershock merge reports/shards/* --out "$RUN_DIR"' in \
        _named(workflow, "Merge the shards", "merge")["run"]
    failed = _named(workflow, "Fail when a shard failed", "merge")
    assert failed["if"] == "needs.shard.result != 'success'" and "exit 1" in failed["run"]


def test_the_html_report_is_built_and_uploaded_whatever_the_outcome(workflow):
    report = _named(workflow, "Build the HTML report", "merge")
    assert report["if"] == "always()" and 'aftershock report "$RUN_DIR"' in report["run"]
    upload = _named(workflow, "Upload the HTML report", "merge")
    assert upload["if"] == "always()"
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert "${{ env.RUN_DIR }}/html/" in upload["with"]["path"]
    names = [step.get("name") for step in _steps(workflow, "merge")]
    assert names.index("Build the HTML report") > names.index("Merge the shards")


def test_actionlint_finds_nothing():
    actionlint = lint_workflows.actionlint_path()
    if not actionlint.is_file():
        pytest.skip("actionlint not built: run `python -m tests.lint_workflows` once")
    result = subprocess.run(lint_workflows.lint_command(actionlint), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the explore campaign: a planning job, a matrix of shards of its plans, a merge ----------

CAMPAIGN = WORKFLOW.parent / "explore-campaign.yml"


@pytest.fixture(scope="module")
def campaign() -> dict:
    return yaml.safe_load(CAMPAIGN.read_text())


def test_the_campaign_runs_by_hand_and_on_a_schedule_never_on_every_push(campaign):
    triggers = campaign.get("on", campaign.get(True))
    assert set(triggers) == {"workflow_dispatch", "schedule"}
    assert campaign["permissions"] == {"contents": "read"}
    assert campaign["concurrency"]["cancel-in-progress"] is False


def test_every_campaign_step_is_named_and_every_action_pinned_to_a_version(campaign):
    test_every_step_is_named_and_every_action_pinned_to_a_version(campaign)


def test_the_campaign_explores_a_profile_and_workload_of_this_checkout(campaign):
    for name in ("PROFILE", "WORKLOAD"):
        assert (WORKFLOW.parents[2] / campaign["env"][name]).is_file(), name


def test_the_planning_job_makes_the_plans_once_and_uploads_them(campaign):
    script = _named(campaign, "Reference runs and plans", "plan")["run"]
    assert "aftershock explore" in script and "--plan-only" in script
    assert '--out "$PLANNED_DIR"' in script
    upload = _named(campaign, "Upload the planning", "plan")
    assert upload["with"]["path"] == "${{ env.PLANNED_DIR }}/"
    assert upload["with"]["name"].startswith("aftershock-explore-planned-")


def test_every_explore_job_builds_the_embedded_clusters_binaries(campaign):
    for job in ("plan", "shard"):
        assert ".venv/bin/aftershock toolchain build" in _named(
            campaign, "Build the embedded cluster's binaries", job)["run"]
        assert any(step.get("uses", "").startswith("actions/setup-go@")
                   for step in _steps(campaign, job))


def test_each_job_of_the_matrix_runs_its_shard_of_the_one_planning(campaign):
    job = campaign["jobs"]["shard"]
    assert job["needs"] == "plan"
    assert job["strategy"]["matrix"]["shard"] == list(range(1, campaign["env"]["SHARDS"] + 1))
    assert job["strategy"]["fail-fast"] is False
    download = _named(campaign, "Download the planning", "shard")
    assert download["with"]["name"] == _named(campaign, "Upload the planning",
                                              "plan")["with"]["name"]
    assert download["with"]["path"] == "${{ env.PLANNED_DIR }}"
    script = _named(campaign, "Explore one shard", "shard")["run"]
    assert '--from "$PLANNED_DIR"' in script and "--plan-only" not in script
    assert '--shard "${{ matrix.shard }}/$SHARDS"' in script
    assert '--out "$SHARD_DIR"' in script and '--budget "$BUDGET"' in script
    upload = _named(campaign, "Upload the shard", "shard")
    assert upload["if"] == "always()" and upload["with"]["path"] == "${{ env.SHARD_DIR }}/"


def test_a_finding_passes_the_shard_and_fails_the_merge_when_it_is_a_bug(campaign):
    for job, words in (("plan", "Reference runs"), ("shard", "Explore one shard")):
        assert 'if [ "$status" -gt 1 ]; then exit "$status"; fi' in _named(
            campaign, words, job)["run"]
    failed = _named(campaign, "Fail when a bug was found", "merge")
    assert '["bugs"]' in failed["run"] and 'test "$bugs" -eq 0' in failed["run"]


def test_the_merge_job_joins_the_planning_and_every_shard(campaign):
    job = campaign["jobs"]["merge"]
    assert job["needs"] == ["plan", "shard"]
    assert job["if"] == "always() && needs.plan.result == 'success'"
    pattern = _named(campaign, "Download the planning and the shards", "merge")["with"][
        "pattern"]
    run_id = "${{ github.run_id }}"
    for name in (_named(campaign, "Upload the planning", "plan")["with"]["name"],
                 _named(campaign, "Upload the shard", "shard")["with"]["name"]):
        assert name.startswith(pattern.split("*")[0]) and name.endswith(run_id)
    assert 'aftershock merge reports/runs/* --out "$RUN_DIR"' in \
        _named(campaign, "Merge the planning and the shards", "merge")["run"]
    upload = _named(campaign, "Upload the merged findings", "merge")
    assert upload["if"] == "always()" and "${{ env.RUN_DIR }}/summary.json" in \
        upload["with"]["path"]
    failed = _named(campaign, "Fail when a shard failed", "merge")
    assert failed["if"] == "needs.shard.result != 'success'" and "exit 1" in failed["run"]
