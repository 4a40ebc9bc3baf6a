"""The layering contracts (pyproject.toml, run by `lint-imports` in `make lint`) hold, and each
one breaks on the import it forbids: a copy of the package with that one import added fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), str(root / "pyproject.toml"),
                           "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_layering_holds():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("timeline/state.py", "import aftershock.properties", "timeline and checks import nothing"),
    ("checks/temporal.py", "import aftershock.sut.concepts", "timeline and checks import nothing"),
    ("properties/rule.py", "import aftershock.scenario", "properties judge a saved history"),
    ("properties/gang.py", "import aftershock.providers.local", "properties judge a saved history"),
    ("sut/concepts.py", "import aftershock.scenario", "implementations and faults know no"),
    ("faults/drain.py", "import aftershock.grammar", "implementations and faults know no"),
    ("providers/local.py", "import aftershock.faults.nodes", "providers know no faults"),
    ("providers/kind.py", "import aftershock.sut.runner", "providers know no faults"),
    ("checks/verdict.py", "import aftershock.checks.temporal", "no import circles"),
    ("bdd/steps/nodes.py", "import aftershock.bdd.steps.watches", "no import circles"),
    ("scenario.py", "def later():\n    import aftershock.report.plot",
     "no import inside a function"),
    ("cli.py", None, "no import inside a function"),  # the reason it keeps them, removed
])
def test_each_contract_breaks_on_the_import_it_forbids(tmp_path, module, line, contract):
    shutil.copytree(REPO / "aftershock", tmp_path / "aftershock",
                    ignore=shutil.ignore_patterns("__pycache__", "toolchain", "data"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "tests").mkdir()
    for name in ("__init__.py", "contracts.py"):  # the contract type import-linter lacks
        shutil.copy(REPO / "tests" / name, tmp_path / "tests" / name)
    target = tmp_path / "aftershock" / module
    if line is None:
        target.write_text(target.read_text().replace("# Imports inside functions:", "#"))
    else:
        target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    broken = [row for row in result.stdout.splitlines() if row.endswith("BROKEN")]
    assert any(row.startswith(contract) for row in broken), result.stdout
