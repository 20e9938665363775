"""A module of the project goes by its own name wherever it is imported: a caller that needs
another name (`from app.domain.schedules import schedule_lifecycle as lifecycle`) says that the
module's name does not say what it holds, or that two modules collide; the fix is a better name
or importing the names used, never a private alias that a reader has to translate back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CHECKED = ("app", "jobs")


def _is_project_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _absolute(node: ast.ImportFrom, importer: str) -> str:
    """The module a `from … import` reads from, with a relative one resolved against its importer."""
    if not node.level:
        return node.module or ""
    package = importer.split(".")[: -node.level]
    return ".".join([*package, node.module] if node.module else package)


def renamed_modules(source: str, importer: str = "app.example") -> list[str]:
    """Each import in `source` that gives a project module a name other than its own."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            renamed = [
                alias
                for alias in node.names
                if alias.asname
                and alias.name.split(".")[0] in CHECKED
                and alias.asname != alias.name.rpartition(".")[2]
            ]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, importer)
            renamed = [
                alias
                for alias in node.names
                if alias.asname and alias.asname != alias.name and _is_project_module(f"{module}.{alias.name}")
            ]
        else:
            continue
        found += [f"line {node.lineno}: {alias.name} as {alias.asname}" for alias in renamed]
    return found


def _project_modules() -> list[tuple[str, Path]]:
    return [
        (".".join(path.relative_to(ROOT).with_suffix("").parts), path)
        for folder in CHECKED
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]


def test_no_module_of_app_or_jobs_renames_a_project_module_it_imports():
    renamed = {
        name: found
        for name, path in _project_modules()
        if (found := renamed_modules(path.read_text(encoding="utf-8"), name))
    }
    assert renamed == {}


@pytest.mark.parametrize(
    "line",
    [
        "from app.domain.schedules import schedule_lifecycle as lifecycle",
        "from app.services.work import engine as work_engine",
        "import app.services.work.engine as work_engine",
        "from ..schedules import attachment_rules as policy_rules",
    ],
)
def test_the_detector_catches_a_project_module_under_another_name(line):
    assert renamed_modules(line, importer="app.domain.workspace_export.example") != []


@pytest.mark.parametrize(
    "line",
    [
        "from app.domain.schedules import schedule_lifecycle",
        "import app.services.work.engine as engine",
        # A name that is not a module, kept under its own name to re-export it.
        "from app.models.types import lease_lapsed as lease_lapsed",
        # Names inside a module, and other projects' modules, are the caller's to name.
        "from app.blueprints.errors import register_error_pages as register",
        "import sqlalchemy.orm as orm",
    ],
)
def test_the_detector_lets_a_module_keep_its_own_name(line):
    assert renamed_modules(line) == []
