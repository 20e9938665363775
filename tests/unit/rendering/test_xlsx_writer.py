"""The streaming XLSX writer, read back with openpyxl."""

import io
import zipfile
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from openpyxl import load_workbook

from app.domain.catalog import get_dataset
from app.rendering import TooManyRows, xlsx_writer
from app.rendering.xlsx_writer import MAX_CELL_CHARS, TRUNCATION_MARKER, column_letters, write_xlsx

DATASET = get_dataset("timesheet_entries")
COLUMNS = [DATASET.column(n) for n in ("id", "note", "hours", "work_date", "recorded_at", "approved")]
ROW = (7, "=1+2", Decimal("7.50"), date(2026, 11, 2), datetime(2026, 11, 2, 18, 30, 15, tzinfo=UTC), True)


def _write(rows, columns=COLUMNS, **options) -> bytes:
    out = io.BytesIO()
    settings = {"heading": "names", "include_descriptions": False, "progress": lambda n, t: None, "total": None}
    write_xlsx(columns, rows, out, **{**settings, **options})
    return out.getvalue()


def _sheet(data: bytes):
    return load_workbook(io.BytesIO(data)).active


def test_typed_values_come_back_as_numbers_dates_and_booleans():
    """Integers, decimals, dates, UTC datetimes and booleans are written as values of their kind."""
    sheet = _sheet(_write([ROW]))
    ident, _, hours, day, moment, approved = sheet[2]
    assert (ident.value, ident.data_type) == (7, "n")
    assert (hours.value, hours.data_type, hours.number_format) == (7.5, "n", "0.00")
    assert (day.value.date(), day.number_format) == (date(2026, 11, 2), "yyyy-mm-dd")
    assert (moment.value, moment.number_format) == (datetime(2026, 11, 2, 18, 30, 15), "yyyy-mm-dd hh:mm:ss")
    assert (approved.value, approved.data_type) == (True, "b")


def test_decimal_number_format_keeps_the_stored_scale():
    """A decimal stored with one place gets a one-place format; a whole one gets "0"."""
    columns = [DATASET.column("hours")]
    sheet = _sheet(_write([(Decimal("4.0"),), (Decimal("12"),)], columns=columns))
    assert [sheet["A2"].number_format, sheet["A3"].number_format] == ["0.0", "0"]


def test_a_negative_number_stays_a_number():
    """Neutralising applies to text only: -2.50 is a number, not the text '-2.50."""
    sheet = _sheet(_write([(-3, "x", Decimal("-2.50"), None, None, False)]))
    assert (sheet["A2"].value, sheet["C2"].value) == (-3, -2.5)


def test_text_is_an_inline_string_neutralised_and_never_a_formula():
    """Formula-like text is written as a string with a leading quote; the sheet holds no <f> element."""
    data = _write([ROW])
    cell = _sheet(data)["B2"]
    assert (cell.value, cell.data_type) == ("'=1+2", "s")
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert b"<f>" not in package.read("xl/worksheets/sheet1.xml")


def test_missing_values_leave_the_cell_empty():
    """A NULL of any type is an empty cell."""
    sheet = _sheet(_write([(1, None, None, None, None, None)]))
    assert [c.value for c in sheet[2]] == [1, None, None, None, None, None]


def test_carriage_returns_tabs_and_newlines_survive():
    """Whitespace control characters reach the reader unchanged (after the neutralising quote)."""
    values = ["\r=1+1", "a\r\nb", "\ttab", "x\ny", "  padded  "]
    sheet = _sheet(_write([(i, v, None, None, None, None) for i, v in enumerate(values)]))
    assert [sheet.cell(row=i + 2, column=2).value for i in range(len(values))] == [
        "'\r=1+1", "a\r\nb", "'\ttab", "x\ny", "  padded  ",
    ]


def test_xml_special_characters_are_escaped():
    """Markup-like text is stored as text."""
    text = '<b>bold</b> & "quotes" ]]> <pdf:nextpage />'
    assert _sheet(_write([(1, text, None, None, None, None)]))["B2"].value == text


def test_characters_xml_cannot_carry_use_excel_escapes():
    """A vertical tab becomes _x000B_, and a literal _x0041_ keeps its meaning by escaping its underscore."""
    data = _write([(1, "a\x0bb _x0041_", None, None, None, None)])
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        sheet_xml = package.read("xl/worksheets/sheet1.xml").decode()
    assert "a_x000B_b _x005F_x0041_" in sheet_xml


def test_text_longer_than_excel_allows_is_truncated_with_a_marker():
    """A 40,000-character text is cut to Excel's 32,767 characters, ending with the marker."""
    value = _sheet(_write([(1, "x" * 40_000, None, None, None, None)]))["B2"].value
    assert len(value) == MAX_CELL_CHARS
    assert value.endswith(TRUNCATION_MARKER)


def test_truncation_counts_characters_as_excel_does():
    """Emoji count as two characters toward the limit, and a cut never leaves half an emoji."""
    value = _sheet(_write([(1, "🙂" * 20_000, None, None, None, None)]))["B2"].value
    assert len(value.encode("utf-16-le")) // 2 <= MAX_CELL_CHARS
    assert value == "🙂" * ((MAX_CELL_CHARS - len(TRUNCATION_MARKER)) // 2) + TRUNCATION_MARKER


def test_text_at_the_limit_is_kept_whole():
    """Exactly 32,767 characters fit and are not cut."""
    assert _sheet(_write([(1, "y" * MAX_CELL_CHARS, None, None, None, None)]))["B2"].value == "y" * MAX_CELL_CHARS


@pytest.mark.parametrize(("heading", "first_row"), [("names", "id"), ("labels", "Entry ID"), ("none", 7)])
def test_heading_row_follows_the_heading_choice(heading, first_row):
    """Column names, labels, or no heading row at all."""
    assert _sheet(_write([ROW], heading=heading))["A1"].value == first_row


def test_heading_is_bold_and_frozen():
    """The heading row is bold and stays in view when scrolling."""
    sheet = _sheet(_write([ROW], heading="labels"))
    assert sheet["A1"].font.b
    assert sheet.freeze_panes == "A2"


def test_no_heading_means_nothing_frozen():
    """Without a heading row no pane is frozen."""
    assert _sheet(_write([ROW], heading="none")).freeze_panes is None


def test_descriptions_row_sits_under_the_heading():
    """With descriptions, row 2 holds the catalog descriptions and both rows are frozen."""
    sheet = _sheet(_write([ROW], heading="labels", include_descriptions=True))
    assert [c.value for c in sheet[2]] == [c.description for c in COLUMNS]
    assert sheet["A3"].value == 7
    assert sheet.freeze_panes == "A3"


def test_columns_get_widths_from_their_labels():
    """Each column has a width at least as wide as its heading text."""
    sheet = _sheet(_write([ROW], heading="labels"))
    for index, column in enumerate(COLUMNS):
        assert sheet.column_dimensions[column_letters(index)].width >= len(column.label)


def test_sheet_is_named_after_the_given_name_made_safe():
    """Characters Excel refuses in sheet names are replaced and the name is cut to 31."""
    sheet = _sheet(_write([ROW], sheet_name="Hours: north/south [2026] and a very long tail"))
    assert sheet.title == "Hours  north south  2026  and a"


def test_refuses_a_known_total_beyond_the_sheet_before_writing():
    """A total that cannot fit (heading included) raises TooManyRows and writes nothing."""
    out = io.BytesIO()
    with pytest.raises(TooManyRows, match="1,048,575"):
        write_xlsx(COLUMNS, iter([ROW]), out, heading="names", include_descriptions=False,
                   progress=lambda n, t: None, total=1_048_576)
    assert out.getvalue() == b""


def test_refuses_rows_beyond_the_sheet_while_streaming(monkeypatch):
    """Without a total, the writer stops with TooManyRows when a row would pass the last sheet row."""
    monkeypatch.setattr(xlsx_writer, "MAX_SHEET_ROWS", 5)
    with pytest.raises(TooManyRows):
        _write([ROW] * 5)
    assert len(list(_sheet(_write([ROW] * 4)).iter_rows())) == 5


def test_progress_is_reported_while_writing_and_at_the_end():
    """progress(rows, total) is called every few thousand rows and with the final count."""
    calls = []
    rows = [(i, "n", None, None, None, None) for i in range(4500)]
    _write(rows, progress=lambda n, t: calls.append((n, t)), total=4500)
    assert calls == [(2000, 4500), (4000, 4500), (4500, 4500)]


def test_column_letters_cover_two_letter_columns():
    """Zero-based indexes map to A..Z, AA.., as spreadsheets name them."""
    assert [column_letters(i) for i in (0, 25, 26, 51, 52, 701, 702)] == ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA"]
