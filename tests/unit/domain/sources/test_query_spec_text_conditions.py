"""Text conditions in a query definition: what is saved, what is refused, and old definitions still load."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.sources.query_spec import OPERATORS, validate_definition
from app.domain.sources.stored_request import Filter

MAX_ROWS = 1_000_000


def _definition(*filters: dict) -> dict:
    return {"dataset": "timesheet_entries", "columns": ["id", "project"], "filters": list(filters)}


def _filters(*filters: dict, saving: bool = False) -> list[dict]:
    return validate_definition(_definition(*filters), MAX_ROWS, saving=saving)["filters"]


def test_a_new_text_filter_starts_with_is_any_case():
    assert next(iter(OPERATORS["text"])) == "ieq"


@pytest.mark.parametrize("op", ["ieq", "eq", "ne", "contains", "starts_with"])
def test_text_conditions_keep_the_value_as_typed(op):
    value = "  50%_off\\ ÉCOLE '; DROP TABLE x; --"
    assert _filters({"column": "project", "op": op, "value": value}, saving=True) == [
        {"column": "project", "op": op, "value": value}
    ]


@pytest.mark.parametrize("op", ["ieq", "eq", "ne", "contains", "starts_with"])
def test_a_definition_being_written_refuses_an_empty_text(op):
    with pytest.raises(ValidationError, match="enter the text to compare “Project” with") as refused:
        _filters({"column": "project", "op": op, "value": "   "}, saving=True)
    assert refused.value.field == "filters-0"


@pytest.mark.parametrize("op", ["eq", "ne", "contains", "starts_with"])
def test_a_stored_definition_with_an_empty_text_still_loads(op):
    """Queries and schedule snapshots saved before the check keep making files."""
    assert _filters({"column": "project", "op": op, "value": ""}) == [{"column": "project", "op": op, "value": ""}]


def test_is_any_case_never_takes_an_empty_text():
    with pytest.raises(ValidationError, match="enter the text"):
        _filters({"column": "project", "op": "ieq", "value": ""})


@pytest.mark.parametrize("op", ["sounds_like", "ILIKE", "", "eq; --"])
def test_an_unknown_condition_is_named_in_the_message(op):
    with pytest.raises(ValidationError, match="is not a condition the builder offers"):
        _filters({"column": "project", "op": op, "value": "x"})


def test_a_condition_of_another_type_says_it_cannot_be_used_on_the_column():
    with pytest.raises(ValidationError, match="cannot be used on “Project”"):
        _filters({"column": "project", "op": "gt", "value": "x"})


def test_a_filter_that_is_not_a_mapping_is_refused_with_a_message():
    with pytest.raises(ValidationError, match="Each filter names a column"):
        validate_definition({**_definition(), "filters": ["project = 'x'"]}, MAX_ROWS)


def test_values_picked_from_a_list_are_kept_exactly():
    picked = ['"quoted", with comma', "  spaced  "]
    assert _filters({"column": "project", "op": "in", "value": picked}) == [
        {"column": "project", "op": "in", "value": picked}
    ]


def test_values_typed_for_is_one_of_are_split_on_commas_and_trimmed():
    assert _filters({"column": "project", "op": "in", "value": " Ward A, Ward B ,,"}) == [
        {"column": "project", "op": "in", "value": ["Ward A", "Ward B"]}
    ]


def test_a_stored_definition_validates_to_itself():
    """The stored JSON of an older query (its normal form) passes validation unchanged."""
    stored = [
        {"column": "project", "op": "eq", "value": "Ward A"},
        {"column": "project", "op": "contains", "value": "ward"},
        {"column": "project", "op": "in", "value": ["Ward A", "Ward B"]},
        {"column": "project", "op": "is_empty", "value": None},
    ]
    normal = _filters(*stored)
    assert _filters(*normal) == normal
    assert [Filter.from_json(f).to_json() for f in normal] == normal
