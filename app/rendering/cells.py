"""Text for one cell, the way the CSV export and the query preview both show it.

One formatter per catalog column type. PostgreSQL's COPY renders the same text in SQL for the
CSV export (app/data/csv_copy.py), and a test holds the two byte-for-byte equal:

- integer: decimal digits; decimal: plain notation keeping the stored scale (7.50 stays "7.50");
- date: YYYY-MM-DD; datetime: YYYY-MM-DDTHH:MM:SSZ in UTC, fractions of a second dropped;
- boolean: "true" / "false"; text: guarded against formula injection (app/rendering/neutralise.py),
  as a spreadsheet-safe CSV file writes it (the CSV writer quotes it, or skips the guard for files
  "for data tools");
- a missing value (NULL): the empty string, whatever the type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from app.domain.sources.catalog import Column
from app.rendering.neutralise import neutralise

# Each formatter takes the values of its own column type (or None), as the rows bring them.
CellFormatter = Callable[[Any], str]


def _text(value: str | None) -> str:
    return "" if value is None else neutralise(value)


def _integer(value: int | None) -> str:
    return "" if value is None else str(value)


def _decimal(value: Decimal | None) -> str:
    return "" if value is None else format(value, "f")


def _date(value: date | None) -> str:
    return "" if value is None else value.isoformat()


def _datetime(value: datetime | None) -> str:
    if value is None:
        return ""
    # A naive value can only come from a column outside UTCDateTime; it is read as UTC.
    moment = value.astimezone(UTC) if value.tzinfo is not None else value
    return moment.replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def _boolean(value: bool | None) -> str:
    if value is None:
        return ""
    return "true" if value else "false"


FORMATTERS: dict[str, CellFormatter] = {
    "text": _text,
    "integer": _integer,
    "decimal": _decimal,
    "date": _date,
    "datetime": _datetime,
    "boolean": _boolean,
}


def format_cell(value: object, column_type: str) -> str:
    """The cell's text as the CSV export writes it."""
    return FORMATTERS[column_type](value)


def formatters_for(columns: Sequence[Column]) -> list[CellFormatter]:
    """One formatter per column, in order, for formatting whole rows without lookups."""
    return [FORMATTERS[column.type] for column in columns]
