"""Streaming writers that turn stored export requests into file bytes (CSV, XLSX, PDF)."""

from typing import Protocol

from app.domain.errors import Conflict


class TooManyRows(Conflict):
    """The rows do not fit the format (an Excel sheet holds at most 1,048,576 rows)."""


class ByteSink(Protocol):
    """Where a writer puts a file's bytes: an open binary file, or storage's PartWriter (write only)."""

    def write(self, data: bytes, /) -> object: ...
