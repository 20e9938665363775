"""Formula-injection neutralising of spreadsheet-safe CSV text (rule: app/domain/files/formula_guard.py)."""

import pytest

from app.rendering.neutralise import neutralise


@pytest.mark.parametrize("text", ["=1+2", "+41 79", "-2+3", "@SUM(A1)", "\r", "\n", "=", "-"])
def test_text_starting_with_a_formula_trigger_gets_a_leading_quote(text):
    """Each OWASP trigger character at the start is defused by a leading single quote."""
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize(
    "text",
    [" =4+5", "   =1+1", "\u00a0=1+1", "\u200b=1+1", "\ufeff@x", "\u3000+1", '"=1+1', ' " -3'],
)
def test_a_trigger_behind_blanks_or_quotes_still_gets_the_leading_quote(text):
    """Spaces a reader may trim, invisible blanks and double quotes do not hide a trigger behind them."""
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize(
    ("text", "guarded"),
    [
        ("x;=1+1;y", "x;'=1+1;y"),
        ("a; @b", "a;' @b"),
        ("line one\n=2", "line one\n'=2"),
        ("a\r\n-3", "a\r\n'-3"),
        ("a\r\n\r\n=1", "a\r\n\r\n'=1"),
        ("\t=1+1", "'\t'=1+1"),
        ("\r=1+1", "'\r'=1+1"),
        ("semi;colon;separated", "semi;colon;separated"),
    ],
)
def test_a_trigger_after_a_semicolon_tab_or_line_break_is_guarded_too(text, guarded):
    """Opened with `;` or tab as separator, a spreadsheet starts a cell there: the trigger gets its quote."""
    assert neutralise(text) == guarded


@pytest.mark.parametrize(
    "text", ["Arrived late\r\nLeft early", "First paragraph\r\n\r\nSecond", "a\n\nb", "x;\r\ny", "a\r\n b"]
)
def test_a_windows_line_break_or_an_empty_line_gets_no_quote(text):
    """CR LF is one break and a break is no trigger behind another: LibreOffice would show a line holding only `'`."""
    assert neutralise(text) == text


@pytest.mark.parametrize("text", ["plain", "a=b", "'already quoted", "Zoë", "1-2", "", "＝1+1", " a", "x;y"])
def test_text_without_a_guarded_trigger_is_unchanged(text):
    """Triggers inside a cell's text, a full-width equals sign, or an empty text are left as they are."""
    assert neutralise(text) == text
