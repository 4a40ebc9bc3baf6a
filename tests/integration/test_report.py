"""The HTML report, as a reader sees it: a failing scenario's page in headless chromium shows
its timeline and witness; and a scenario that reads a Secret and fails leaves no Secret value
and no token anywhere in the run's report dir."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-aftershock-8f2e91"
JWT = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--virtual-time-budget=5000"]
FEATURE = f"""Feature: A failing scenario's report

  Scenario: A scenario that reads a Secret and fails
    Given a Secret db with password "{SECRET}"
    And the implementation under test is running
    And a Deployment web with 2 replicas
    And within 60 seconds 2 pods of web are Running
    Then at no point did web have more than 1 live pods (R1)
    And the Secret db holds password "something-else"
"""
pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """One failing run, its HTML report generated: the run dir."""
    run = tmp_path_factory.mktemp("report") / "run"
    # Inside the rootdir: allure-pytest-bdd names a feature by its path relative to it.
    feature = REPO / "reports" / f"{run.parent.name}-secret_report.feature"
    feature.parent.mkdir(exist_ok=True)
    feature.write_text(FEATURE)
    result = subprocess.run(
        [sys.executable, "-m", "aftershock.cli", "run", str(feature), "--run-dir", str(run),
         "--profile", "profiles/replicagroup-correct.yaml", "-p", "no:cacheprovider"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    feature.unlink()
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert "R1: VIOLATED" in result.stdout
    failure = [line for line in result.stdout.splitlines() if "holds password=" in line]
    assert failure and all(SECRET not in line and "[REDACTED]" in line for line in failure), \
        "the failure is shown with the value masked"
    made = subprocess.run([sys.executable, "-m", "aftershock.cli", "report", str(run)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (run / "html" / "index.html").exists()
    return run


def test_no_secret_value_or_token_anywhere_in_the_report_dir(report: Path):
    files = [path for path in report.rglob("*") if path.is_file()]
    assert any(path.name.endswith(".kubeconfig") for path in files), "the SUT's kubeconfig"
    assert any(path.suffix == ".xml" for path in files), "JUnit XML"
    leaks = [str(path) for path in files if SECRET.encode() in path.read_bytes()]
    tokens = [str(path) for path in files if JWT.search(path.read_bytes())]
    assert leaks == [] and tokens == [], (leaks, tokens)
    assert "[REDACTED]" in (report / "junit.xml").read_text()


def _failing_result(report: Path) -> dict:
    results = [json.loads(p.read_text()) for p in (report / "allure-results").glob(
        "*-result.json")]
    failing = [r for r in results if r["status"] == "failed"]
    assert len(failing) == 1, [r["status"] for r in results]
    return failing[0]


def _expanded_copy(report: Path, sources: list[str]) -> Path:
    """The report as a reader leaves it after opening these attachments (the UI keeps open
    attachments in localStorage under expandedTrees)."""
    index = (report / "html" / "index.html").read_text()
    keys = [f"attachment-{hashlib.md5(s.encode()).hexdigest()}" for s in sources]
    value = json.dumps(json.dumps(keys))
    seed = f"<script>localStorage.setItem('expandedTrees', {value});</script>"
    page = report / "html" / "expanded.html"
    page.write_text(index.replace("<head>", "<head>" + seed, 1))
    return page


def test_the_failing_scenario_page_shows_its_timeline_and_witness(report: Path):
    assert shutil.which("chromium"), "chromium missing: `make browser` installs Debian's"
    result = _failing_result(report)
    labels = {label["name"]: label["value"] for label in result["labels"]}
    assert labels["verdict"] == "property violated"
    attachments = {a["name"]: a["source"] for a in result["attachments"]}
    for name in ("timeline", "timeline (image)", "witness", "environment"):
        assert name in attachments, sorted(attachments)
    page = _expanded_copy(report, [attachments["timeline (image)"], attachments["witness"]])
    url = f"{page.as_uri()}#/{hashlib.md5(result['uuid'].encode()).hexdigest()}"
    dom = subprocess.run([*CHROMIUM, "--dump-dom", url], capture_output=True, text=True,
                         timeout=120).stdout
    dom = re.sub(r"<script.*?</script>|<style.*?</style>", "", dom, flags=re.DOTALL)
    assert "A scenario that reads a Secret and fails" in dom
    assert "R1: VIOLATED" in dom and "witness (" in dom, "the witness is on the page"
    assert f'alt="{attachments["timeline (image)"]}"' in dom, "the timeline image is drawn"
    assert SECRET not in dom
    shot = report / "report-screenshot.png"
    subprocess.run([*CHROMIUM, "--window-size=1400,2400", f"--screenshot={shot}", url],
                   capture_output=True, timeout=120)
    assert shot.read_bytes().startswith(b"\x89PNG")
