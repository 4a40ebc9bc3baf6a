"""`aftershock report <run-dir>`: the run's allure results as one offline HTML page
(allure 3, pinned in package.json, installed under node_modules by the Makefile), with
categories that tell an implementation's bug from the harness's, and the conformance matrix."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from aftershock.errors import UserError
from aftershock.report import page

REPO = Path(__file__).resolve().parents[2]  # a source checkout of aftershock
ALLURE_VERSION = "3.18.0"
RESULTS, OUTPUT = "allure-results", "html"


def allure() -> Path | None:
    """allure 3: the project's node_modules, aftershock's checkout's, or on PATH."""
    for base in (Path.cwd(), REPO):
        found = base / "node_modules" / ".bin" / "allure"
        if found.exists():
            return found
    on_path = shutil.which("allure")
    return Path(on_path) if on_path else None


def _category(name: str, statuses: list[str], verdict: str | None = None,
              message: str | None = None) -> dict:
    matchers: dict = {"statuses": statuses}
    if verdict:
        matchers["labels"] = {"verdict": verdict}
    if message:
        matchers["message"] = message
    return {"name": name, "matchers": matchers, "groupByMessage": False}


CATEGORIES = [
    _category("Property violated (a bug in the implementation)", ["failed"],
              verdict="property violated"),
    _category("Expected violation caught (the suite caught the seeded bug)", ["passed"],
              verdict="expected violation caught"),
    _category("Expected violation missed (the suite did not show the bug)", ["failed"],
              verdict="expected violation missed"),
    _category("Implementation crashed", ["failed", "broken"], verdict="implementation crashed"),
    _category("Harness error (a bug or problem in aftershock or the machine)",
              ["failed", "broken"], verdict="harness error"),
    _category("Not applicable (a KEP's or the profile's word: each says which)", ["passed"],
              verdict="not applicable"),
    _category("Skipped for a missing capability or concept", ["skipped"]),
]


def config(name: str) -> dict:
    return {"name": name, "output": f"./{OUTPUT}",
            "plugins": {"awesome": {"options": {"singleFile": True, "reportName": name,
                                                "reportLanguage": "en",
                                                "stepTreeExpansion": "expanded",
                                                # implementation, then property family
                                                "groupBy": ["parentSuite", "suite"]}}},
            "categories": CATEGORIES}


def environment(run: Path) -> dict[str, str]:
    """What the scenarios ran on, merged: each value once, in the order first seen."""
    merged: dict[str, list[str]] = {}
    for path in sorted(run.glob("*/evidence/environment.json")):
        for key, value in json.loads(path.read_text()).items():
            values = merged.setdefault(key, [])
            if value not in values:
                values.append(value)
    return {key: ", ".join(values) for key, values in merged.items()}


def generate(run: Path) -> Path:
    """Write <run>/html/index.html (and matrix.html/.md); returns the index."""
    results = run / RESULTS
    if not results.is_dir() or not any(results.glob("*-result.json")):
        raise UserError(f"no allure results in {results}: is this a run dir of aftershock run?")
    tool = allure()
    if tool is None:
        raise UserError(f"allure is not installed: `npm install allure@{ALLURE_VERSION}` in "
                        "the project (in aftershock's checkout: make report-tools)")
    page.write(run)
    lines = [f"{key}={value}" for key, value in environment(run).items()]
    (results / "environment.properties").write_text("\n".join(lines) + "\n")
    (run / "allurerc.json").write_text(json.dumps(config(f"aftershock {run.name}"), indent=2))
    shutil.rmtree(run / OUTPUT, ignore_errors=True)
    done = subprocess.run([str(tool), "generate", RESULTS, "--config", "allurerc.json"],
                          cwd=run, capture_output=True, text=True)
    index = run / OUTPUT / "index.html"
    if done.returncode != 0 or not index.exists():
        raise UserError(f"allure generate failed ({done.returncode}): "
                        + (done.stderr or done.stdout)[-2000:])
    return index
