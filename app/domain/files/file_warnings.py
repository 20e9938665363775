"""Warnings a finished file carries: limits of its format that changed some of its data.

Writers take a `warnings` Counter and add one count per affected cell or character under one
of these codes; the export runner stores the counts on the file (`query_exports.warnings`) and
the file's page shows one sentence per code. Nothing a format cannot hold is changed silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

CELL_TRUNCATED = "cell_truncated"
DATE_OUT_OF_RANGE = "date_out_of_range"
REPEATED_LOCAL_TIME = "repeated_local_time"
GLYPH_MISSING = "glyph_missing"
CELL_CLIPPED = "cell_clipped"

WARNING_CODES = (CELL_TRUNCATED, DATE_OUT_OF_RANGE, REPEATED_LOCAL_TIME, GLYPH_MISSING, CELL_CLIPPED)


def describe(code: str, count: int) -> str:
    """One readable sentence for a warning code and its count."""
    one = count == 1
    cells = "1 cell was" if one else f"{count:,} cells were"
    if code == CELL_TRUNCATED:
        return (
            f"{cells} longer than Excel's 32,767-character limit and cut; "
            f"{'it ends' if one else 'each ends'} with “[…truncated]”."
        )
    if code == DATE_OUT_OF_RANGE:
        dates = "1 date or time" if one else f"{count:,} dates or times"
        return (
            f"{dates} could not be written as Excel dates that every spreadsheet reads alike (before "
            "1900-03-01, where Excel and LibreOffice count days differently, or past 9999-12-31 in the file's "
            f"time zone) and {'is' if one else 'are'} written as ISO text: a date as YYYY-MM-DD, a time stamp "
            "as YYYY-MM-DDTHH:MM:SS followed by its offset from UTC (such as +05:30, or Z for UTC)."
        )
    if code == REPEATED_LOCAL_TIME:
        stamps = "1 time stamp" if one else f"{count:,} time stamps"
        return (
            f"{stamps} in an hour the file's time zone shows twice (when the clocks go back) "
            f"{'is' if one else 'are'} written as text with {'its' if one else 'their'} offset from UTC, such as "
            "2024-10-27 01:30:00+01:00 and 2024-10-27 01:30:00+00:00, so the two hours can be told apart."
        )
    if code == GLYPH_MISSING:
        characters = "1 character" if one else f"{count:,} characters"
        return f"{characters} could not be drawn with any of the PDF's fonts and may show as blank or as a box."
    if code == CELL_CLIPPED:
        return f"{cells} too long for {'its' if one else 'their'} column in the PDF and cut off at the column's edge."
    return f"{count:,} × {code}."


def stored(warnings: Mapping[str, int] | None) -> dict[str, int] | None:
    """The counts as the file row keeps them: only positive counts, None when there are none."""
    kept = {code: int(count) for code, count in (warnings or {}).items() if count > 0}
    return kept or None


def messages(warnings: Mapping[str, int] | None) -> list[str]:
    """The sentences a file's page shows, known codes first in a fixed order."""
    counts = Counter(stored(warnings) or {})
    ordered = [code for code in WARNING_CODES if code in counts] + sorted(set(counts) - set(WARNING_CODES))
    return [describe(code, counts[code]) for code in ordered]
