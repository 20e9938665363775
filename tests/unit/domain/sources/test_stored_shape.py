"""Reading stored JSON back: each reader accepts what was written and names where anything else is wrong."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.sources.stored_shape import StoredShape

SHAPE = StoredShape("request")


def refusal(read, *args) -> str:
    with pytest.raises(ValidationError) as caught:
        read(*args)
    return str(caught.value)


def test_a_refusal_names_the_stored_thing_the_path_and_what_was_expected():
    assert refusal(SHAPE.text, 3, "request.dataset") == (
        "The stored request cannot be read: request.dataset should be text."
    )


def test_a_mapping_with_its_required_and_optional_keys_is_accepted():
    value = {"dataset": "x", "row_limit": None}
    assert SHAPE.mapping(value, "request", ["dataset"], ["row_limit"]) is value


def test_a_mapping_missing_a_required_key_names_that_key():
    assert "request.columns should be present" in refusal(SHAPE.mapping, {}, "request", ["columns"])


def test_a_mapping_with_an_unknown_key_names_it():
    assert "request.extra should be absent" in refusal(SHAPE.mapping, {"extra": 1}, "request", [])


def test_a_list_where_a_mapping_belongs_is_refused():
    assert "should be an object" in refusal(SHAPE.mapping, [], "request", [])


def test_a_missing_list_reads_as_empty():
    assert SHAPE.items(None, "request.sort") == []


def test_each_item_is_read_with_its_index_in_the_path():
    assert "request.columns[1] should be text" in refusal(SHAPE.texts, ["id", 2], "request.columns")


def test_a_choice_outside_its_choices_lists_them():
    assert refusal(SHAPE.choice, "up", "sort.direction", ("asc", "desc")).endswith("should be one of asc, desc.")


def test_a_flag_must_be_a_boolean_not_a_number():
    assert "true or false" in refusal(SHAPE.flag, 1, "show_filters")


@pytest.mark.parametrize("value", [True, 0, "5", 2.0])
def test_a_whole_number_refuses_booleans_text_floats_and_values_below_the_minimum(value):
    assert "a whole number of at least 1" in refusal(SHAPE.whole_number, value, "row_limit", 1)


def test_an_optional_whole_number_may_be_missing():
    assert SHAPE.optional_whole_number(None, "width", 1) is None


def test_a_text_map_reads_texts_and_a_missing_one_is_empty():
    assert SHAPE.text_map({"ICU": "Intensive care"}, "codes") == {"ICU": "Intensive care"}
    assert SHAPE.text_map(None, "codes") == {}


def test_a_text_map_names_the_key_whose_value_is_not_text():
    assert "codes['ICU'] should be text" in refusal(SHAPE.text_map, {"ICU": 7}, "codes")
