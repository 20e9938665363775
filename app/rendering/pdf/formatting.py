"""The text a PDF cell shows for a value: numbers, dates, booleans; and exact sums."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from app.rendering.pdf.model import NUMERIC_TYPES, PdfColumn, PdfLayout


def format_number(value: Any, *, thousands_separator: str = ",", decimal_separator: str = ".") -> str:
    """A number with thousands separators, keeping the decimals the value has.

    ``Decimal("1234.50")`` is "1,234.50", ``1234.5`` is "1,234.5", ``1234`` is "1,234".
    A string that reads as a number is formatted like one; any other string is returned
    as it is.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        text = f"{value:,}"
    elif isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        text = format(Decimal(repr(value)), ",f")
    elif isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        text = format(value, ",f")
    else:
        raw = str(value).strip()
        try:
            # Plain notation only: "1,5" could be either a decimal comma or a thousands
            # separator, so a string with a comma is printed as it is.
            number = Decimal(raw) if raw else None
        except InvalidOperation:
            return str(value)
        if number is None or not number.is_finite():
            return str(value)
        text = format(number, ",f")
    if thousands_separator != "," or decimal_separator != ".":
        text = text.translate({ord(","): thousands_separator, ord("."): decimal_separator})
    return text


def _strftime(value: date, fmt: str) -> str:
    # The C library prints %Y without padding, so year 1 would read "1"; ISO 8601 has four digits.
    if "%Y" in fmt and value.year < 1000:
        fmt = fmt.replace("%%", "\0").replace("%Y", f"{value.year:04d}").replace("\0", "%%")
    return value.strftime(fmt)


def _parse_iso(text: str) -> date | datetime | None:
    text = text.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _parsed_if_iso(value: Any) -> Any:
    """A string that reads as an ISO date or datetime, parsed; anything else as it is."""
    if isinstance(value, str):
        parsed = _parse_iso(value)
        return value if parsed is None else parsed
    return value


def _in_utc(moment: datetime) -> datetime | None:
    """``moment`` in UTC (a naive one is read as UTC); None past the calendar's ends."""
    if moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return None


def format_date(value: Any, fmt: str) -> str:
    """A date (or the date of a datetime) in ``fmt``; ISO strings are parsed first."""
    if value is None:
        return ""
    value = _parsed_if_iso(value)
    if isinstance(value, datetime):
        moment = _in_utc(value)
        if moment is None:
            return value.isoformat()
        value = moment.date()
    if isinstance(value, date):
        return _strftime(value, fmt)
    return str(value)


def _in_zone(moment: datetime, time_zone: str) -> datetime | None:
    """``moment`` (a naive one read as UTC) on the clocks of ``time_zone``; None past the calendar's ends."""
    if time_zone == "UTC":
        return _in_utc(moment)
    try:
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(ZoneInfo(time_zone))
    except OverflowError:
        return None


def format_datetime(value: Any, fmt: str, date_fmt: str | None = None, time_zone: str = "UTC") -> str:
    """A datetime in ``fmt`` on the clocks of ``time_zone`` (UTC unless told; a naive one is
    read as UTC); a plain date (which has no time to show) in ``date_fmt``."""
    if value is None:
        return ""
    value = _parsed_if_iso(value)
    if isinstance(value, datetime):
        moment = _in_zone(value, time_zone)
        # Past the calendar's ends in the zone: the value as written, offset and all.
        return value.isoformat() if moment is None else _strftime(moment, fmt)
    if isinstance(value, date):
        return _strftime(value, date_fmt or fmt)
    return str(value)


_TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
_FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


def format_boolean(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | int):
        return "Yes" if value else "No"
    word = str(value).strip().lower()
    if word in _TRUE_WORDS:
        return "Yes"
    if word in _FALSE_WORDS:
        return "No"
    return str(value)


def format_value(column: PdfColumn, value: Any, layout: PdfLayout) -> str:
    """The text a cell of ``column`` shows for ``value``."""
    if value is None:
        return ""
    kind = column.type
    if kind in NUMERIC_TYPES:
        return format_number(
            value,
            thousands_separator=layout.thousands_separator,
            decimal_separator=layout.decimal_separator,
        )
    if kind == "date":
        return format_date(value, layout.date_format)
    if kind == "datetime":
        return format_datetime(value, layout.datetime_format, layout.date_format, layout.time_zone)
    if kind == "boolean":
        return format_boolean(value)
    if isinstance(value, bytes | bytearray | memoryview):
        # A byte that is not UTF-8 prints as its escape (\xff), not as a replacement mark that
        # would hide which byte it was.
        return bytes(value).decode("utf-8", "backslashreplace")
    return str(value)


def figure_text(value: Any, layout: PdfLayout) -> str:
    """A summary figure: numbers, booleans and dates formatted, anything else as text."""
    if isinstance(value, bool):
        return format_boolean(value)
    if isinstance(value, int | float | Decimal):
        return format_number(
            value, thousands_separator=layout.thousands_separator, decimal_separator=layout.decimal_separator
        )
    if isinstance(value, datetime):
        return format_datetime(value, layout.datetime_format, time_zone=layout.time_zone)
    if isinstance(value, date):
        return format_date(value, layout.date_format)
    return "" if value is None else str(value)


def exact_number(value: Any) -> Decimal | int | None:
    """``value`` as an exact number to add up (a float by its shortest decimal text), or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def add_exact(total: Decimal | int | None, value: Any) -> Decimal | int | None:
    """``total`` plus ``value``, both exact: sums of decimals never pass through a float."""
    number = exact_number(value)
    if number is None:
        return total
    if total is None:
        return number
    return total + number


def rows_label(count: int) -> str:
    return f"{count:,} row" + ("" if count == 1 else "s")


def add_to(totals: dict[str, Any], name: str, value: Any) -> None:
    """Add ``value`` to ``totals[name]`` exactly; a value that is not a number adds nothing."""
    total = add_exact(totals.get(name), value)
    if total is not None:
        totals[name] = total
