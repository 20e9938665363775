"""The rules every typed value passes: characters the database refuses, ASCII whole numbers, ids in range."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.values.text_rules import (
    DATABASE_INTEGER_MAX,
    database_id,
    has_unstorable_character,
    opened_version,
    refuse_unstorable,
    whole_number,
)
from tests.factories import hostile_values


@pytest.mark.parametrize("text", ["\x00", "a\x00b", "name\ud800", "\udfff"])
def test_nul_and_lone_surrogates_are_unstorable(text):
    """NUL (PostgreSQL text refuses it) and a lone surrogate (UTF-8 cannot encode it) are found."""
    assert has_unstorable_character(text)


@pytest.mark.parametrize("text", hostile_values())
def test_hostile_values_other_than_nul_are_storable(text):
    """Control characters other than NUL, formulas, markup and every script stay allowed."""
    assert not has_unstorable_character(text)


def test_a_nul_deep_in_a_definition_is_refused_naming_the_field():
    """Lists and mappings are searched, keys included, and the message names the field."""
    with pytest.raises(ValidationError) as refused:
        refuse_unstorable({"column": "note", "value": ["a", "b\x00"]}, "filters-1", "filter 2")
    assert refused.value.field == "filters-1"
    assert "cannot be saved (a NUL or another invalid character) in filter 2." in str(refused.value)
    with pytest.raises(ValidationError):
        refuse_unstorable({"co\x00de": "text"}, "code_descriptions", "the code descriptions")


@pytest.mark.parametrize("text", ["²", "٣", "١٢", "1_000", "1.0", "", " ", "0x10", "1e3"])
def test_whole_numbers_are_ascii_digits_only(text):
    """Digits Python's int() reads but a form should not ("²", Arabic-Indic, underscores) are refused."""
    with pytest.raises(ValidationError, match="a whole number"):
        whole_number(text, "row_limit", "a whole number", 0, 10)


def test_a_whole_number_may_have_a_sign_and_spaces_around_it():
    assert whole_number(" +7 ", "f", "no", -10, 10) == 7
    assert whole_number("-7", "f", "no", -10, 10) == -7


@pytest.mark.parametrize("text", ["11", "9" * 5000, "-" + "9" * 40])
def test_a_number_out_of_range_gets_the_range_message_without_reading_every_digit(text):
    """A 5,000-digit number (past Python's int() digit limit) is out of range, not an error."""
    with pytest.raises(ValidationError, match="out of range"):
        whole_number(text, "f", "a whole number", -10, 10, range_message="out of range")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1),
        ("42", 42),
        (DATABASE_INTEGER_MAX, DATABASE_INTEGER_MAX),
        (DATABASE_INTEGER_MAX + 1, None),
        (str(DATABASE_INTEGER_MAX + 1), None),
        ("9" * 23, None),
        ("9" * 5000, None),
        (0, None),
        ("-3", None),
        ("٣", None),
        ("1\x00", None),
        (None, None),
    ],
)
def test_database_id_accepts_only_ids_an_integer_column_holds(value, expected):
    assert database_id(value) == expected


def test_an_opened_version_is_none_when_blank_and_refused_when_not_a_version():
    """A form without a version is a new record; a version that is no database integer is refused."""
    assert opened_version("") is None
    assert opened_version("3") == 3
    for damaged in ("²", "٣", "2147483648", "9" * 5000, "0"):
        with pytest.raises(ValidationError) as refused:
            opened_version(damaged)
        assert refused.value.field == "version"
