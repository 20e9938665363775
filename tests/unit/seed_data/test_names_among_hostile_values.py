"""Which hostile values the demo seed may give to ordinary employees: those someone could be called."""

from __future__ import annotations

import pytest

from app.seed_data import reads_as_a_name


@pytest.mark.parametrize(
    "name",
    ["Zoë Ødegaard-Łukasiewicz", "Дмитрий Шостакович", "山田 太郎", "שׂרה כהן", "प्रिया शर्मा", "Mary-Kate O'Sullivan"],
)
def test_letters_of_any_script_joined_by_spaces_hyphens_or_apostrophes_read_as_a_name(name):
    assert reads_as_a_name(name)


@pytest.mark.parametrize(
    "value",
    ["=1+2", "+41 79 000 00 00", "'already quoted", "  padded  ", "\u200b=1+1", "🙂 emoji", "0012", ""],
)
def test_formulas_padding_leading_quotes_symbols_and_digits_do_not_read_as_a_name(value):
    assert not reads_as_a_name(value)
