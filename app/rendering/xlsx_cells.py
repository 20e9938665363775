"""How a value becomes an Excel cell: the rules both XLSX writers follow, in one place.

Used by the query files' streaming writer (app/rendering/xlsx_writer.py) and by report files
(app/rendering/report_xlsx.py):

- **Text is exact.** A text cell holds the source text with no character added, as a string
  cell whose style has `quotePrefix="1"`: Excel and LibreOffice show it as written and keep it
  text even after someone edits it, so `=1+2` can never become a formula. No cell is ever a
  formula (no `<f>` element is written).
- **Characters XML cannot carry** (control characters other than tab, line feed and carriage
  return, and U+FFFE/U+FFFF) are written as OOXML's `_xHHHH_` escapes, and the underscore of a
  literal `_xHHHH_` in the data is written `_x005F_`, so Excel and LibreOffice show the text as
  stored (`ooxml_text`). A carriage return is XML's own character reference `&#13;` instead (a
  literal CR would reach readers as a line feed), written by the XML layer: the streaming
  writer's escaping, and openpyxl's serialiser for report files. openpyxl and pandas do not
  decode `_xHHHH_` (they show `_x0001_`, and `_x005F_x0041_` for a literal `_x0041_`), so it is
  kept for what XML has no other way to carry; LibreOffice keeps a lone CR but reads CR LF as
  one LF. docs/architecture.md says what each reader shows.
- **Excel's 32,767 characters per cell** (UTF-16 code units, as Excel counts them): a longer
  text is cut to fit and ends with TRUNCATION_MARKER, counted as `cell_truncated`.
- **Dates** are serial numbers in Excel's 1900 system, from 1900-03-01 (serial 61) on. Excel
  keeps Lotus's phantom 1900-02-29 (serial 60), so it reads serials 1 to 59 as 1900-01-01 to
  1900-02-28, while LibreOffice counts them from 1899-12-30 and shows each of those days one day
  early. One file must read the same in both, so a date before 1900-03-01 is written as ISO text
  and counted as `date_out_of_range`, as are the dates before 1900-01-01 that Excel cannot hold.
- **Time stamps** are shown in the file's time zone (UTC or the workspace's, chosen with the
  request), as a serial with the fractions of a second dropped, so 23:59:59.999999 stays on its
  day (9999-12-31 23:59:59.999999 is that day, serial 2958465.99998…). A time stamp whose wall
  time in that zone falls outside those dates is written as ISO text and counted too. Where the
  clocks go back, an hour of wall times happens twice (01:30 in London on 2024-10-27 is 00:30 and
  01:30 UTC); a time stamp in that hour would read as the other one, so it is written as text with
  its offset from UTC in the column's own form (`2024-10-27 01:30:00+01:00`), counted as
  `repeated_local_time`.
- **Column widths** follow what the columns show: the widest of the heading and the first
  WIDTH_SAMPLE_ROWS rows (a streaming writer cannot look further, since a sheet's widths come
  before its rows), in character cells where a wide East Asian character takes two, plus a little
  padding, between the column type's floor and MAX_COLUMN_WIDTH, past which text is better read
  in the cell than in a column as wide as the screen.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, date, datetime, tzinfo
from functools import lru_cache

from app.domain.files.file_warnings import CELL_TRUNCATED, DATE_OUT_OF_RANGE, REPEATED_LOCAL_TIME

MAX_CELL_CHARS = 32_767
TRUNCATION_MARKER = " […truncated]"

_EXCEL_EPOCH = date(1899, 12, 30).toordinal()
# The first day Excel and LibreOffice give the same serial (61): both count from 1899-12-30 on.
_FIRST_SERIAL_DATE = date(1900, 3, 1)
_SECONDS_PER_DAY = 86_400

WIDTH_SAMPLE_ROWS = 100
MAX_COLUMN_WIDTH = 60
_WIDTH_PADDING = 2

# Characters XML 1.0 cannot carry, and an underscore that starts something a reader would take
# for an escape. Carriage return is left to the XML layer, which writes it `&#13;`.
_NEEDS_OOXML_ESCAPE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|_(?=x[0-9A-Fa-f]{4}_)")


def _ooxml_escape(match: re.Match) -> str:
    return f"_x{ord(match.group(0)):04X}_"


def ooxml_text(text: str) -> str:
    """The text with OOXML's `_xHHHH_` escapes where XML cannot carry a character as it is."""
    return _NEEDS_OOXML_ESCAPE.sub(_ooxml_escape, text) if _NEEDS_OOXML_ESCAPE.search(text) else text


def fit_text(text: str, warnings: Counter[str]) -> str:
    """The text cut to Excel's cell limit (an emoji takes two of its units), each cut counted."""
    if len(text) <= MAX_CELL_CHARS // 2:
        return text
    encoded = text.encode("utf-16-le")
    if len(encoded) <= MAX_CELL_CHARS * 2:
        return text
    warnings[CELL_TRUNCATED] += 1
    room = MAX_CELL_CHARS - len(TRUNCATION_MARKER)
    # Cutting may split a surrogate pair; its lone half is dropped.
    return encoded[: room * 2].decode("utf-16-le", errors="ignore") + TRUNCATION_MARKER


def cell_text(text: str, warnings: Counter[str]) -> str:
    """What a text cell holds in the file: cut to fit, then escaped (the escapes are not counted by Excel)."""
    return ooxml_text(fit_text(text, warnings))


def date_serial(day: date) -> int | None:
    """Excel's serial number for the day, or None before _FIRST_SERIAL_DATE (see the module's docstring)."""
    if day < _FIRST_SERIAL_DATE:
        return None
    return day.toordinal() - _EXCEL_EPOCH


def in_zone(moment: datetime, zone: tzinfo) -> datetime | None:
    """The time stamp's wall time in `zone` (naive values mean UTC); None past the calendar's ends."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    try:
        return aware.astimezone(zone)
    except OverflowError:
        return None


def datetime_serial(wall_time: datetime) -> float | None:
    """Excel's serial number for a wall time, whole seconds only, or None before _FIRST_SERIAL_DATE."""
    day = date_serial(wall_time.date())
    if day is None:
        return None
    seconds = wall_time.hour * 3600 + wall_time.minute * 60 + wall_time.second
    return day + seconds / _SECONDS_PER_DAY


def out_of_range_text(value: date | datetime, wall_time: datetime | None, warnings: Counter[str]) -> str:
    """ISO text for a date or time stamp no serial can carry (see the module's docstring), counted
    as `date_out_of_range`.

    The forms are the ones the file's warning names (app/domain/files/file_warnings.py): YYYY-MM-DD, or
    YYYY-MM-DDTHH:MM:SS with the offset from UTC (±HH:MM, or Z).
    """
    warnings[DATE_OUT_OF_RANGE] += 1
    if not isinstance(value, datetime):
        return value.isoformat()
    offset = None if wall_time is None else wall_time.utcoffset()
    # Local mean time before time zones (1850 in Kolkata is +05:53:28) has an offset in seconds,
    # which ISO's ±HH:MM cannot say: such a moment is written in UTC.
    if wall_time is None or offset is None or offset.seconds % 60:
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).replace(tzinfo=None, microsecond=0).isoformat() + "Z"
    return wall_time.replace(microsecond=0).isoformat()


@lru_cache(maxsize=4096)
def _clocks_change_on(zone: tzinfo, year: int, month: int, day: int) -> bool:
    """Whether the zone's offset at the day's last second (its later reading) differs from its first."""
    first = datetime(year, month, day, tzinfo=zone)
    last = datetime(year, month, day, 23, 59, 59, tzinfo=zone, fold=1)
    return first.utcoffset() != last.utcoffset()


def _shown_twice(wall_time: datetime, zone: tzinfo) -> bool:
    """Whether the zone's clocks show this wall time twice: the other occurrence has another offset.

    Looking up the other occurrence costs more than the rest of the cell, so it is done only on a
    day whose clocks change (a couple a year), which is known once per day.
    """
    if not _clocks_change_on(zone, wall_time.year, wall_time.month, wall_time.day):
        return False
    return wall_time.replace(fold=1 - wall_time.fold).utcoffset() != wall_time.utcoffset()


def _repeated_hour_text(wall_time: datetime, warnings: Counter[str]) -> str:
    """A wall time the clocks show twice, as text with its offset, counted as `repeated_local_time`."""
    warnings[REPEATED_LOCAL_TIME] += 1
    return wall_time.replace(microsecond=0).isoformat(sep=" ")


def day_serial_or_text(day: date, warnings: Counter[str]) -> int | str:
    """Excel's serial for the date, or its counted ISO text where no serial can carry it."""
    serial = date_serial(day)
    return out_of_range_text(day, None, warnings) if serial is None else serial


def moment_serial_or_text(moment: datetime, zone: tzinfo, warnings: Counter[str]) -> float | str:
    """Excel's serial for the time stamp's wall time in `zone`, or its counted ISO text where no serial
    can carry it, or none can tell it from another time stamp (the repeated hour)."""
    wall_time = in_zone(moment, zone)
    serial = None if wall_time is None else datetime_serial(wall_time)
    if wall_time is None or serial is None:
        return out_of_range_text(moment, wall_time, warnings)
    return _repeated_hour_text(wall_time, warnings) if _shown_twice(wall_time, zone) else serial


def display_width(text: str, limit: int = MAX_COLUMN_WIDTH) -> int:
    """How many character cells the text's longest line takes on screen, counted up to `limit`.

    A wide or full-width character (Chinese, Japanese, Korean) takes two; combining marks and
    invisible format characters (joiners, bidi marks) take none.
    """
    widest = current = 0
    for char in text:
        if char == "\n":
            current = 0
            continue
        if unicodedata.combining(char) or unicodedata.category(char) == "Cf":
            continue
        current += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        if current > widest:
            widest = current
            if widest >= limit:
                return limit
    return widest


def column_width(shown: Iterable[str], floor: int) -> float:
    """A column's width for the texts it shows (heading and sampled cells), between `floor` and the cap."""
    widest = max((display_width(text) for text in shown), default=0)
    return float(min(max(widest + _WIDTH_PADDING, floor), MAX_COLUMN_WIDTH))
