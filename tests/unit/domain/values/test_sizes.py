"""A size in bytes as people read it: the same words on pages, in emails and on error pages."""

from app.domain.values.sizes import size_label


def test_a_size_under_a_kilobyte_is_counted_in_bytes_with_thousands_separated():
    assert size_label(0) == "0 bytes"
    assert size_label(1_000) == "1,000 bytes"


def test_larger_sizes_take_the_largest_binary_unit_they_reach_with_one_decimal():
    assert size_label(1024) == "1.0 KB"
    assert size_label(1536) == "1.5 KB"
    assert size_label(5 * 1024 * 1024 + 1) == "5.0 MB"
    assert size_label(3 << 30) == "3.0 GB"


def test_sizes_past_a_thousand_gigabytes_stay_in_gigabytes():
    assert size_label(2048 << 30) == "2,048.0 GB"


def test_a_size_stated_against_a_limit_rounds_its_decimal_up():
    assert size_label(1024 * 1024 + 1, round_up=True) == "1.1 MB"
    assert size_label(1536, round_up=True) == "1.5 KB"
    assert size_label(1_000, round_up=True) == "1,000 bytes"
