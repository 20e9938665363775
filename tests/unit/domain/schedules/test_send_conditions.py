"""When a run sends: each condition, its reason in words when it does not, and the old switch's mapping."""

from __future__ import annotations

import pytest

from app.domain.errors import ValidationError
from app.domain.schedules.send_conditions import LastSent, checked, from_send_when_empty, meaning, skip_reason

DIGEST = "a" * 64


def test_always_sends_with_or_without_rows():
    assert skip_reason("always", 0, DIGEST, LastSent(3, DIGEST)) is None
    assert skip_reason("always", 5, DIGEST, None) is None


def test_only_with_rows_skips_a_file_with_none():
    assert skip_reason("has_rows", 0, DIGEST, None) == "no rows"
    assert skip_reason("has_rows", 1, DIGEST, None) is None


def test_only_without_rows_skips_a_file_with_rows_and_says_how_many():
    assert skip_reason("no_rows", 0, DIGEST, None) is None
    assert skip_reason("no_rows", 1, DIGEST, None) == "1 row; it sends only when there are none"
    assert skip_reason("no_rows", 1234, DIGEST, None) == "1,234 rows; it sends only when there are none"


def test_only_when_changed_skips_the_rows_the_last_sending_run_had_and_names_that_run():
    assert skip_reason("changed", 5, DIGEST, LastSent(41, DIGEST)) == "unchanged since run 41"
    assert skip_reason("changed", 5, DIGEST, LastSent(41, "b" * 64)) is None


def test_only_when_changed_sends_when_there_is_nothing_to_compare_with():
    assert skip_reason("changed", 5, DIGEST, None) is None
    assert skip_reason("changed", 5, DIGEST, LastSent(2, None)) is None
    assert skip_reason("changed", 5, None, LastSent(2, None)) is None


def test_the_old_send_when_empty_switch_keeps_what_each_schedule_did():
    assert from_send_when_empty("query", False) == "has_rows"
    assert from_send_when_empty("query", True) == "always"
    assert from_send_when_empty("report", False) == "always"


def test_a_choice_outside_the_four_is_refused_on_its_field():
    with pytest.raises(ValidationError) as refused:
        checked("sometimes")
    assert refused.value.field == "send_condition"
    assert checked("changed") == "changed"


def test_each_choice_means_one_sentence():
    for condition in ("always", "has_rows", "no_rows", "changed"):
        sentence = meaning(condition)
        assert sentence.endswith(".") and sentence.count(". ") == 0
