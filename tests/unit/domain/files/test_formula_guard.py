"""The formula guard's patterns: which texts need a leading quote, and which cell breaks need one after them."""

from __future__ import annotations

import re

import pytest

from app.domain.files.formula_guard import GUARDED_BREAK_PATTERN, GUARDED_START_PATTERN, NEEDS_GUARD_PATTERN


@pytest.mark.parametrize("text", ["=1+2", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1", "\n=1"])
def test_a_text_starting_with_a_trigger_needs_a_quote(text):
    assert re.match(GUARDED_START_PATTERN, text)


@pytest.mark.parametrize("text", ["  =1", '"=1', "\u00a0=1", "\u200b=1", "\ufeff=1", '  " =1'])
def test_a_trigger_behind_blanks_or_double_quotes_still_counts(text):
    """A reader that trims spaces or hides invisible characters would see the trigger first."""
    assert re.match(GUARDED_START_PATTERN, text)


@pytest.mark.parametrize("text", ["Alice", "a=1", "'=1", "x-1", "1-2", "(=1)"])
def test_a_text_whose_first_visible_character_is_no_trigger_needs_no_quote(text):
    assert not re.match(GUARDED_START_PATTERN, text)


@pytest.mark.parametrize(("text", "breaks"), [("x;=1", [";"]), ("a\t+b", ["\t"]), ("a\n @b;c\n-1", ["\n", "\n"])])
def test_a_break_followed_by_a_trigger_needs_a_quote_after_it(text, breaks):
    """Opened with `;` or a tab as the separator, what follows a break is a cell of its own."""
    assert [match.group(1) for match in re.finditer(GUARDED_BREAK_PATTERN, text)] == breaks


def test_a_break_behind_a_break_is_no_trigger():
    """CR LF is one line break, and an empty line starts no formula: only the break before `=` needs a quote."""
    assert [match.start() for match in re.finditer(GUARDED_BREAK_PATTERN, "a\r\n\r\nb\r\n=1")] == [7]


def test_a_break_followed_by_plain_text_needs_no_quote():
    assert not re.search(GUARDED_BREAK_PATTERN, "a;b\tc\nd")


@pytest.mark.parametrize(("text", "scanned"), [("plain text", False), ("=1", True), ("a;b", True), ("a-b", False)])
def test_the_one_scan_flags_every_text_the_guard_may_change(text, scanned):
    """Texts with neither a trigger at the start nor a break anywhere pass without further work."""
    assert bool(re.search(NEEDS_GUARD_PATTERN, text)) is scanned
