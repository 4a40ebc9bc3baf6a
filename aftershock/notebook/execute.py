"""Run a notebook top to bottom on a fresh kernel (nbclient), with parameters injected after
its cell tagged `parameters` (as papermill does), and export the executed notebook as HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell

TIMEOUT = 600  # seconds per cell


def inject(book, parameters: dict[str, Any]) -> None:
    if not parameters:
        return
    lines = [f"{name} = {value!r}" for name, value in parameters.items()]
    cell = new_code_cell("# injected parameters\n" + "\n".join(lines))
    cell.metadata["tags"] = ["injected-parameters"]
    tagged = [i for i, c in enumerate(book.cells) if "parameters" in c.metadata.get("tags", [])]
    book.cells.insert(tagged[0] + 1 if tagged else 0, cell)


def execute(path: Path, out_dir: Path, parameters: dict[str, Any] | None = None,
            cwd: Path | None = None) -> tuple[Path, Path]:
    """Returns (executed .ipynb, exported .html), both in out_dir. A failing cell raises
    nbclient's CellExecutionError, after the partly executed notebook is written."""
    book = nbformat.read(path, as_version=4)
    inject(book, parameters or {})
    client = NotebookClient(book, timeout=TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd or Path.cwd())}})
    out_dir.mkdir(parents=True, exist_ok=True)
    executed, html = out_dir / path.name, out_dir / f"{path.stem}.html"
    try:
        client.execute()
    finally:
        nbformat.write(book, executed)
        body, _ = HTMLExporter().from_notebook_node(book)
        html.write_text(body)
    return executed, html
