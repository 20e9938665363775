"""Every text input's `maxlength` is the limit the server's rule states (app/templating.py,
TEXT_LIMITS), never a number written in a template, so the page and the rule cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from app.templating import TEXT_LIMITS

TEMPLATES = Path(__file__).resolve().parents[3] / "app" / "templates"
LITERAL_MAXLENGTH = re.compile(r"maxlength\s*=\s*[\"']?\s*\d")
NAMED_LIMIT = re.compile(r"text_limits\.(\w+)")


def _templates() -> list[Path]:
    return sorted(path for path in TEMPLATES.rglob("*.html") if "vendor" not in path.parts)


def test_no_template_writes_a_numeric_maxlength():
    literal = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in _templates()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if LITERAL_MAXLENGTH.search(line)
    ]
    assert literal == []


def test_every_limit_a_template_names_is_declared():
    named = {name for path in _templates() for name in NAMED_LIMIT.findall(path.read_text(encoding="utf-8"))}
    assert named and named <= set(TEXT_LIMITS)
