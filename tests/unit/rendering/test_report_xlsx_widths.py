"""Report sheets' column widths follow their content (headings and the first data rows), read back with openpyxl."""

from __future__ import annotations

import io
import itertools
from collections import Counter
from datetime import date
from decimal import Decimal

from openpyxl import load_workbook

from app.domain.sources.catalog import get_dataset
from app.rendering.pdf import Group, PdfLayout
from app.rendering.report_xlsx import write_report_xlsx
from app.rendering.xlsx_cells import MAX_COLUMN_WIDTH, WIDTH_SAMPLE_ROWS

DATASET = get_dataset("timesheet_entries")
COLUMNS = [DATASET.column(name) for name in ("note", "work_date", "hours")]


def _write(*, rows=None, groups=None, title: str = "Hours") -> bytes:
    out = io.BytesIO()
    write_report_xlsx(
        COLUMNS,
        PdfLayout(title=title),
        out,
        rows=rows,
        groups=groups,
        total=None,
        progress=lambda n, t: None,
        warnings=Counter(),
    )
    return out.getvalue()


def _widths(data: bytes) -> dict[str, float]:
    sheet = load_workbook(io.BytesIO(data)).active
    return {letter: sheet.column_dimensions[letter].width for letter in "ABC"}


def _notes(*notes: str) -> list[tuple]:
    return [(note, None, None) for note in notes]


def test_a_text_column_is_as_wide_as_its_longest_value_in_the_first_rows():
    """A 40-character note makes the note column 42 wide (40 and padding)."""
    assert _widths(_write(rows=_notes("short", "n" * 40)))["A"] == 42


def test_a_number_column_is_as_wide_as_its_formatted_amount():
    """1234567.5 hours shows as 1,234,567.50: twelve characters and padding."""
    assert _widths(_write(rows=[(None, None, Decimal("1234567.5"))]))["C"] == 14


def test_a_date_column_is_as_wide_as_the_workspace_date_pattern_prints():
    """With %d/%m/%Y a date shows ten characters, wider than its heading "Date"."""
    assert _widths(_write(rows=[(None, date(2026, 11, 2), None)]))["B"] == 12


def test_a_column_of_short_values_keeps_the_floor():
    """Two-letter notes under the heading "Note" give the floor of 8."""
    assert _widths(_write(rows=_notes("ab")))["A"] == 8


def test_a_column_width_is_capped():
    """A 5,000-character note gives the cap."""
    assert _widths(_write(rows=_notes("x" * 5000)))["A"] == MAX_COLUMN_WIDTH


def test_wide_characters_count_double():
    """Ten Japanese characters are as wide as twenty Latin letters."""
    japanese = _widths(_write(rows=_notes("日本語の長いメモです")))["A"]
    assert japanese == _widths(_write(rows=_notes("x" * 20)))["A"] == 22


def test_the_title_does_not_widen_the_first_column():
    """A long title spills over the empty cells beside it; the note column stays as wide as its notes."""
    assert _widths(_write(rows=_notes("ab"), title="A very long report title " * 4))["A"] == 8


def test_values_past_the_first_rows_do_not_widen_the_column():
    """Only the sampled rows are measured: a long note after them is written but not measured."""
    assert _widths(_write(rows=_notes(*(["ab"] * WIDTH_SAMPLE_ROWS + ["n" * 40]))))["A"] == 8


def _coded_groups(rows: list[tuple]):
    """Groups sharing one iterator, as the report service makes them (itertools.groupby)."""
    for code, group_rows in itertools.groupby(rows, key=lambda row: row[0][:1]):
        yield Group(code=code, description="", rows=group_rows)


def test_a_coded_report_measures_rows_across_its_groups():
    """A long note in the second group widens the note column."""
    rows = _notes("a1", "a2", "b" + "n" * 39)
    assert _widths(_write(groups=_coded_groups(rows)))["A"] == 42


def test_a_coded_reports_rows_read_ahead_are_all_written_in_their_groups():
    """Three groups of 90 rows (the sample ends inside the second) come back whole and in order."""
    rows = _notes(*(f"{letter}{i:03}" for letter in "abc" for i in range(90)))
    sheet = load_workbook(io.BytesIO(_write(groups=_coded_groups(rows)))).active
    notes = [row[0].value for row in sheet.iter_rows(min_row=4) if row[0].value and row[0].value[1:].isdigit()]
    assert notes == [note for note, _, _ in rows]
    subtotals = [row[0].value for row in sheet.iter_rows() if str(row[0].value).startswith("Subtotal")]
    assert subtotals == ["Subtotal a · 90 rows", "Subtotal b · 90 rows", "Subtotal c · 90 rows"]
