"""Rows to text for package volumes: CSV (RFC 4180) and JSON Lines, exact values, one convention each.

Packages are for data tools, not spreadsheets: no formula guard, every value as stored.

CSV: UTF-8 without a byte order mark, `,` between fields, CRLF after every record, a header
record in every volume. Numbers (integers, decimals with their scale) are written bare; every
other value is quoted with `"` (a `"` inside is doubled). NULL is an empty unquoted field, an
empty text is `""`: the two stay distinct. Dates are `YYYY-MM-DD`, time stamps ISO 8601 in UTC
with their offset (`2026-11-02T18:00:00+00:00`), booleans `"true"` / `"false"`.

JSON Lines: one object per row, keys in column order; integers and decimals as JSON numbers
(a decimal's digits exactly as stored, never through a float), booleans as `true` / `false`,
NULL as `null`, dates and time stamps as ISO 8601 strings as in CSV, text as JSON strings
(UTF-8, not escaped to ASCII).

Each row is converted by one expression generated per column list (as `collections.namedtuple`
does): on millions of rows a call per value costs several times the formatting itself.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from app.vocabulary import PackageFormat

CSV_CONVENTIONS = {
    "dialect": "RFC 4180",
    "delimiter": ",",
    "quote": '"',
    "record_separator": "\r\n",
    "header": "first record of every volume",
    "quoted": "every value except numbers and NULL",
    "null": "empty unquoted field",
    "empty_text": '""',
    "booleans": '"true" / "false"',
    "numbers": "bare; decimals with their exact stored digits, never an exponent",
}
JSONL_CONVENTIONS = {
    "record": "one JSON object per line, keys in column order, lines end with \\n",
    "null": "null",
    "numbers": "JSON numbers; decimals with their exact stored digits, never an exponent",
    "booleans": "true / false",
}
COMMON_CONVENTIONS = {
    "encoding": "UTF-8 without byte order mark",
    "timestamps": "ISO 8601 in UTC with microseconds and offset, e.g. 2026-11-02T18:00:00.000000+00:00",
    "dates": "ISO 8601, YYYY-MM-DD",
    "values": "exact: no formula prefix, no rounding",
}


class _CsvNull:
    """NULL for the csv module: it counts as a number (so it is not quoted) and prints as nothing.

    The csv module of Python 3.11 quotes None under QUOTE_NONNUMERIC, which would make NULL and
    the empty text look the same.
    """

    __slots__ = ()

    def __float__(self) -> float:  # what makes csv treat it as a number
        return 0.0

    def __str__(self) -> str:
        return ""


_NULL = _CsvNull()


def iso_timestamp(value: datetime) -> str:
    """ISO 8601 in UTC, always with microseconds and the offset (one width for every value)."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def plain_decimal(value: Any) -> str:
    """A number's exact digits without an exponent (str(Decimal) writes 1E-7 for 0.0000001)."""
    text = format(value, "f") if isinstance(value, Decimal) else str(value)
    if text in ("NaN", "sNaN", "Infinity", "-Infinity", "nan", "inf", "-inf"):
        raise ValueError(f"{text} is not a number a package can carry")
    return text


def _compile(expression: str, namespace: dict[str, Any]) -> Callable[[Sequence], Any]:
    return eval(f"lambda r: {expression}", namespace)  # noqa: S307  (source built above from column positions only)


class _CsvNumber(str):
    """A number's text that the csv module writes bare: it counts as a number (see _CsvNull)."""

    __slots__ = ()

    def __float__(self) -> float:
        return float(str.__str__(self))


def _csv_decimal(value: Any) -> _CsvNumber:
    return _CsvNumber(plain_decimal(value))


def _csv_cell(position: int, type_: str) -> str:
    value = f"r[{position}]"
    if type_ == "datetime":
        converted = f"_iso({value})"
    elif type_ == "boolean":
        converted = f"('true' if {value} else 'false')"
    elif type_ == "decimal":
        converted = f"_decimal({value})"
    else:  # integers stay numbers (written bare); text and dates are quoted by the csv module
        converted = value
    return f"(_null if {value} is None else {converted})"


class CsvEncoder:
    """Rows → CSV text, for columns of the given catalog types."""

    extension = PackageFormat.CSV

    def __init__(self, names: Sequence[str], types: Sequence[str]):
        if len(names) < 2:
            # The csv module writes a lone empty field as `""` (so the line is not blank), which
            # would make NULL and the empty text one; every catalog dataset has several columns.
            raise ValueError("a CSV package volume needs at least two columns to keep NULL distinct")
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\r\n")
        cells = "".join(f"{_csv_cell(i, t)}, " for i, t in enumerate(types))
        self._convert = _compile(f"({cells})", {"_null": _NULL, "_iso": iso_timestamp, "_decimal": _csv_decimal})
        self.header = self._take(lambda: self._writer.writerow(list(names)))

    def _take(self, write: Callable[[], object]) -> bytes:
        self._buffer.seek(0)
        self._buffer.truncate()
        write()
        return self._buffer.getvalue().encode("utf-8")

    def encode(self, rows: Sequence[Sequence]) -> bytes:
        return self._take(lambda: self._writer.writerows(map(self._convert, rows)))


def _json_value(position: int, type_: str) -> str:
    value = f"r[{position}]"
    if type_ == "text":
        converted = f"_string({value})"
    elif type_ in ("integer", "decimal"):
        converted = f"_number({value})"
    elif type_ == "boolean":
        converted = f"('true' if {value} else 'false')"
    elif type_ == "datetime":
        converted = f"_string(_iso({value}))"
    elif type_ == "date":
        converted = f"_string({value}.isoformat())"
    else:
        raise ValueError(f"unknown column type {type_!r}")
    return f"('null' if {value} is None else {converted})"


class JsonLinesEncoder:
    """Rows → JSON Lines text, for columns of the given catalog types."""

    extension = PackageFormat.JSONL
    header = b""

    def __init__(self, names: Sequence[str], types: Sequence[str]):
        pieces = [
            f"{(('{' if i == 0 else ',') + json.dumps(name, ensure_ascii=False) + ':')!r} + {_json_value(i, t)}"
            for i, (name, t) in enumerate(zip(names, types, strict=True))
        ]
        namespace = {"_string": json.encoder.encode_basestring, "_number": plain_decimal, "_iso": iso_timestamp}
        body = " + ".join(pieces) if pieces else "'{'"
        self._line = _compile(body + " + '}\\n'", namespace)

    def encode(self, rows: Sequence[Sequence]) -> bytes:
        return "".join(map(self._line, rows)).encode("utf-8")


def encoder_for(format: str, names: Sequence[str], types: Sequence[str]) -> CsvEncoder | JsonLinesEncoder:
    if format == PackageFormat.CSV:
        return CsvEncoder(names, types)
    if format == PackageFormat.JSONL:
        return JsonLinesEncoder(names, types)
    raise ValueError(f"unknown package format {format!r}")


def conventions(format: str) -> dict[str, Any]:
    specific = CSV_CONVENTIONS if format == PackageFormat.CSV else JSONL_CONVENTIONS
    return {**COMMON_CONVENTIONS, **specific}
