"""The production web server as configured in gunicorn.conf.py: JSON access lines with the request
id, and HSTS when a trusted proxy says the request came over TLS."""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.fixtures.smtp import free_port
from tests.fixtures.workers import PROJECT_ROOT, BackgroundProcess, wait_for

GUNICORN = str(Path(sys.executable).with_name("gunicorn"))


@pytest.fixture
def gunicorn(app_context, tmp_path):
    port = free_port()
    process = BackgroundProcess(
        [GUNICORN, "-c", str(PROJECT_ROOT / "gunicorn.conf.py"), "wsgi:app"],
        {**os.environ, "WEB_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1", "WEB_THREADS": "2"},
        tmp_path / "gunicorn.log",
    )
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: _answers(base), timeout=30, what="gunicorn to serve")
    yield base, process
    process.stop()


def _answers(base: str) -> bool:
    try:
        urllib.request.urlopen(base + "/login", timeout=2)
    except OSError:
        return False
    return True


def _get(url: str, **headers: str):
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5)


def test_access_lines_are_json_with_the_request_id(gunicorn):
    base, process = gunicorn
    response = _get(base + "/login", **{"X-Request-ID": "access-line-0001"})
    assert response.headers["X-Request-ID"] == "access-line-0001"

    def access_line():
        for line in process.output().splitlines():
            if line.startswith("{") and json.loads(line).get("request_id") == "access-line-0001":
                return json.loads(line)
        return None

    line = wait_for(access_line, timeout=10, what="the access line")
    assert line["http"]["method"] == "GET"
    assert line["http"]["path"] == "/login"
    assert line["http"]["status"] == 200
    assert line["http"]["duration_ms"] >= 0


def test_every_line_gunicorn_writes_is_json(gunicorn):
    base, process = gunicorn
    _get(base + "/login")
    lines = [line for line in process.output().splitlines() if line.strip()]
    assert lines
    for line in lines:
        json.loads(line)


def test_hsts_follows_the_tls_a_trusted_proxy_reports(gunicorn):
    base, _ = gunicorn
    assert "Strict-Transport-Security" not in _get(base + "/login").headers
    assert _get(base + "/login", **{"X-Forwarded-Proto": "https"}).headers["Strict-Transport-Security"]
