"""Package encoders: exact values, one NULL convention for CSV, types kept in JSON Lines."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from app.rendering.package.encoders import CsvEncoder, JsonLinesEncoder
from tests.factories import hostile_values

NAMES = ["id", "name", "rate", "at", "active", "on"]
TYPES = ["integer", "text", "decimal", "datetime", "boolean", "date"]
ROW = (7, "Zoë", Decimal("21.50"), datetime(2026, 11, 2, 18, 0, tzinfo=UTC), True, date(2026, 3, 1))


def test_csv_writes_numbers_bare_and_quotes_everything_else():
    encoder = CsvEncoder(NAMES, TYPES)
    assert encoder.header == b'"id","name","rate","at","active","on"\r\n'
    assert encoder.encode([ROW]) == '7,"Zoë",21.50,"2026-11-02T18:00:00.000000+00:00","true","2026-03-01"\r\n'.encode()


def test_csv_tells_null_from_empty_text():
    encoder = CsvEncoder(["a", "b"], ["text", "text"])
    assert encoder.encode([(None, ""), ("", None)]) == b',""\r\n"",\r\n'


def test_csv_refuses_a_single_column_where_null_and_empty_text_would_look_alike():
    with pytest.raises(ValueError, match="at least two columns"):
        CsvEncoder(["a"], ["text"])


def test_csv_keeps_hostile_text_exactly_as_stored():
    encoder = CsvEncoder(["id", "value"], ["integer", "text"])
    values = hostile_values()
    text = (encoder.header + encoder.encode(list(enumerate(values)))).decode("utf-8")
    records = list(csv.reader(io.StringIO(text, newline="")))
    assert [record[1] for record in records[1:]] == values


def test_csv_time_stamps_are_converted_to_utc_with_offset():
    encoder = CsvEncoder(["id", "at"], ["integer", "datetime"])
    paris = datetime(2026, 7, 1, 9, 30, tzinfo=timezone(timedelta(hours=2)))
    assert encoder.encode([(1, paris)]) == b'1,"2026-07-01T07:30:00.000000+00:00"\r\n'


def test_json_lines_keep_types_and_exact_decimals():
    line = JsonLinesEncoder(NAMES, TYPES).encode([ROW]).decode()
    assert line.endswith("\n") and line.count("\n") == 1
    assert '"rate":21.50' in line
    parsed = json.loads(line, parse_float=Decimal)
    assert parsed == {
        "id": 7,
        "name": "Zoë",
        "rate": Decimal("21.50"),
        "at": "2026-11-02T18:00:00.000000+00:00",
        "active": True,
        "on": "2026-03-01",
    }
    assert list(parsed) == NAMES


def test_json_lines_write_null_as_null():
    line = JsonLinesEncoder(NAMES, TYPES).encode([(None,) * 6])
    assert json.loads(line) == dict.fromkeys(NAMES)


def test_json_lines_keep_hostile_text_exactly_as_stored():
    values = hostile_values()
    lines = JsonLinesEncoder(["value"], ["text"]).encode([(value,) for value in values]).decode("utf-8")
    assert [json.loads(line)["value"] for line in lines.split("\n")[:-1]] == values


def test_decimals_are_written_with_their_digits_and_never_an_exponent():
    csv_encoder = CsvEncoder(["id", "rate"], ["integer", "decimal"])
    assert csv_encoder.encode([(1, Decimal("1E-7")), (2, Decimal("120.00"))]) == b"1,0.0000001\r\n2,120.00\r\n"
    line = JsonLinesEncoder(["rate"], ["decimal"]).encode([(Decimal("1E-7"),)])
    assert line == b'{"rate":0.0000001}\n'


def test_a_decimal_that_is_not_a_number_is_refused():
    with pytest.raises(ValueError, match="not a number"):
        JsonLinesEncoder(["rate"], ["decimal"]).encode([(Decimal("NaN"),)])
