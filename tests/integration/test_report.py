"""The HTML report, as a reader sees it: a failing scenario's page in headless chromium shows
its timeline and witness; and a scenario that reads a Secret and fails leaves no Secret value
and no token anywhere in the run's report dir."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import SECRET

REPO = Path(__file__).resolve().parents[2]
JWT = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--virtual-time-budget=5000"]
pytestmark = pytest.mark.cluster


def test_no_secret_value_or_token_anywhere_in_the_report_dir(finished_run: Path):
    report = finished_run
    files = [path for path in report.rglob("*") if path.is_file()]
    kubeconfigs = [str(path) for path in files if path.name.endswith(".kubeconfig")]
    assert kubeconfigs == [], "the SUT's credentials stay in the cluster's private dir (0700)"
    assert any(path.suffix == ".xml" for path in files), "JUnit XML"
    leaks = [str(path) for path in files if SECRET.encode() in path.read_bytes()]
    tokens = [str(path) for path in files if JWT.search(path.read_bytes())]
    assert leaks == [] and tokens == [], (leaks, tokens)
    assert "[REDACTED]" in (report / "junit.xml").read_text()


def _failing_result(report: Path) -> dict:
    results = [json.loads(p.read_text()) for p in (report / "allure-results").glob(
        "*-result.json")]
    failing = [r for r in results if r["status"] == "failed" and {
        "name": "profile", "value": "replicagroup-correct"} in r["labels"]]
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


def _rendered(url: str, expected: str) -> str:
    """The page's DOM once the single-page app has drawn the test result: on a loaded machine
    it can take longer than the first virtual-time budget, so the budget grows (40 s of it
    was not enough once, in a CI run of 1,300 tests on 3 workers)."""
    dom = ""
    for budget in (5000, 15000, 40000, 120000):
        command = [*(a for a in CHROMIUM if not a.startswith("--virtual-time-budget")),
                   f"--virtual-time-budget={budget}", "--dump-dom", url]
        dom = subprocess.run(command, capture_output=True, text=True, timeout=180).stdout
        dom = re.sub(r"<script.*?</script>|<style.*?</style>", "", dom, flags=re.DOTALL)
        if expected in dom:
            break
    return dom


def test_the_failing_scenario_page_shows_its_timeline_and_witness(finished_run: Path):
    report = finished_run
    assert shutil.which("chromium"), "chromium missing: `make browser` installs Debian's"
    result = _failing_result(report)
    labels = {label["name"]: label["value"] for label in result["labels"]}
    assert labels["verdict"] == "property violated"
    attachments = {a["name"]: a["source"] for a in result["attachments"]}
    for name in ("timeline", "timeline (image)", "witness", "environment"):
        assert name in attachments, sorted(attachments)
    page = _expanded_copy(report, [attachments["timeline (image)"], attachments["witness"]])
    url = f"{page.as_uri()}#/{hashlib.md5(result['uuid'].encode()).hexdigest()}"
    dom = _rendered(url, "A scenario that reads a Secret and fails")
    assert "A scenario that reads a Secret and fails" in dom
    assert "R1: VIOLATED" in dom and "witness (" in dom, "the witness is on the page"
    assert f'alt="{attachments["timeline (image)"]}"' in dom, "the timeline image is drawn"
    assert SECRET not in dom
    shot = report / "report-screenshot.png"
    subprocess.run([*CHROMIUM, "--window-size=1400,2400", f"--screenshot={shot}", url],
                   capture_output=True, timeout=120)
    assert shot.read_bytes().startswith(b"\x89PNG")


def test_the_matrix_page_reads_in_a_browser(finished_run: Path):
    """matrix.html of a run with two profiles, as chromium draws it: the run's header, each
    property's title, and a witness link that opens the witness."""
    from aftershock.go import toolchain

    dom = _rendered((finished_run / "matrix.html").as_uri(), "No over-creation")
    assert "No over-creation" in dom, "R1's title under its id"
    version = f"v{toolchain.pinned_kubernetes()}"
    for fact in ("aftershock", "provider", "local", version, "replicagroup@",
                 f"built into Kubernetes {version}", "replicagroup-correct", "kube-replicaset"):
        assert fact in dom, fact
    links = re.findall(r'href="([^"#]+/evidence/witness\.txt)"', dom)
    assert len(set(links)) == 2, links  # each profile's violated R1 cell
    assert all((finished_run / link).is_file() for link in links)
    opened = subprocess.run([*CHROMIUM, "--dump-dom", (finished_run / links[0]).as_uri()],
                            capture_output=True, text=True, timeout=180).stdout
    assert "R1: VIOLATED" in opened and "witness (" in opened


def test_allure_groups_by_implementation_then_family(finished_run: Path):
    from aftershock.go import toolchain

    results = [json.loads(p.read_text()) for p in (finished_run / "allure-results").glob(
        "*-result.json")]
    version = f"v{toolchain.pinned_kubernetes()}"
    groups = {label["value"] for r in results for label in r["labels"]
              if label["name"] == "parentSuite"}
    assert groups == {f"replicagroup-correct · Kubernetes {version}",
                      f"kube-replicaset · Kubernetes {version}"}, groups
    assert all(r["name"].endswith((" · replicagroup-correct", " · kube-replicaset"))
               for r in results), [r["name"] for r in results]
    assert all({"name": "suite", "value": "R: replica groups under a stale cache"}
               in r["labels"] for r in results)
    failing = _failing_result(finished_run)
    assert "No over-creation" in failing["description"] and "witness (" in failing["description"]
    assert failing["attachments"][0]["name"] == "timeline (image)", "the picture first"
    dom = _rendered((finished_run / "html" / "index.html").as_uri(),
                    f"kube-replicaset · Kubernetes {version}")
    assert f"kube-replicaset · Kubernetes {version}" in dom
    assert f"replicagroup-correct · Kubernetes {version}" in dom
