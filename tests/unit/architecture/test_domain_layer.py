"""The domain is the bottom of the house: its rules import no route, service, store or web framework,
so a rule is read, and tested, without any of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOMAIN = sorted((ROOT / "app" / "domain").rglob("*.py"))
# What sits above the domain, or is the web framework or a storage client.
ABOVE = ("app.blueprints", "app.services", "app.destinations", "app.storage", "flask", "boto3", "botocore")


def _imported_modules(path: Path) -> set[str]:
    """Every module the file imports, wherever the import stands (inside functions too)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def _above(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in ABOVE)


@pytest.mark.parametrize("path", DOMAIN, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_domain_module_imports_nothing_from_above_it(path):
    assert sorted(module for module in _imported_modules(path) if _above(module)) == []


def test_the_check_reads_real_imports():
    """The check above would see an upward import: the destination store does import flask."""
    assert any(_above(module) for module in _imported_modules(ROOT / "app" / "destinations" / "__init__.py"))
