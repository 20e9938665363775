"""Report files as Excel: a `table` as a sheet with headings; a `coded` one with group heading,
subtotal and grand total rows. Rows (or groups of rows) and columns in, bytes out: the reading is
done by app/services/files/report_file_production.py.

Cells are typed values with number formats (the workspace's date pattern turned into Excel's),
never formulas. Each cell follows the XLSX cell rules of app/rendering/xlsx_cells.py, shared with
the query files' writer: text exact with the quote-prefix style, CR as `&#13;` (openpyxl writes
it), other control characters as `_xHHHH_`, text past Excel's 32,767 characters cut and counted,
dates as Excel's serials (as counted ISO text where a serial cannot carry them alike in Excel and
LibreOffice, or a time stamp falls in the hour the clocks repeat). openpyxl's write-only mode
holds one row at a time; the workbook is zipped into a temporary file and copied out. Columns are
as wide as their headings and the first data rows need (xlsx_cells.column_width, capped): a
write-only sheet takes its widths before its first row, so those rows are read ahead and written
after the title rows.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime
from itertools import chain, islice
from typing import Any
from zoneinfo import ZoneInfo

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from app.domain.sources.catalog import Column
from app.domain.sources.report_spec import is_amount, is_identifier
from app.rendering import ByteSink, TooManyRows
from app.rendering.pdf import Group, PdfLayout, add_to, rows_label
from app.rendering.pdf.formatting import format_datetime
from app.rendering.xlsx_cells import (
    WIDTH_SAMPLE_ROWS,
    cell_text,
    column_width,
    day_serial_or_text,
    moment_serial_or_text,
)
from app.rendering.xlsx_writer import COPY_CHUNK_BYTES, MAX_SHEET_ROWS

Progress = Callable[[int, int | None], None]

MIN_COLUMN_WIDTH = 8
# What a time stamp shows after its date (the column's format is the date's plus " hh:mm").
_TIME_SUFFIX = " 00:00"


_EXCEL_DATE_TOKENS = {
    "%d": "dd",
    "%m": "mm",
    "%Y": "yyyy",
    "%y": "yy",
    "%b": "mmm",
    "%B": "mmmm",
    "%a": "ddd",
    "%A": "dddd",
    "%H": "hh",
    "%M": "mm",
    "%S": "ss",
    "%e": "d",
    "%-d": "d",
    "%-m": "m",
}


def excel_date_format(strftime_format: str) -> str:
    """The workspace's strftime date pattern as an Excel number format (literal text quoted)."""
    result, index = [], 0
    while index < len(strftime_format):
        token = next((t for t in _EXCEL_DATE_TOKENS if strftime_format.startswith(t, index)), None)
        if token:
            result.append(_EXCEL_DATE_TOKENS[token])
            index += len(token)
        else:
            char = strftime_format[index]
            result.append(char if char in "/-.,: " else f'"{char}"')
            index += 1
    return "".join(result)


class _Sheet:
    """One write-only worksheet of a report: typed values with number formats, never formulas.

    What the cell rules had to change is counted in `warnings` (a Counter of the caller's, or
    the sheet's own); time stamps are shown in `time_zone`, which the headings name.
    """

    def __init__(
        self,
        workbook: Workbook,
        columns: list[Column],
        identifiers: set[str],
        date_format: str,
        *,
        warnings: Counter[str] | None = None,
        time_zone: str = "UTC",
    ):
        self.sheet = workbook.create_sheet("Report")
        self.columns = columns
        self.identifiers = identifiers
        self.date_format = date_format
        self.formats = {
            "integer": "#,##0",
            "decimal": "#,##0.00",
            "date": excel_date_format(date_format),
            "datetime": excel_date_format(date_format) + " hh:mm",
        }
        self.bold = Font(bold=True)
        self.band = PatternFill("solid", fgColor="E6E6E6")
        self.rows_written = 0
        self.warnings: Counter[str] = Counter() if warnings is None else warnings
        self.time_zone = time_zone
        self.zone = ZoneInfo(time_zone)

    def _text_cell(self, text: str) -> WriteOnlyCell:
        cell = WriteOnlyCell(self.sheet, value=cell_text(text, self.warnings))
        cell.data_type = "s"  # text stays text, whatever its first character
        cell.quotePrefix = True
        return cell

    def _serial_cell(self, value: date) -> WriteOnlyCell:
        """A date or time stamp as Excel's serial with the column's format, or counted ISO text."""
        if isinstance(value, datetime):
            serial, number_format = moment_serial_or_text(value, self.zone, self.warnings), self.formats["datetime"]
        else:
            serial, number_format = day_serial_or_text(value, self.warnings), self.formats["date"]
        if isinstance(serial, str):
            return self._text_cell(serial)
        cell = WriteOnlyCell(self.sheet, value=serial)
        cell.number_format = number_format
        return cell

    def cell(self, value: Any, column: Column | None = None, bold: bool = False) -> WriteOnlyCell:
        if isinstance(value, str):
            cell = self._text_cell(value)
        elif isinstance(value, date):
            cell = self._serial_cell(value)
        else:
            cell = WriteOnlyCell(self.sheet, value=value)
            if column is not None and value is not None:
                if column.name in self.identifiers:
                    cell.number_format = "0"
                elif column.type in ("integer", "decimal"):
                    cell.number_format = self.formats[column.type]
        if bold:
            cell.font = self.bold
        return cell

    def append(self, cells: list) -> None:
        if self.rows_written >= MAX_SHEET_ROWS:
            raise TooManyRows(f"The report has more rows than an Excel sheet holds ({MAX_SHEET_ROWS:,}).")
        self.sheet.append(cells)
        self.rows_written += 1

    def _shown_text(self, value: Any, column: Column) -> str:
        """About what the cell shows with its number format, for the column's width."""
        if value is None:
            return ""
        if isinstance(value, bool):
            return "FALSE"
        if isinstance(value, str):
            return value
        if isinstance(value, date):
            try:
                shown = value.strftime(self.date_format)
            except ValueError:  # a year strftime cannot print is written as ISO text
                shown = value.isoformat()
            return shown + _TIME_SUFFIX if isinstance(value, datetime) else shown
        if column.name in self.identifiers:
            return str(value)
        if column.type == "integer":
            return f"{value:,}"
        if column.type == "decimal":
            return f"{value:,.2f}"
        return str(value)

    def widths(self, sample: Sequence[Sequence[Any]]) -> None:
        """Set each column's width from its heading and the sampled data rows (before any row is written)."""
        for index, (column, heading) in enumerate(zip(self.columns, self.heading_texts(), strict=True)):
            shown = chain([heading], (self._shown_text(row[index], column) for row in sample))
            width = column_width(shown, MIN_COLUMN_WIDTH)
            self.sheet.column_dimensions[get_column_letter(index + 1)].width = width

    def heading_texts(self) -> list[str]:
        return [
            f"{column.label} ({self.time_zone})" if column.type == "datetime" else column.label
            for column in self.columns
        ]

    def headings(self) -> None:
        cells = []
        for label in self.heading_texts():
            cell = self.cell(label, bold=True)
            cell.fill = self.band
            cells.append(cell)
        self.append(cells)

    def row(self, values: Sequence[Any]) -> None:
        self.append([self.cell(v, c) for v, c in zip(values, self.columns, strict=True)])

    def label_row(self, label: str, totals: dict[str, Any] | None = None) -> None:
        """A group heading (no totals) or a subtotal / grand total row, in bold.

        The label sits in the first column; when that column is itself totalled, the label
        takes a row of its own above the totals.
        """
        label_cell = self.cell(label, bold=True)
        if totals is None:
            self.append([label_cell])
            return
        cells = [self.cell(totals.get(c.name), c, bold=True) for c in self.columns]
        if self.columns[0].name in totals:
            self.append([label_cell])
        else:
            cells[0] = label_cell
        self.append(cells)


def _read_ahead_groups(groups: Iterable[Group]) -> tuple[list[Sequence[Any]], Iterator[Group]]:
    """The first WIDTH_SAMPLE_ROWS data rows across the groups, and the groups as they were.

    A group's rows may share one cursor with the next group's (itertools.groupby), so the group
    being read when the sample fills is not left: the outer iterator only moves past groups whose
    rows were all read.
    """
    remaining = iter(groups)
    sample: list[Sequence[Any]] = []
    read: list[Group] = []
    while len(sample) < WIDTH_SAMPLE_ROWS:
        group = next(remaining, None)
        if group is None:
            break
        group_rows = iter(group.rows)
        taken = list(islice(group_rows, WIDTH_SAMPLE_ROWS - len(sample)))
        sample.extend(taken)
        read.append(dataclasses.replace(group, rows=chain(taken, group_rows)))
    return sample, chain(read, remaining)


def write_report_xlsx(
    columns: list[Column],
    page: PdfLayout,
    out: ByteSink,
    *,
    rows: Iterable[Sequence[Any]] | None = None,
    groups: Iterable[Group] | None = None,
    total: int | None,
    progress: Progress,
    warnings: Counter[str],
    time_zone: str = "UTC",
) -> int:
    """Write a report's sheet to `out`: `rows` (a table) or `groups` (a coded report), each row
    holding the values of `columns` in order, time stamps shown in `time_zone`. Returns the data
    rows written."""
    workbook = Workbook(write_only=True)
    identifiers = {c.name for c in columns if is_identifier(c)}
    sheet = _Sheet(workbook, columns, identifiers, page.date_format, warnings=warnings, time_zone=time_zone)
    if groups is not None:
        sample, groups = _read_ahead_groups(groups)
    else:
        remaining = iter(rows or ())
        sample = list(islice(remaining, WIDTH_SAMPLE_ROWS))
        table_rows = chain(sample, remaining)
    sheet.widths(sample)
    sheet.append([sheet.cell(page.title, bold=True)])
    if page.subtitle:
        sheet.append([sheet.cell(page.subtitle)])
    if page.filters_text:
        sheet.append([sheet.cell(page.filters_text)])
    if page.generated_at is not None:
        stamp = format_datetime(page.generated_at, page.datetime_format, time_zone=page.time_zone)
        sheet.append([sheet.cell(f"Generated {stamp}")])
    sheet.append([])
    sheet.headings()

    written = 0
    if groups is not None:
        amounts = [(c.name, index) for index, c in enumerate(columns) if is_amount(c)]
        grand: dict[str, Any] = {}
        for group in groups:
            heading = f"{group.code} — {group.description}" if group.description else group.code
            sheet.label_row(f"{heading} · {rows_label(group.row_count or 0)}")
            subtotal: dict[str, Any] = {}
            seen = 0
            for values in group.rows:
                sheet.row(values)
                seen += 1
                for name, index in amounts:
                    add_to(subtotal, name, values[index])
                written += 1
                if written % 1000 == 0:
                    progress(written, total)
            sheet.label_row(f"Subtotal {group.code} · {rows_label(seen)}", subtotal)
            for name, value in subtotal.items():
                add_to(grand, name, value)
        sheet.label_row(f"Grand total · {rows_label(written)}", grand)
    else:
        for values in table_rows:
            sheet.row(values)
            written += 1
            if written % 1000 == 0:
                progress(written, total)
    # openpyxl needs a seekable file to zip into; the finished workbook is then copied out.
    with tempfile.TemporaryFile() as spool:
        workbook.save(spool)
        spool.seek(0)
        shutil.copyfileobj(spool, out, COPY_CHUNK_BYTES)
    progress(written, total)
    return written
