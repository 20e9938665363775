"""Formula-injection neutralising for spreadsheet-safe CSV text (the rule: app/domain/files/formula_guard.py).

CSV is plain text, so the only way to stop a spreadsheet from evaluating a cell is the leading
`'` OWASP recommends; XLSX does not need it (its text cells carry the quote-prefix style, see
app/rendering/xlsx_cells.py). CSV "for data tools" writes text exactly and skips this step.
"""

from __future__ import annotations

import re

from app.domain.files.formula_guard import (
    FORMULA_TRIGGERS,
    GUARDED_BREAK_PATTERN,
    GUARDED_START_PATTERN,
    NEEDS_GUARD_PATTERN,
)

__all__ = ["FORMULA_TRIGGERS", "neutralise"]

_NEEDS_GUARD = re.compile(NEEDS_GUARD_PATTERN)
_GUARDED_START = re.compile(GUARDED_START_PATTERN)
_GUARDED_BREAK = re.compile(GUARDED_BREAK_PATTERN)


def neutralise(text: str) -> str:
    """The text with a `'` wherever a spreadsheet could otherwise read a formula.

    One scan in `re` settles most texts. Its SQL twin in app/data/csv_copy.py gets the same
    text without regular expressions on its common path, and tests hold the two equal.
    """
    if not _NEEDS_GUARD.search(text):
        return text
    guarded = _GUARDED_BREAK.sub(r"\1'", text)
    return "'" + guarded if _GUARDED_START.match(text) else guarded
