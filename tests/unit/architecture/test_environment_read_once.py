"""One module reads the environment: app/config.py; everything else takes the app's settings."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "app" / "config.py"
SOURCES = [path for folder in ("app", "jobs") for path in sorted((ROOT / folder).rglob("*.py")) if path != CONFIG]

# What os offers to read (or change) the environment with.
_ENVIRONMENT_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def _environment_uses(path: Path) -> list[str]:
    """`os.environ`, `os.getenv`… and names imported from os to the same end (`from os import environ`),
    with their line numbers. A WSGI `environ` parameter is no use of the process environment."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in _ENVIRONMENT_NAMES
        ):
            found.append(f"line {node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found.extend(
                f"line {node.lineno}: from os import {alias.name}"
                for alias in node.names
                if alias.name in _ENVIRONMENT_NAMES
            )
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_config_module_reads_the_environment(path):
    """A setting is a `Settings` field read in app/config.py; code elsewhere takes it from the app."""
    assert _environment_uses(path) == []


def test_the_config_module_is_the_one_that_does():
    """The check above looks at real code: the config module does read os.environ."""
    assert _environment_uses(CONFIG)


def test_a_name_imported_from_os_is_found(tmp_path):
    source = tmp_path / "reader.py"
    source.write_text("from os import environ, path\n\nvalue = environ.get('X')\n")
    assert _environment_uses(source) == ["line 1: from os import environ"]
