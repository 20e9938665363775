"""A saved query's definition: validated against the catalog, its relative date ranges resolved and substituted."""

from __future__ import annotations

from datetime import date

import pytest

from app.domain.errors import ValidationError
from app.domain.sources.query_spec import (
    MAX_COLUMNS,
    MAX_FILTERS,
    MAX_SORT,
    MAX_TEXT_VALUE,
    resolve_range,
    substitute,
    validate_definition,
)
from app.domain.sources.stored_request import AppliedRange, Filter

MAX_ROWS = 100_000


def definition(**overrides) -> dict:
    values = {"dataset": "timesheet_entries", "columns": ["id", "note", "hours"], "filters": [], "sort": []}
    return {**values, **overrides}


def refusal(**overrides) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        validate_definition(definition(**overrides), MAX_ROWS)
    return caught.value


def one_filter(column: str, op: str, value=None) -> dict:
    return validate_definition(definition(filters=[{"column": column, "op": op, "value": value}]), MAX_ROWS)["filters"][
        0
    ]


def test_a_valid_definition_comes_back_in_normal_form():
    """Missing parts become empty lists and no row limit."""
    assert validate_definition({"dataset": "timesheet_entries", "columns": ["id"]}, MAX_ROWS) == {
        "dataset": "timesheet_entries",
        "columns": ["id"],
        "filters": [],
        "sort": [],
        "parameters": [],
        "row_limit": None,
    }


def test_an_unknown_dataset_is_refused_on_the_dataset_field():
    error = refusal(dataset="salaries")
    assert (str(error), error.field) == ("Choose a dataset.", "dataset")


def test_a_definition_without_columns_is_refused():
    assert refusal(columns=[]).field == "columns"


def test_more_columns_than_allowed_are_refused():
    assert str(refusal(columns=["id"] * (MAX_COLUMNS + 1))) == f"Choose at most {MAX_COLUMNS} columns."


def test_a_column_the_dataset_lacks_is_named_in_the_refusal():
    assert str(refusal(columns=["id", "salary"])) == "Unknown column “salary” in Timesheet entries."


def test_a_column_chosen_twice_is_refused():
    assert str(refusal(columns=["id", "id"])) == "Each column can be chosen once."


def test_more_filters_than_allowed_are_refused():
    filters = [{"column": "approved", "op": "is_true"}] * (MAX_FILTERS + 1)
    assert refusal(filters=filters).field == "filters"


def test_a_filter_on_an_unknown_column_names_its_position():
    error = refusal(filters=[{"column": "approved", "op": "is_true"}, {"column": "salary", "op": "eq", "value": 1}])
    assert (str(error), error.field) == ("Filter 2: unknown column “salary”.", "filters-1")


def test_an_operator_the_column_type_lacks_is_refused():
    """“contains” is for text; on a number it is refused with the column's label."""
    assert str(refusal(filters=[{"column": "hours", "op": "contains", "value": "1"}])) == (
        "Filter 1: “contains” cannot be used on “Hours”."
    )


def test_a_valueless_operator_keeps_no_value():
    assert one_filter("note", "is_empty", "ignored") == {"column": "note", "op": "is_empty", "value": None}


def test_a_text_value_is_kept_exactly_as_given():
    """Spaces around a text value are part of what is looked for."""
    assert one_filter("note", "contains", "  50% _off ")["value"] == "  50% _off "


def test_a_text_value_longer_than_allowed_is_refused():
    assert "longer than" in str(refusal(filters=[{"column": "note", "op": "eq", "value": "x" * (MAX_TEXT_VALUE + 1)}]))


def test_an_integer_value_is_parsed_to_a_number():
    assert one_filter("id", "ge", " 42 ")["value"] == 42


@pytest.mark.parametrize("value", ["4.5", "٤٢", "1_0", "", "x"])
def test_an_integer_filter_refuses_what_is_not_an_ascii_whole_number(value):
    assert refusal(filters=[{"column": "id", "op": "eq", "value": value}]).field == "filters-0"


def test_a_decimal_value_is_kept_as_its_digits():
    assert one_filter("hours", "gt", "7.50")["value"] == "7.50"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e13", "٣.5", "1_0", "7,5"])
def test_a_decimal_filter_refuses_what_is_not_a_plain_finite_number(value):
    error = refusal(filters=[{"column": "hours", "op": "eq", "value": value}])
    assert str(error).endswith("is not a number (column “Hours”).")


def test_a_date_value_must_be_an_iso_date():
    assert one_filter("work_date", "eq", "2026-11-02")["value"] == "2026-11-02"
    assert "YYYY-MM-DD" in str(refusal(filters=[{"column": "work_date", "op": "eq", "value": "02/11/2026"}]))


def test_a_date_time_value_without_a_time_means_midnight():
    assert one_filter("recorded_at", "ge", "2026-11-02")["value"] == "2026-11-02T00:00:00"


def test_a_date_time_value_drops_its_offset():
    assert one_filter("recorded_at", "lt", "2026-11-02 18:30+02:00")["value"] == "2026-11-02T18:30:00"


def test_between_takes_two_comma_separated_values():
    assert one_filter("hours", "between", "1, 8")["value"] == ["1", "8"]


def test_between_with_one_value_is_refused():
    assert "needs two values" in str(refusal(filters=[{"column": "hours", "op": "between", "value": "1"}]))


def test_one_of_drops_empty_items_and_trims_the_rest():
    assert one_filter("team_name", "in", "ICU, ,Ward B,")["value"] == ["ICU", "Ward B"]


def test_one_of_with_more_than_a_hundred_values_is_refused():
    values = ",".join(str(i) for i in range(101))
    assert "between 1 and 100" in str(refusal(filters=[{"column": "team_name", "op": "in", "value": values}]))


def test_sort_keys_default_to_ascending():
    sort = validate_definition(definition(sort=[{"column": "note"}]), MAX_ROWS)["sort"]
    assert sort == [{"column": "note", "direction": "asc"}]


def test_more_sort_keys_than_allowed_are_refused():
    keys = [{"column": name} for name in ("id", "note", "hours", "work_date")[: MAX_SORT + 1]]
    assert str(refusal(sort=keys)) == f"Sort by at most {MAX_SORT} columns."


def test_a_sort_direction_other_than_ascending_or_descending_is_refused():
    assert refusal(sort=[{"column": "id", "direction": "up"}]).field == "sort"


def test_a_date_range_on_a_column_that_is_not_a_date_is_refused():
    assert refusal(parameters=[{"column": "hours", "range": "today"}]).field == "parameters"


def test_a_date_range_not_offered_is_refused():
    assert str(refusal(parameters=[{"column": "work_date", "range": "next_year"}])) == (
        "Choose one of the offered date ranges."
    )


def test_the_row_limit_is_a_whole_number_within_the_maximum():
    assert validate_definition(definition(row_limit="500"), MAX_ROWS)["row_limit"] == 500
    assert str(refusal(row_limit=MAX_ROWS + 1)) == f"The row limit is between 1 and {MAX_ROWS:,}."


def test_an_empty_row_limit_means_none():
    assert validate_definition(definition(row_limit=""), MAX_ROWS)["row_limit"] is None


def test_a_nul_character_anywhere_in_a_filter_is_refused_before_anything_else():
    """PostgreSQL cannot store NUL; the refusal names the filter."""
    assert refusal(filters=[{"column": "note", "op": "eq", "value": "a\x00b"}]).field == "filters-0"


# 2026-11-18 is a Wednesday.
WEDNESDAY = date(2026, 11, 18)


@pytest.mark.parametrize(
    ("name", "first", "last"),
    [
        ("today", date(2026, 11, 18), date(2026, 11, 18)),
        ("yesterday", date(2026, 11, 17), date(2026, 11, 17)),
        ("last_7_days", date(2026, 11, 12), date(2026, 11, 18)),
        ("last_30_days", date(2026, 10, 20), date(2026, 11, 18)),
        ("this_week", date(2026, 11, 16), date(2026, 11, 18)),
        ("last_week", date(2026, 11, 9), date(2026, 11, 15)),
        ("this_month", date(2026, 11, 1), date(2026, 11, 18)),
        ("last_month", date(2026, 10, 1), date(2026, 10, 31)),
        ("this_year", date(2026, 1, 1), date(2026, 11, 18)),
    ],
)
def test_each_relative_range_covers_its_days_inclusive(name, first, last):
    assert resolve_range(name, WEDNESDAY) == (first, last)


def test_last_month_in_january_is_december_of_the_year_before():
    assert resolve_range("last_month", date(2027, 1, 5)) == (date(2026, 12, 1), date(2026, 12, 31))


def test_this_week_on_a_monday_is_that_day_alone():
    assert resolve_range("this_week", date(2026, 11, 16)) == (date(2026, 11, 16), date(2026, 11, 16))


def test_a_date_range_on_a_date_column_becomes_a_between_filter():
    valid = validate_definition(definition(parameters=[{"column": "work_date", "range": "last_week"}]), MAX_ROWS)
    request = substitute(valid, WEDNESDAY)
    assert request.filters == (Filter("work_date", "between", ("2026-11-09", "2026-11-15")),)
    assert request.parameters_applied == (AppliedRange("work_date", "last_week", "2026-11-09", "2026-11-15"),)


def test_a_date_range_on_a_date_time_column_takes_the_whole_last_day():
    """The filter ends before midnight after the last day, so 23:59:59.9 on that day is in."""
    valid = validate_definition(definition(parameters=[{"column": "recorded_at", "range": "yesterday"}]), MAX_ROWS)
    assert substitute(valid, WEDNESDAY).filters == (
        Filter("recorded_at", "ge", "2026-11-17T00:00:00"),
        Filter("recorded_at", "lt", "2026-11-18T00:00:00"),
    )


def test_substitution_keeps_the_saved_filters_before_the_ranges():
    valid = validate_definition(
        definition(
            filters=[{"column": "approved", "op": "is_true"}],
            parameters=[{"column": "work_date", "range": "today"}],
            row_limit=10,
        ),
        MAX_ROWS,
    )
    request = substitute(valid, WEDNESDAY)
    assert [f.column for f in request.filters] == ["approved", "work_date"]
    assert (request.dataset, request.columns, request.row_limit) == ("timesheet_entries", ("id", "note", "hours"), 10)
