"""The JSON log format: one parseable object per line, with the ids of the request or the job."""

from __future__ import annotations

import json
import logging

from app.observability import context
from app.observability.logs import JsonFormatter
from tests.factories import hostile_values


def _line(message: str, *args, exc_info=None, **extra) -> dict:
    record = logging.LogRecord("app.test", logging.WARNING, __file__, 1, message, args, exc_info)
    for name, value in extra.items():
        setattr(record, name, value)
    return json.loads(JsonFormatter("worker").format(record))


def test_a_line_names_its_time_level_process_logger_and_message():
    line = _line("file %s failed", 12)
    assert line["level"] == "warning"
    assert line["process"] == "worker"
    assert line["logger"] == "app.test"
    assert line["message"] == "file 12 failed"
    assert line["time"].endswith("+00:00")


def test_a_line_carries_the_request_id_of_the_request_it_was_written_in():
    token = context.request_id.set("req-12345678")
    try:
        assert _line("hello")["request_id"] == "req-12345678"
    finally:
        context.request_id.reset(token)
    assert "request_id" not in _line("hello")


def test_a_job_line_carries_the_job_id_and_the_record():
    with context.job_context("job-abc", "export_file", 42):
        line = _line("producing")
    assert (line["job_id"], line["record"]) == ("job-abc", "export_file 42")


def test_hostile_messages_stay_one_parseable_line():
    for value in hostile_values():
        formatted = JsonFormatter("web").format(
            logging.LogRecord("app", logging.INFO, __file__, 1, "%s", (value,), None)
        )
        assert "\n" not in formatted
        assert json.loads(formatted)["message"] == value


def test_an_exception_is_kept_with_its_traceback():
    try:
        raise ValueError("broken")
    except ValueError:
        import sys

        line = _line("failed", exc_info=sys.exc_info())
    assert "ValueError: broken" in line["exception"]


def test_a_proxy_request_id_is_kept_only_when_it_is_plain():
    assert context.request_id_from("abcd-1234-efgh") == "abcd-1234-efgh"
    for forged in (None, "", "short", "a" * 65, "bad id with spaces", "x\r\nInjected: 1"):
        replaced = context.request_id_from(forged)
        assert replaced != forged and len(replaced) == 32
