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


LAYERS = "the layers, from the command line down to errors"
TYPE_ONLY = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import "


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("errors.py", "import aftershock.machine.cache", LAYERS),  # the lowest layer
    ("machine/limits.py", "import aftershock.kube.paths", LAYERS),
    ("timeline/state.py", "import aftershock.properties", LAYERS),
    ("faults/drain.py", "import aftershock.properties.base", LAYERS),  # one layer: apart
    ("runs/shards.py", "import aftershock.world", LAYERS),
    ("strays.py", "X = 1", LAYERS),  # a module given no place
    ("machine/shape.py", "import kubernetes.client", "the machine-facing foundation knows"),
    ("kube/labels.py", "import kubernetes.client", "paths, comparisons, selectors"),
    ("checks/temporal.py", "import aftershock.concepts", "checks judge a recorded history"),
    ("checks/verdict.py", "import kubernetes.watch", "checks judge a recorded history"),
    ("properties/rule.py", "import aftershock.scenario", "properties judge a saved history"),
    ("properties/gang.py", "import aftershock.providers.local", "properties judge a saved history"),
    ("concepts/gang.py", "import aftershock.sut.runner", "the profile format and the concept"),
    ("properties/binding.py", "from aftershock.timeline.entry import AUDIT",
     "properties and checks read a history only"),
    ("checks/objects.py", "from aftershock.timeline.state import replay",
     "properties and checks read a history only"),
    ("phrases/objects.py", "from aftershock.timeline.entry import WATCH",
     "properties and checks read a history only"),
    ("profile/load.py", "import aftershock.kube.writes", "the profile format and the concept"),
    ("sut/readiness.py", "import aftershock.scenario", "implementations and faults know no"),
    ("faults/drain.py", "import aftershock.grammar", "implementations and faults know no"),
    ("providers/local.py", "import aftershock.faults.nodes", "providers know no faults"),
    ("providers/kind.py", "import aftershock.sut.runner", "providers know no faults"),
    ("faults/watchdelay/proxy.py", "import aftershock.errors", "the watch proxy runs alone"),
    ("checks/verdict.py", "import aftershock.checks.temporal", "no import circles"),
    ("bdd/steps/nodes.py", "import aftershock.bdd.steps.watches", "no import circles"),
    ("faults/watchdelay/handler.py", TYPE_ONLY + "aftershock.faults.watchdelay.proxy",
     "no import circles"),  # for annotations only, still a circle
    ("scenario.py", "def later():\n    import aftershock.report.plot",
     "no import inside a function"),
    ("cli/run.py", None, "no import inside a function"),  # the reason it keeps them, removed
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
        before = target.read_text() if target.exists() else ""
        target.write_text(before + f"\n{line}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    broken = [row for row in result.stdout.splitlines() if row.endswith("BROKEN")]
    assert any(row.startswith(contract) for row in broken), result.stdout
