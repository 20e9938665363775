"""Logs as JSON lines: one object per line with the time, level, process kind, logger, message,
the request id or the job id and record, and the exception's traceback when there is one.

Secrets never reach a log because nothing logs them (destination secrets are decrypted only into
the storage client, passwords only hashed); `tests/integration/observability` runs real work with
secrets configured and searches every line to keep it so.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from app.observability import context

_CONTEXT_FIELDS = (("request_id", context.request_id), ("job_id", context.job_id), ("record", context.record))


class JsonFormatter(logging.Formatter):
    def __init__(self, process_kind: str):
        super().__init__()
        self._process_kind = process_kind

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "process": self._process_kind,
            "pid": record.process,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, variable in _CONTEXT_FIELDS:
            value = getattr(record, name, None) or variable.get()
            if value:
                entry[name] = value
        http = getattr(record, "http", None)
        if http:
            entry["http"] = http
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(process_kind: str, level: int = logging.INFO) -> None:
    """Send every log record of this process to stdout as JSON lines (replacing other handlers)."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter(process_kind))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
