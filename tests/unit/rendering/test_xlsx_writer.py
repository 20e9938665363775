"""The streaming XLSX writer, read back with openpyxl."""

import io
import re
import threading
import zipfile
from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from openpyxl import load_workbook

from app.domain.files.file_warnings import DATE_OUT_OF_RANGE, describe
from app.domain.sources.catalog import get_dataset
from app.rendering import TooManyRows, xlsx_cells, xlsx_writer
from app.rendering.xlsx_writer import MAX_CELL_CHARS, TRUNCATION_MARKER, column_letters, write_xlsx

DATASET = get_dataset("timesheet_entries")
COLUMNS = [DATASET.column(n) for n in ("id", "note", "hours", "work_date", "recorded_at", "approved")]
ROW = (7, "=1+2", Decimal("7.50"), date(2026, 11, 2), datetime(2026, 11, 2, 18, 30, 15, tzinfo=UTC), True)


def _write(rows, columns=COLUMNS, **options) -> bytes:
    out = io.BytesIO()
    settings = {
        "heading": "names",
        "include_descriptions": False,
        "progress": lambda n, t: None,
        "total": None,
        "warnings": Counter(),
    }
    write_xlsx(columns, rows, out, **{**settings, **options})
    return out.getvalue()


def _sheet(data: bytes):
    return load_workbook(io.BytesIO(data)).active


def _part(data: bytes, name: str) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return package.read(name).decode()


def _ooxml_decoded(text: str) -> str:
    """What Excel shows for a stored string: each _xHHHH_ escape read as its character."""
    return re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), text)


def _quote_prefixed_styles(data: bytes) -> set[int]:
    """Indexes of the cellXfs entries carrying quotePrefix="1"."""
    cell_xfs = re.search(r"<cellXfs[^>]*>(.*)</cellXfs>", _part(data, "xl/styles.xml")).group(1)
    entries = re.findall(r"<xf [^>]*?(?:/>|>.*?</xf>)", cell_xfs)
    return {i for i, entry in enumerate(entries) if 'quotePrefix="1"' in entry}


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
    """Numbers are numbers: -2.50 is a number, not the text '-2.50."""
    sheet = _sheet(_write([(-3, "x", Decimal("-2.50"), None, None, False)]))
    assert (sheet["A2"].value, sheet["C2"].value) == (-3, -2.5)


def test_text_is_exact_with_the_quote_prefix_style_and_never_a_formula():
    """Formula-like text is written exactly, as a string cell whose style has quotePrefix; no <f> element."""
    data = _write([ROW])
    cell = _sheet(data)["B2"]
    assert (cell.value, cell.data_type) == ("=1+2", "s")
    sheet_xml = _part(data, "xl/worksheets/sheet1.xml")
    assert "<f>" not in sheet_xml and "<f " not in sheet_xml
    text_cell = re.search(r'<c r="B2" s="(\d+)" t="inlineStr">', sheet_xml)
    assert int(text_cell.group(1)) in _quote_prefixed_styles(data)


def test_every_text_cell_of_the_hostile_values_is_exact_and_quote_prefixed():
    """Each hostile value reads back as stored (after OOXML unescaping), and every text cell is quote-prefixed."""
    from tests.factories import hostile_values

    values = hostile_values()
    data = _write([(i, value, None, None, None, None) for i, value in enumerate(values)])
    sheet = _sheet(data)
    assert [_ooxml_decoded(sheet.cell(row=i + 2, column=2).value) for i in range(len(values))] == values
    prefixed = _quote_prefixed_styles(data)
    styles = re.findall(r'<c r="[A-Z]+\d+" s="(\d+)" t="inlineStr">', _part(data, "xl/worksheets/sheet1.xml"))
    assert len(styles) == len(values) + len(COLUMNS)
    assert all(int(style) in prefixed for style in styles)


def test_missing_values_leave_the_cell_empty():
    """A NULL of any type is an empty cell."""
    sheet = _sheet(_write([(1, None, None, None, None, None)]))
    assert [c.value for c in sheet[2]] == [1, None, None, None, None, None]


def test_carriage_returns_tabs_and_newlines_survive():
    """Whitespace control characters reach the reader unchanged: tab and line feed as such, CR as &#13;."""
    values = ["\r=1+1", "a\r\nb", "\ttab", "x\ny", "  padded  "]
    sheet = _sheet(_write([(i, v, None, None, None, None) for i, v in enumerate(values)]))
    assert [_ooxml_decoded(sheet.cell(row=i + 2, column=2).value) for i in range(len(values))] == values


def test_a_carriage_return_is_an_xml_character_reference_openpyxl_reads_as_itself():
    """openpyxl and pandas do not decode _x000D_: the CR is written &#13; and read back as CR, not LF."""
    data = _write([(1, "\r=1+1 a\r\nb", None, None, None, None)])
    assert _sheet(data)["B2"].value == "\r=1+1 a\r\nb"
    assert "&#13;=1+1 a&#13;\nb" in _part(data, "xl/worksheets/sheet1.xml")


def test_xml_special_characters_are_escaped():
    """Markup-like text is stored as text."""
    text = '<b>bold</b> & "quotes" ]]> <pdf:nextpage />'
    assert _sheet(_write([(1, text, None, None, None, None)]))["B2"].value == text


def test_characters_xml_cannot_carry_use_excel_escapes():
    """A vertical tab becomes _x000B_, and a literal _x0041_ keeps its meaning by escaping its underscore."""
    data = _write([(1, "a\x0bb _x0041_\x01", None, None, None, None)])
    assert "a_x000B_b _x005F_x0041__x0001_" in _part(data, "xl/worksheets/sheet1.xml")


def test_text_longer_than_excel_allows_is_counted_as_a_warning():
    """Each cut cell adds one to cell_truncated; text that fits adds nothing."""
    warnings = Counter()
    rows = [(1, "x" * 40_000, None, None, None, None), (2, "y" * 100, None, None, None, None)] * 2
    _write(rows, warnings=warnings)
    assert warnings == Counter({"cell_truncated": 2})


@pytest.mark.parametrize(
    ("day", "serial"),
    [
        (date(1900, 3, 1), 61),
        (date(2026, 11, 2), 46328),
        (date(9999, 12, 31), 2958465),
    ],
)
def test_date_serials_follow_excels_1900_system(day, serial):
    """1900-03-01 is serial 61 (after Excel's phantom 1900-02-29, serial 60), and so on to 9999-12-31."""
    sheet_xml = _part(_write([(1, None, None, day, None, None)]), "xl/worksheets/sheet1.xml")
    assert f'<c r="D2" s="3"><v>{serial}</v></c>' in sheet_xml


def test_dates_and_time_stamps_before_march_1900_are_counted_iso_text():
    """Serials 1 to 59 read one day early in LibreOffice: 1900-01-01 to 1900-02-28 are ISO text, counted."""
    warnings = Counter()
    rows = [
        (1, None, None, date(1900, 1, 1), datetime(1900, 2, 28, 23, 0, tzinfo=UTC), None),
        (2, None, None, date(1900, 2, 28), None, None),
    ]
    sheet = _sheet(_write(rows, warnings=warnings))
    assert [(cell.value, cell.data_type) for cell in (sheet["D2"], sheet["E2"], sheet["D3"])] == [
        ("1900-01-01", "s"),
        ("1900-02-28T23:00:00+00:00", "s"),
        ("1900-02-28", "s"),
    ]
    assert warnings == Counter({"date_out_of_range": 3})


def test_a_time_stamp_on_february_28th_1900_in_the_files_zone_is_text():
    """1900-03-01 02:00 UTC is 1900-02-28 21:00 in New York: the wall time's day decides, so it is text."""
    warnings = Counter()
    moment = datetime(1900, 3, 1, 2, 0, tzinfo=UTC)
    sheet = _sheet(_write([(1, None, None, None, moment, None)], time_zone="America/New_York", warnings=warnings))
    assert sheet["E2"].value == "1900-02-28T21:00:00-05:00"
    assert warnings == Counter({"date_out_of_range": 1})


def test_the_last_instant_excel_can_hold_stays_on_its_day():
    """9999-12-31 23:59:59.999999 is written as that day at 23:59:59, never rounded into the next day."""
    last = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    data = _write([(1, None, None, None, last, None)])
    serial = float(re.search(r'<c r="E2" s="4"><v>([^<]+)</v>', _part(data, "xl/worksheets/sheet1.xml")).group(1))
    assert int(serial) == 2958465
    assert _sheet(data)["E2"].value == datetime(9999, 12, 31, 23, 59, 59)


def test_dates_excel_cannot_hold_are_iso_text_and_counted():
    """Dates and time stamps before 1900-01-01 are text cells in ISO form, one date_out_of_range each."""
    warnings = Counter()
    early = (1, None, None, date(1899, 12, 31), datetime(1850, 6, 1, 12, 0, tzinfo=UTC), None)
    sheet = _sheet(_write([early], warnings=warnings))
    assert (sheet["D2"].value, sheet["D2"].data_type) == ("1899-12-31", "s")
    assert sheet["E2"].value == "1850-06-01T12:00:00+00:00"
    assert warnings == Counter({"date_out_of_range": 2})


def test_time_stamps_are_shown_in_the_chosen_zone_named_in_heading_and_descriptions():
    """In Asia/Kolkata 18:30 UTC is 00:00 the next day; the heading and description name the zone."""
    data = _write([ROW], heading="labels", include_descriptions=True, time_zone="Asia/Kolkata")
    sheet = _sheet(data)
    assert sheet["E3"].value == datetime(2026, 11, 3, 0, 0, 15)
    assert sheet["E1"].value == "Recorded (Asia/Kolkata)"
    assert "(Asia/Kolkata)" in sheet["E2"].value and "UTC" not in sheet["E2"].value


def test_a_time_stamp_past_year_9999_in_the_zone_is_counted_text():
    """9999-12-31 23:00 UTC is in year 10000 in Tokyo: written as UTC ISO text and counted."""
    warnings = Counter()
    late = datetime(9999, 12, 31, 23, 0, tzinfo=UTC)
    sheet = _sheet(_write([(1, None, None, None, late, None)], time_zone="Asia/Tokyo", warnings=warnings))
    assert sheet["E2"].value == "9999-12-31T23:00:00Z"
    assert warnings == Counter({"date_out_of_range": 1})


def test_time_stamps_in_the_hour_the_clocks_repeat_are_text_with_their_offset():
    """In London 00:30 and 01:30 UTC on 2024-10-27 both read 01:30: each is written with its offset, counted."""
    warnings = Counter()
    moments = [datetime(2024, 10, 27, hour, 30, tzinfo=UTC) for hour in (0, 1, 2)]
    rows = [(i, None, None, None, moment, None) for i, moment in enumerate(moments)]
    sheet = _sheet(_write(rows, time_zone="Europe/London", warnings=warnings))
    assert [sheet[f"E{row}"].value for row in (2, 3, 4)] == [
        "2024-10-27 01:30:00+01:00",
        "2024-10-27 01:30:00+00:00",
        datetime(2024, 10, 27, 2, 30),
    ]
    assert warnings == Counter({"repeated_local_time": 2})


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
    sheet = _sheet(_write([ROW], heading="labels", include_descriptions=True, time_zone="Europe/Paris"))
    expected = [c.description.replace("(UTC)", "(Europe/Paris)") for c in COLUMNS]
    assert [c.value for c in sheet[2]] == expected
    assert sheet["A3"].value == 7
    assert sheet.freeze_panes == "A3"


def test_columns_get_widths_from_their_labels():
    """Each column has a width at least as wide as its heading text."""
    sheet = _sheet(_write([ROW], heading="labels"))
    for index, column in enumerate(COLUMNS):
        assert sheet.column_dimensions[column_letters(index)].width >= len(column.label)


def _width(data: bytes, letter: str) -> float:
    return _sheet(data).column_dimensions[letter].width


def _note_rows(*notes: str) -> list[tuple]:
    return [(i, note, None, None, None, None) for i, note in enumerate(notes, start=1)]


def test_a_text_column_is_as_wide_as_its_longest_value_in_the_first_rows():
    """A 40-character note widens the note column past its 4-letter heading: 40 plus padding."""
    assert _width(_write(_note_rows("short", "n" * 40, "mid-length note")), "B") == 42


def test_an_integer_column_is_as_wide_as_its_longest_number():
    """Twelve digits in the id column make it 14 wide, not the heading's width."""
    assert _width(_write([(123_456_789_012, None, None, None, None, None)]), "A") == 14


def test_a_column_of_short_values_keeps_its_types_floor():
    """Notes of two letters still get the text column's floor of 12."""
    assert _width(_write(_note_rows("ab", "cd")), "B") == 12


def test_a_column_width_is_capped():
    """A 5,000-character note gives the cap, 60, not a column as wide as the text."""
    assert _width(_write(_note_rows("x" * 5000)), "B") == xlsx_cells.MAX_COLUMN_WIDTH == 60


def test_wide_characters_count_double():
    """Ten Chinese characters take as much room as twenty Latin ones."""
    chinese = _width(_write(_note_rows("漢字漢字漢字漢字漢字")), "B")
    assert chinese == _width(_write(_note_rows("x" * 20)), "B") == 22


def test_only_the_longest_line_of_a_multi_line_value_counts():
    """A note of two 30-character lines is as wide as one line, not both together."""
    assert _width(_write(_note_rows("a" * 30 + "\n" + "b" * 30)), "B") == 32


def test_a_long_heading_still_sets_the_width_when_values_are_short():
    """The recorded-at heading with its zone name is wider than its time stamps."""
    data = _write([ROW], heading="labels", time_zone="America/Argentina/ComodRivadavia")
    assert _width(data, "E") == len("Recorded (America/Argentina/ComodRivadavia)") + 2


def test_values_past_the_first_rows_do_not_widen_the_column():
    """Widths come before the rows in the sheet, so a long note after the sampled rows is not measured."""
    rows = _note_rows(*(["ab"] * xlsx_cells.WIDTH_SAMPLE_ROWS + ["n" * 40]))
    assert _width(_write(rows), "B") == 12


def test_rows_read_ahead_for_the_widths_are_written_once_and_in_order():
    """250 rows (more than the sample) come back complete and in their order."""
    rows = _note_rows(*(f"note {i}" for i in range(250)))
    sheet = _sheet(_write(rows))
    assert [row[0].value for row in sheet.iter_rows(min_row=2)] == list(range(1, 251))


def test_sheet_is_named_after_the_given_name_made_safe():
    """Characters Excel refuses in sheet names are replaced and the name is cut to 31."""
    sheet = _sheet(_write([ROW], sheet_name="Hours: north/south [2026] and a very long tail"))
    assert sheet.title == "Hours  north south  2026  and a"


def test_refuses_a_known_total_beyond_the_sheet_before_writing():
    """A total that cannot fit (heading included) raises TooManyRows and writes nothing."""
    out = io.BytesIO()
    with pytest.raises(TooManyRows, match="1,048,575"):
        write_xlsx(
            COLUMNS,
            iter([ROW]),
            out,
            heading="names",
            include_descriptions=False,
            progress=lambda n, t: None,
            total=1_048_576,
            warnings=Counter(),
        )
    assert out.getvalue() == b""


def test_refuses_rows_beyond_the_sheet_while_streaming(monkeypatch):
    """Without a total, the writer stops with TooManyRows when a row would pass the last sheet row."""
    monkeypatch.setattr(xlsx_writer, "MAX_SHEET_ROWS", 5)
    with pytest.raises(TooManyRows):
        _write([ROW] * 5)
    assert len(list(_sheet(_write([ROW] * 4)).iter_rows())) == 5


def _sheet_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "xlsx-sheet"]


def test_the_sheet_s_writing_thread_ends_when_rows_beyond_the_sheet_stop_the_writer(monkeypatch):
    monkeypatch.setattr(xlsx_writer, "MAX_SHEET_ROWS", 5)
    with pytest.raises(TooManyRows):
        _write([ROW] * 5)
    assert _sheet_threads() == []


def test_a_sheet_written_in_pieces_from_its_thread_is_whole_and_in_order():
    rows = [(i, f"note {i}", None, None, None, None) for i in range(4 * xlsx_writer.PROGRESS_EVERY_ROWS + 7)]
    sheet = _sheet(_write(rows))
    assert [row[0] for row in sheet.iter_rows(min_row=2, max_col=1, values_only=True)] == list(range(len(rows)))
    assert _sheet_threads() == []


def test_a_failure_of_the_sheet_s_sink_reaches_the_caller_and_ends_the_thread():
    class FullDisk:
        def write(self, data: bytes) -> None:
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"), xlsx_writer._WrittenInAThread(FullDisk()) as sheet:
        for _ in range(xlsx_writer.HANDED_OVER_PIECES + 3):
            sheet.write(b"<row/>")
    assert _sheet_threads() == []


def test_progress_is_reported_while_writing_and_at_the_end():
    """progress(rows, total) is called every few thousand rows and with the final count."""
    calls = []
    rows = [(i, "n", None, None, None, None) for i in range(4500)]
    _write(rows, progress=lambda n, t: calls.append((n, t)), total=4500)
    assert calls == [(2000, 4500), (4000, 4500), (4500, 4500)]


def test_column_letters_cover_two_letter_columns():
    """Zero-based indexes map to A..Z, AA.., as spreadsheets name them."""
    assert [column_letters(i) for i in (0, 25, 26, 51, 52, 701, 702)] == ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA"]


def test_out_of_range_text_has_the_forms_the_warning_names():
    """The file's warning says dates read YYYY-MM-DD and time stamps YYYY-MM-DDTHH:MM:SS with an offset or Z."""
    early = (1, None, None, date(1899, 12, 31), datetime(1850, 6, 1, 12, 0, tzinfo=UTC), None)
    late = (2, None, None, None, datetime(9999, 12, 31, 23, 0, tzinfo=UTC), None)
    in_kolkata = _sheet(_write([early, late], time_zone="Asia/Kolkata"))
    day, first, last = in_kolkata["D2"].value, in_kolkata["E2"].value, in_kolkata["E3"].value
    sentence = describe(DATE_OUT_OF_RANGE, 3)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", day) and "a date as YYYY-MM-DD" in sentence
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d([+-]\d\d:\d\d|Z)", first), first
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d([+-]\d\d:\d\d|Z)", last), last
