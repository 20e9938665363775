"""Log capture for the observability tests: this process's lines in the product's JSON form."""

from __future__ import annotations

import io
import logging

import pytest

from app.observability.logs import JsonFormatter


@pytest.fixture
def json_log() -> io.StringIO:
    """This process's log lines in the product's JSON form, for the duration of the test."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("web"))
    root = logging.getLogger()
    root.addHandler(handler)
    previous_level = root.level
    root.setLevel(logging.DEBUG)
    yield stream
    root.removeHandler(handler)
    root.setLevel(previous_level)
