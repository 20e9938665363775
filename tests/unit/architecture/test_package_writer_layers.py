"""The package writers take rows and give bytes: no database, models, data layer, Flask or services."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[3] / "app"
FORBIDDEN = ("app.data", "app.models", "app.extensions", "app.services", "app.storage", "flask", "sqlalchemy")


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((APP / "rendering" / "package").glob("*.py")), ids=lambda p: p.name)
def test_package_writers_never_query(path):
    modules = _imported_modules(path)
    assert {m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)} == set()


def test_the_snapshot_reader_never_imports_the_writers():
    modules = _imported_modules(APP / "data" / "package_snapshot.py")
    assert {m for m in modules if m.startswith("app.rendering")} == set()


def test_producing_a_package_loads_pyarrow_only_for_a_parquet_one():
    """pyarrow costs a process about 50 MB; a CSV or JSON Lines package job never pays it."""
    probe = (
        "import sys, app.services.workspace_export.package_production, app.rendering.package.manifest;"
        " print('pyarrow' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=APP.parent, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip().splitlines()[-1] == "False"
