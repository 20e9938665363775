"""The attachment policy's rule: sizes counted after base64 encoding, the limit's bounds, and the
sentence a linked-instead message carries."""

from __future__ import annotations

import base64

import pytest

from app.domain.errors import ValidationError
from app.domain.schedules.attachment_rules import (
    ATTACH,
    LINKS_ONLY,
    MIB,
    checked_limit,
    delivery_words,
    encoded_size,
    fits,
    over_limit_sentence,
)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 6, 1000, 1001])
def test_the_encoded_size_is_the_length_of_the_base64_text(size):
    assert encoded_size(size) == len(base64.b64encode(b"x" * size))


def test_a_file_whose_encoding_is_exactly_the_limit_fits():
    largest = 3 * MIB // 4  # encodes to exactly 1 MiB
    assert fits(largest, 1)
    assert not fits(largest + 1, 1)


def test_a_file_under_the_limit_in_bytes_but_over_it_encoded_does_not_fit():
    assert not fits(900_000, 1)


def test_links_only_is_no_limit():
    assert checked_limit(LINKS_ONLY, "7") is None


@pytest.mark.parametrize("text, limit", [("1", 1), (" 20 ", 20), ("5", 5)])
def test_attachments_take_a_whole_number_of_mb_from_1_to_20(text, limit):
    assert checked_limit(ATTACH, text) == limit


@pytest.mark.parametrize("text", ["0", "21", "", "5.5", "-3", "５", "twenty"])
def test_a_limit_outside_1_to_20_is_refused_on_its_field(text):
    with pytest.raises(ValidationError) as refused:
        checked_limit(ATTACH, text)
    assert refused.value.field == "limit_mb"
    assert "from 1 to 20" in str(refused.value)


def test_an_unknown_choice_is_refused():
    with pytest.raises(ValidationError) as refused:
        checked_limit("everything", "5")
    assert refused.value.field == "choice"


def test_the_sentence_states_the_encoded_size_to_one_decimal_and_the_limit():
    assert over_limit_sentence(24 * MIB, 20) == (
        "The file is 32.0 MB encoded for email, over this workspace's 20 MB attachment limit, so it is linked instead."
    )


def test_a_file_just_over_the_limit_never_reads_as_equal_to_it():
    assert over_limit_sentence(3 * MIB // 4 + 1, 1).startswith("The file is 1.1 MB")


def test_a_file_of_a_megabyte_does_not_read_as_two():
    # 1,006,728 bytes are 1,342,304 encoded: 1.28 MiB.
    assert over_limit_sentence(1_006_728, 1).startswith("The file is 1.3 MB encoded")


def test_the_run_history_says_what_each_message_carried():
    assert delivery_words(None, None) == "Linked"
    assert delivery_words(True, 5) == "Attached and linked"
    assert delivery_words(False, 5) == "Linked only: over the 5 MB attachment limit"
