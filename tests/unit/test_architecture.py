"""docs/architecture.md draws the package from its tree: every package and module of
aftershock is named in its tree block, under the package that holds it, and nothing that is not
there; the block lists the layers in the order of the `layers` contract in pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "aftershock"
MARK = "<!-- the tree: tests/unit/test_architecture.py compares it with aftershock/ -->"
NOT_CODE = {"templates", "toolchain", "__pycache__"}  # what `init` copies; go.mod files


def drawn(text: str) -> dict[str, set[str]]:
    """The tree block: each top-level name (``x/`` a package) → the names listed under it."""
    block = text.split(MARK, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    tree: dict[str, set[str]] = {}
    current = ""
    for line in block.splitlines():
        if line and not line.startswith(" "):
            current = line.split()[0]
            tree[current] = set()
        elif line.startswith(" " * 18):
            tree[current] |= set(line.split())
    return tree


def on_disk() -> dict[str, set[str]]:
    tree = {p.stem: set() for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    for folder in sorted(p for p in PACKAGE.iterdir() if p.is_dir() and p.name not in NOT_CODE):
        tree[f"{folder.name}/"] = {p.stem for p in folder.glob("*.py")
                                   if p.name != "__init__.py"} | {
            f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return tree


def test_the_tree_in_the_architecture_names_every_package_and_module():
    doc = drawn((REPO / "docs" / "architecture.md").read_text())
    assert doc == on_disk()


def test_the_tree_is_drawn_in_the_order_of_the_layers_contract():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    rank = {name.strip(): index for index, layer in enumerate(layers["layers"])
            for name in re.split(r"[|:]", layer)}
    doc = [name.rstrip("/") for name in drawn((REPO / "docs" / "architecture.md").read_text())]
    assert set(doc) == set(rank)
    assert [rank[name] for name in doc] == sorted(rank[name] for name in doc)


def test_the_comparison_fails_on_a_module_the_tree_does_not_name(tmp_path):
    text = (REPO / "docs" / "architecture.md").read_text()
    assert drawn(text.replace(" catalogue say __main__", " say __main__")) != on_disk()
