"""The ids a log line carries: the web request's, or the job's and the record it works on.

Context variables, so threads (a lease renewer, a web server's threads) each see their own.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Iterator
from contextvars import ContextVar

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
job_id: ContextVar[str | None] = ContextVar("job_id", default=None)
# "<kind> <id>", e.g. "export_file 42": the record the job works on.
record: ContextVar[str | None] = ContextVar("record", default=None)

# The WSGI environ key under which a page whose path holds a secret (a signed link's token) gives
# the path the access log writes instead, its route's pattern ("/d/<token>").
LOGGED_PATH = "rhythm.logged_path"

# A request id a proxy sends is kept when it is plain; anything else is replaced.
_ACCEPTABLE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def request_id_from(header_value: str | None) -> str:
    if header_value and _ACCEPTABLE_REQUEST_ID.match(header_value):
        return header_value
    return uuid.uuid4().hex


@contextlib.contextmanager
def job_context(current_job_id: str | None, kind: str, record_id: int) -> Iterator[None]:
    job_token = job_id.set(current_job_id)
    record_token = record.set(f"{kind} {record_id}")
    try:
        yield
    finally:
        job_id.reset(job_token)
        record.reset(record_token)
