"""docs/architecture.md "Capabilities, file by file" is the map a newcomer reads: one table per
capability (and one for the shared kernel) of its files in every layer. Every module under app/ and
jobs/ and every page template stands in exactly one table, and every path a table names is there."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MAP_SECTION = "## Capabilities, file by file"
TABLE_ROW = re.compile(r"^\| ([^|]+) \| (.+) \|$", re.MULTILINE)
CODE_SPAN = re.compile(r"`([^`]+)`")


def _tables() -> dict[str, list[str]]:
    """Each table's heading and the paths its rows name, in the order they stand."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split(MAP_SECTION, 1)[1].split("\n## ", 1)[0]
    tables = {}
    for block in section.split("\n### ")[1:]:
        heading, body = block.split("\n", 1)
        tables[heading] = [path for _, paths in TABLE_ROW.findall(body) for path in CODE_SPAN.findall(paths)]
    return tables


def _holds_more_than_a_docstring(module: Path) -> bool:
    body = ast.parse(module.read_text(encoding="utf-8")).body
    has_docstring = bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return len(body) > (1 if has_docstring else 0)


def _mapped_files() -> list[Path]:
    modules = [
        module
        for folder in ("app", "jobs")
        for module in (ROOT / folder).rglob("*.py")
        if module.name != "__init__.py" or _holds_more_than_a_docstring(module)
    ]
    templates = [template for template in (ROOT / "app" / "templates").rglob("*") if template.is_file()]
    return sorted(modules + templates)


def test_the_map_has_a_table_for_each_capability_and_the_shared_kernel():
    assert {"Export files", "Saved queries and reports", "Schedules", "Workspace export", "Shared kernel"} <= set(
        _tables()
    )


def test_every_module_and_template_stands_in_exactly_one_table():
    named = Counter(path for paths in _tables().values() for path in paths)
    files = [path.relative_to(ROOT).as_posix() for path in _mapped_files()]
    assert [path for path in files if named[path] != 1] == []


def test_every_path_the_map_names_exists():
    named = [path for paths in _tables().values() for path in paths]
    assert [path for path in named if not (ROOT / path).exists()] == []
