"""How a report sheet (report_xlsx._Sheet) makes its cells: the XLSX cell rules shared with query files."""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from datetime import UTC, date, datetime

from openpyxl import Workbook, load_workbook

from app.domain.sources.catalog import get_dataset
from app.rendering.report_xlsx import _Sheet
from app.rendering.xlsx_cells import MAX_CELL_CHARS, TRUNCATION_MARKER
from tests.factories import hostile_values

DATASET = get_dataset("timesheet_entries")
COLUMNS = [DATASET.column(name) for name in ("note", "work_date", "recorded_at", "hours")]


def _sheet_file(rows, warnings: Counter | None = None, **options) -> bytes:
    workbook = Workbook(write_only=True)
    sheet = _Sheet(workbook, COLUMNS, set(), "%d/%m/%Y", warnings=warnings, **options)
    sheet.headings()
    for row in rows:
        sheet.row(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _read(data: bytes):
    return load_workbook(io.BytesIO(data)).active


def _decoded(text: str) -> str:
    return re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), text)


def test_a_control_character_does_not_fail_the_sheet_and_reads_back_exactly():
    """\\x01 and a literal _x0041_ are written by the _xHHHH_ rule instead of raising IllegalCharacterError."""
    data = _sheet_file([("\x01control\x1fchars literal _x0041_ escape", None, None, None)])
    cell = _read(data)["A2"]
    assert cell.value == "_x0001_control_x001F_chars literal _x005F_x0041_ escape"
    assert _decoded(cell.value) == "\x01control\x1fchars literal _x0041_ escape"


def test_a_carriage_return_reads_back_as_itself_not_as_an_escape():
    """openpyxl and pandas do not decode _x000D_: a report cell's CR is XML's &#13;, read back as CR."""
    data = _sheet_file([("Arrived late\r\nLeft early\r=1+1", None, None, None)])
    assert _read(data)["A2"].value == "Arrived late\r\nLeft early\r=1+1"
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert "Arrived late&#13;\nLeft early&#13;=1+1" in package.read("xl/worksheets/sheet1.xml").decode()


def test_every_hostile_value_is_exact_quote_prefixed_text_never_a_formula():
    """Each hostile value is a string cell with the quote-prefix style holding the stored text."""
    values = hostile_values()
    data = _sheet_file([(value, None, None, None) for value in values])
    cells = [row[0] for row in _read(data).iter_rows(min_row=2)]
    assert [_decoded(cell.value) for cell in cells] == values
    assert all(cell.data_type == "s" and cell.quotePrefix for cell in cells)
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert not re.search(r"<f[ >/]", package.read("xl/worksheets/sheet1.xml").decode())


def test_over_long_text_is_cut_with_the_marker_and_counted():
    """A text past 32,767 characters ends with the marker at the limit; each cut cell counts once."""
    warnings = Counter()
    data = _sheet_file([("x" * 40_000, None, None, None), ("short", None, None, None)], warnings)
    value = _read(data)["A2"].value
    assert len(value) == MAX_CELL_CHARS and value.endswith(TRUNCATION_MARKER)
    assert warnings == Counter({"cell_truncated": 1})


def test_dates_use_excels_serials_and_dates_before_march_1900_are_counted_text():
    """1900-03-01 reads back as that day; 1900-02-28 (one day early in LibreOffice) and 1899-12-31 are ISO text."""
    warnings = Counter()
    days = [date(1900, 3, 1), date(1900, 2, 28), date(1899, 12, 31)]
    sheet = _read(_sheet_file([(None, day, None, None) for day in days], warnings))
    assert sheet["B2"].value == datetime(1900, 3, 1) and sheet["B2"].number_format == "dd/mm/yyyy"
    assert [(sheet[ref].value, sheet[ref].data_type) for ref in ("B3", "B4")] == [
        ("1900-02-28", "s"),
        ("1899-12-31", "s"),
    ]
    assert warnings == Counter({"date_out_of_range": 2})


def test_the_last_instant_stays_on_its_day_and_the_heading_names_the_zone():
    """9999-12-31 23:59:59.999999 UTC is written as that day; the time stamp heading says (UTC)."""
    data = _sheet_file([(None, None, datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), None)])
    sheet = _read(data)
    assert sheet["C1"].value == "Recorded (UTC)"
    assert sheet["C2"].value == datetime(9999, 12, 31, 23, 59, 59)


def test_time_stamps_follow_the_sheets_time_zone():
    """In Europe/Paris 18:00 UTC in November is 19:00."""
    data = _sheet_file([(None, None, datetime(2026, 11, 2, 18, 0, tzinfo=UTC), None)], time_zone="Europe/Paris")
    assert _read(data)["C2"].value == datetime(2026, 11, 2, 19, 0)


def test_a_time_stamp_in_the_hour_the_clocks_repeat_is_text_with_its_offset():
    """In London 00:30 and 01:30 UTC on 2024-10-27 both read 01:30: the report tells them apart, counted."""
    warnings = Counter()
    moments = [datetime(2024, 10, 27, 0, 30, tzinfo=UTC), datetime(2024, 10, 27, 1, 30, tzinfo=UTC)]
    data = _sheet_file([(None, None, moment, None) for moment in moments], warnings, time_zone="Europe/London")
    sheet = _read(data)
    assert [sheet["C2"].value, sheet["C3"].value] == ["2024-10-27 01:30:00+01:00", "2024-10-27 01:30:00+00:00"]
    assert warnings == Counter({"repeated_local_time": 2})
