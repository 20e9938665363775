"""One module sends mail: nothing outside app/communications talks SMTP."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [
    path
    for folder in ("app", "jobs")
    for path in sorted((ROOT / folder).rglob("*.py"))
    if (ROOT / "app" / "communications") not in path.parents
]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_communications_module_imports_smtplib(path):
    """Routes, services and jobs send mail through app.communications, never smtplib themselves."""
    assert not _imports(path) & {"smtplib", "aiosmtplib"}


def test_the_communications_module_is_the_one_that_does():
    """The check above looks at real code: the backends do import smtplib."""
    assert "smtplib" in _imports(ROOT / "app" / "communications" / "backends.py")
