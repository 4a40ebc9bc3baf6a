"""A layering contract import-linter has no type for: no import written inside a function,
outside the modules that keep them to spare start-up time (the CLI and the pytest plugin;
an allowed package allows its modules), and each of those says why. Registered in
pyproject.toml ([tool.importlinter] contract_types)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

REASON = "start-up time"  # what an allowed module's comment about its imports must say


def function_imports(package_dir: Path, package: str) -> dict[str, list[int]]:
    """Module → the lines of every import written inside one of its functions."""
    found: dict[str, list[int]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir).with_suffix("").parts
        module = ".".join((package, *parts)).removesuffix(".__init__")
        tree = ast.parse(path.read_text(), str(path))
        lines = sorted({sub.lineno for node in ast.walk(tree)
                        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                        for sub in ast.walk(node)
                        if isinstance(sub, ast.Import | ast.ImportFrom)})
        if lines:
            found[module] = lines
    return found


class NoImportsInFunctions(Contract):
    type_name = "no_imports_in_functions"

    package = fields.StringField()
    allowed = fields.ListField(subfield=fields.StringField(), required=False)
    ignore_paths = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph, verbose: bool) -> ContractCheck:
        spec = importlib.util.find_spec(self.package)
        package_dir = Path(next(iter(spec.submodule_search_locations)))
        ignored = [package_dir / p for p in self.ignore_paths or []]
        allowed = set(self.allowed or [])
        broken, unexplained = [], []
        for module, lines in function_imports(package_dir, self.package).items():
            path = package_dir.parent / (module.replace(".", "/") + ".py")
            if not path.exists():
                path = package_dir.parent / module.replace(".", "/") / "__init__.py"
            if any(path.is_relative_to(p) for p in ignored):
                continue
            if any(module == a or module.startswith(f"{a}.") for a in allowed):
                if f"# Imports inside functions: {REASON}" not in path.read_text():
                    unexplained.append(module)
                continue
            broken += [f"{module}:{line}" for line in lines]
        return ContractCheck(kept=not broken and not unexplained,
                             metadata={"broken": broken, "unexplained": unexplained})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for where in check.metadata["broken"]:
            output.print_error(f"{where}: an import inside a function (move it to the top)",
                               bold=False)
        for module in check.metadata["unexplained"]:
            output.print_error(f"{module}: imports inside functions without the comment "
                               f"'# Imports inside functions: {REASON} ...'", bold=False)
