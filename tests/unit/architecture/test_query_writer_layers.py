"""The layers of the query file path: app/data reads and never formats files; the query writers never read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[3] / "app"
QUERY_WRITERS = ["csv_writer.py", "xlsx_writer.py", "xlsx_cells.py", "neutralise.py", "cells.py"]


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _under(modules: set[str], package: str) -> set[str]:
    return {name for name in modules if name == package or name.startswith(package + ".")}


@pytest.mark.parametrize("path", sorted((APP / "data").glob("*.py")), ids=lambda p: p.name)
def test_the_data_layer_never_imports_rendering(path):
    """Reading datasets (the query runner, COPY records) does not reach up into the writers."""
    assert _under(_imported_modules(path), "app.rendering") == set()


@pytest.mark.parametrize("name", QUERY_WRITERS)
def test_query_writers_never_query(name):
    """The CSV and XLSX writers take rows: no database, models or data-layer imports."""
    modules = _imported_modules(APP / "rendering" / name)
    assert _under(modules, "app.data") | _under(modules, "app.models") | _under(modules, "app.extensions") == set()
