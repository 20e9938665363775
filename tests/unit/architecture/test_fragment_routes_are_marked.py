"""A route that renders a `_*.html` template answers a piece of a page; it carries
`@fragment_of(page)` (app/blueprints/fragments.py), so a person opening its URL without htmx gets
the page it belongs to, and the browser test that opens every fragment route finds it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BLUEPRINTS = ROOT / "app" / "blueprints"
FRAGMENT_TEMPLATE = re.compile(r"(?:^|/)_[^/]+\.html")
ROUTE_DECORATORS = {"get", "post", "put", "patch", "delete", "route"}


def _decorator_names(function: ast.FunctionDef) -> list[str]:
    names = []
    for decorator in function.decorator_list:
        called = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(called, ast.Attribute):
            names.append(called.attr)
        elif isinstance(called, ast.Name):
            names.append(called.id)
    return names


def _routes_rendering_fragments() -> dict[str, bool]:
    """Each route function naming a `_*.html` template, and whether it is marked a fragment route."""
    found = {}
    for module in sorted(BLUEPRINTS.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = _decorator_names(node)
            if not ROUTE_DECORATORS & set(decorators):
                continue
            templates = [
                constant.value
                for constant in ast.walk(node)
                if isinstance(constant, ast.Constant)
                and isinstance(constant.value, str)
                and FRAGMENT_TEMPLATE.search(constant.value)
            ]
            if templates:
                found[f"{module.relative_to(ROOT)}:{node.name}"] = "fragment_of" in decorators
    return found


def test_the_blueprints_have_fragment_routes_to_check():
    assert len(_routes_rendering_fragments()) >= 10


def test_every_route_that_renders_a_fragment_template_is_marked_as_a_fragment_route():
    unmarked = [route for route, marked in _routes_rendering_fragments().items() if not marked]
    assert unmarked == []
