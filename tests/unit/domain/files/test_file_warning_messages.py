"""The warnings a file carries: the counts it stores and the sentences its page shows."""

from __future__ import annotations

from collections import Counter

from app.domain.files.file_warnings import (
    CELL_CLIPPED,
    CELL_TRUNCATED,
    DATE_OUT_OF_RANGE,
    GLYPH_MISSING,
    describe,
    messages,
    stored,
)


def test_only_positive_counts_are_stored():
    assert stored(Counter({CELL_TRUNCATED: 2, DATE_OUT_OF_RANGE: 0})) == {CELL_TRUNCATED: 2}


def test_no_warnings_are_stored_as_none():
    assert stored(Counter()) is None
    assert stored(None) is None


def test_one_truncated_cell_is_described_in_the_singular():
    assert describe(CELL_TRUNCATED, 1).startswith("1 cell was longer than Excel's 32,767-character limit")


def test_many_counts_are_written_with_thousands_separators():
    assert describe(GLYPH_MISSING, 12_345).startswith("12,345 characters could not be drawn")


def test_an_unknown_code_is_still_shown_with_its_count():
    assert describe("future_limit", 3) == "3 × future_limit."


def test_messages_put_known_codes_in_their_fixed_order_then_unknown_ones():
    shown = messages({"zz_unknown": 1, CELL_CLIPPED: 1, CELL_TRUNCATED: 1})
    assert shown == [describe(CELL_TRUNCATED, 1), describe(CELL_CLIPPED, 1), describe("zz_unknown", 1)]


def test_a_file_without_warnings_shows_no_message():
    assert messages(None) == []


def test_the_out_of_range_sentence_names_the_form_of_dates_and_of_time_stamps():
    """A time stamp is not written YYYY-MM-DD: the sentence names each form the file holds."""
    sentence = describe(DATE_OUT_OF_RANGE, 2)
    assert "a date as YYYY-MM-DD" in sentence
    assert "a time stamp as YYYY-MM-DDTHH:MM:SS followed by its offset from UTC" in sentence
