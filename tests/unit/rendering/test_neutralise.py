"""Formula-injection neutralising of text cells."""

import pytest

from app.rendering.neutralise import neutralise


@pytest.mark.parametrize("text", ["=1+2", "+41 79", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "\n=1", "=", "-"])
def test_text_starting_with_a_formula_trigger_gets_a_leading_quote(text):
    """Each OWASP trigger character at the start is defused by a leading single quote."""
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("text", ["plain", "a=b", " =1", "'already quoted", "Zoë", "1-2", ""])
def test_text_without_a_leading_trigger_is_unchanged(text):
    """Triggers later in the text, a leading space, or an empty text are left as they are."""
    assert neutralise(text) == text
