"""Streaming writers that turn stored export requests into file bytes (CSV, XLSX, PDF)."""

from app.domain.errors import DomainError


class TooManyRows(DomainError):
    """The rows do not fit the format (an Excel sheet holds at most 1,048,576 rows)."""
