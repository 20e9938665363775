"""Every response carries the security headers, and an oversized request answers 413 with a page."""

from __future__ import annotations

import pytest


def _assert_security_headers(response) -> None:
    policy = response.headers["Content-Security-Policy"]
    directives = {part.strip().split(" ", 1)[0]: part.strip() for part in policy.split(";")}
    assert directives["script-src"] == "script-src 'self'"
    assert directives["style-src"] == "style-src 'self'"
    assert directives["frame-ancestors"] == "frame-ancestors 'none'"
    assert "unsafe" not in policy
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


@pytest.mark.parametrize(
    "path",
    ["/login", "/static/css/app.css", "/static/js/widths.js", "/no-such-page", "/", "/healthz"],
)
def test_responses_carry_the_security_headers(client, path):
    """Pages, static files, error pages, redirects and JSON alike."""
    _assert_security_headers(client.get(path))


def test_signed_in_pages_carry_the_security_headers(client, auth, world):
    auth.login(world.member.email)
    for path in (f"/w/{world.workspace.id}/", f"/w/{world.workspace.id}/queries/", "/account/password"):
        response = client.get(path)
        assert response.status_code == 200, path
        _assert_security_headers(response)


def test_templates_hold_no_inline_script_or_style(app):
    """The policy refuses inline scripts and style attributes, so no template may carry one."""
    import re
    from pathlib import Path

    inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\sstyle\s*=|<style\b|\son[a-z]+\s*=", re.IGNORECASE)
    templates = Path(app.root_path, "templates").rglob("*.html")
    offending = [f"{path.name}: {match.group()}" for path in templates for match in inline.finditer(path.read_text())]
    assert offending == []


def test_a_request_over_the_size_limit_answers_413_with_a_page(client, app):
    """A body larger than MAX_REQUEST_BYTES is refused before any route reads it, with a readable page."""
    limit = app.config["MAX_CONTENT_LENGTH"]
    response = client.post("/login", data={"email": "a@example.test", "password": "x" * (limit + 1)})
    assert response.status_code == 413
    html = response.get_data(as_text=True)
    assert "The request is larger than 1 MB, the most this site accepts." in html
    _assert_security_headers(response)


def test_a_request_under_the_size_limit_is_served(client):
    """A 400 KB form, well under the limit, reaches the route (which ignores the extra field)."""
    response = client.post("/login", data={"email": "a@example.test", "password": "x", "extra": "x" * 400_000})
    assert response.status_code == 401
