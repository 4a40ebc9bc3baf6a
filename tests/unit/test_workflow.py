"""The conformance workflow users copy: it cannot run here, so it is read and linted. It
installs kind at the pinned tag, runs the suite with --cluster=kind and uploads the allure HTML
whatever the outcome. actionlint (built by `python -m tests.lint_workflows`) checks it fully
when it has been built."""

import subprocess
from pathlib import Path

import pytest
import yaml

from aftershock.providers.kind_binary import KIND_VERSION
from tests import lint_workflows

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "conformance.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps(workflow: dict) -> list[dict]:
    (job,) = workflow["jobs"].values()
    return job["steps"]


def _named(workflow: dict, words: str) -> dict:
    found = [step for step in _steps(workflow) if words in step.get("name", "")]
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


def test_the_suite_runs_on_kind_into_one_run_dir(workflow):
    script = _named(workflow, "Conformance suite")["run"]
    assert "aftershock run" in script and "--cluster=kind" in script
    assert '--run-dir "$RUN_DIR"' in script and "features/harness" in script
    for profile in (part for part in script.split() if part.startswith("profiles/")):
        assert (WORKFLOW.parents[2] / profile).is_file(), profile


def test_the_html_report_is_built_and_uploaded_whatever_the_outcome(workflow):
    report = _named(workflow, "Build the HTML report")
    assert report["if"] == "always()" and 'aftershock report "$RUN_DIR"' in report["run"]
    upload = _named(workflow, "Upload the HTML report")
    assert upload["if"] == "always()"
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert "${{ env.RUN_DIR }}/html/" in upload["with"]["path"]
    names = [step.get("name") for step in _steps(workflow)]
    assert names.index("Build the HTML report") > names.index("Conformance suite on kind")


def test_actionlint_finds_nothing():
    actionlint = lint_workflows.actionlint_path()
    if not actionlint.is_file():
        pytest.skip("actionlint not built: run `python -m tests.lint_workflows` once")
    result = subprocess.run(lint_workflows.lint_command(actionlint), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
