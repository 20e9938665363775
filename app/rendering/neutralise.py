"""Formula-injection neutralising for spreadsheet text cells (OWASP "CSV injection").

A spreadsheet reads a cell that begins with `=`, `+`, `-` or `@` as a formula, and a leading
tab, carriage return or line feed can hide such a character from a reader's eye. Prefixing a
single quote makes every spreadsheet show the text as typed. Only text cells are neutralised:
numbers, dates and booleans are written as what they are, so a negative number stays a number.

The same rule is written in SQL in app/rendering/csv_writer.py for the PostgreSQL COPY path;
`FORMULA_TRIGGERS` is the one list both use.
"""

from __future__ import annotations

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n")
_TRIGGER_SET = frozenset(FORMULA_TRIGGERS)


def neutralise(text: str) -> str:
    """The text with a leading `'` when a spreadsheet would otherwise read it as a formula."""
    if text and text[0] in _TRIGGER_SET:
        return "'" + text
    return text
