"""Cell text as the CSV export and the preview write it."""

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from app.domain.sources.catalog import get_dataset
from app.rendering.cells import format_cell, formatters_for


def test_integer_is_written_as_plain_digits():
    """Integers, negative ones included, are their decimal digits."""
    assert format_cell(-42, "integer") == "-42"


@pytest.mark.parametrize(
    ("value", "text"),
    [(Decimal("7.50"), "7.50"), (Decimal("4.0"), "4.0"), (Decimal("-0.25"), "-0.25"), (Decimal("1E+2"), "100")],
)
def test_decimal_keeps_its_scale_in_plain_notation(value, text):
    """A decimal keeps the digits it was stored with and never uses an exponent."""
    assert format_cell(value, "decimal") == text


def test_date_is_iso():
    """Dates are YYYY-MM-DD, with a four-digit year even before 1000."""
    assert format_cell(date(2026, 3, 1), "date") == "2026-03-01"
    assert format_cell(date(999, 1, 2), "date") == "0999-01-02"


def test_datetime_is_utc_with_z_and_whole_seconds():
    """Datetimes are shown in UTC with a Z, fractions of a second dropped."""
    paris = timezone(timedelta(hours=1))
    assert format_cell(datetime(2026, 11, 2, 19, 0, 5, 999999, tzinfo=paris), "datetime") == "2026-11-02T18:00:05Z"
    assert format_cell(datetime(2026, 11, 2, 18, 0, tzinfo=UTC), "datetime") == "2026-11-02T18:00:00Z"


def test_boolean_is_true_or_false():
    """Booleans are the words true and false."""
    assert (format_cell(True, "boolean"), format_cell(False, "boolean")) == ("true", "false")


@pytest.mark.parametrize("column_type", ["text", "integer", "decimal", "date", "datetime", "boolean"])
def test_missing_value_is_empty_for_every_type(column_type):
    """NULL is the empty string whatever the column type."""
    assert format_cell(None, column_type) == ""


def test_text_is_neutralised_but_a_negative_number_is_not():
    """Only text cells get the formula-injection quote."""
    assert format_cell("-2+3", "text") == "'-2+3"
    assert format_cell(Decimal("-2.50"), "decimal") == "-2.50"


def test_formatters_follow_the_column_order():
    """formatters_for gives one formatter per column, matching each column's type."""
    dataset = get_dataset("timesheet_entries")
    columns = [dataset.column("approved"), dataset.column("hours"), dataset.column("note")]
    row = (False, Decimal("7.50"), "=1")
    assert [f(v) for f, v in zip(formatters_for(columns), row, strict=True)] == ["false", "7.50", "'=1"]
