"""gunicorn's access lines in the product's JSON form keep the request's path, also for the bare 500
gunicorn writes itself when an app raised past its handlers (its environ then carries no path),
and never a signed link's token."""

from __future__ import annotations

import logging
from datetime import timedelta
from types import SimpleNamespace

from gunicorn.config import Config

from app.observability.context import LOGGED_PATH
from app.observability.gunicorn_logging import JsonLogger


def _access_line(environ: dict) -> logging.LogRecord:
    config = Config()
    config.set("accesslog", "-")
    logger = JsonLogger(config)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.access_log.addHandler(handler)
    response = SimpleNamespace(headers=[("X-Request-ID", "r-1")], status="500 Internal Server Error", sent=0)
    request = SimpleNamespace(method="GET", path="/w/1/files/")
    logger.access(response, request, environ, timedelta(milliseconds=12))
    return records[-1]


def test_gunicorns_own_500_is_logged_with_the_requests_method_and_path():
    line = _access_line({"REQUEST_METHOD": "GET"})
    assert line.getMessage() == "GET /w/1/files/ 500"
    assert line.http["path"] == "/w/1/files/"  # type: ignore[attr-defined]


def test_an_apps_answer_is_logged_with_the_path_its_environ_names():
    line = _access_line({"REQUEST_METHOD": "POST", "PATH_INFO": "/login"})
    assert line.getMessage() == "POST /login 500"


def test_a_path_holding_a_link_s_token_is_logged_as_the_route_the_app_names():
    line = _access_line({"REQUEST_METHOD": "GET", "PATH_INFO": "/d/secret-token", LOGGED_PATH: "/d/<token>"})
    assert line.getMessage() == "GET /d/<token> 500"
    assert "secret-token" not in str(line.http)  # type: ignore[attr-defined]
