"""XLSX export files, written as SpreadsheetML by a streaming writer of our own.

Why not openpyxl or XlsxWriter: measured on 200k rows × 8 mixed columns on the 2-core machine,
openpyxl's write-only mode took 1.8× as long as XlsxWriter in constant_memory mode (the bench
anchor), and it keeps every distinct string in an in-memory shared-strings table, so memory grows
with the rows. This writer formats each cell with one precomputed function per column and
streams the sheet into a deflated zip member; it runs several times faster than the anchor and
its memory does not depend on the number of rows. Reading back (tests, people) is openpyxl's
and Excel's business.

What the file holds:
- an optional heading row (column names or labels, bold) and, under it, an optional
  descriptions row (the catalog's descriptions, italic); the rows above the data are frozen;
  time stamp columns name the file's time zone in both;
- text as inline strings, exact, with the quote-prefix style, never a formula; control
  characters escaped, over-long text cut and counted: the rules of app/rendering/xlsx_cells.py;
- integers and decimals as numbers (a decimal's digits are written as stored, and its cell gets
  a number format with the same number of decimal places, so 7.50 shows as 7.50);
- dates as date serials formatted yyyy-mm-dd, time stamps as serials in the file's time zone
  formatted yyyy-mm-dd hh:mm:ss (both by xlsx_cells.py, which writes as counted ISO text what
  a serial cannot carry alike in Excel and LibreOffice, and a time stamp in the hour the clocks
  repeat), booleans as booleans; a missing value leaves the cell empty.
- columns as wide as the heading and the first rows need (xlsx_cells.column_width, capped): the
  first WIDTH_SAMPLE_ROWS rows are read before the sheet starts, since its widths come first.

Writers take rows and write bytes; they never query. Limits that change data are counted in
the `warnings` Counter the caller passes (app/domain/files/file_warnings.py has the codes).
"""

from __future__ import annotations

import queue
import re
import shutil
import tempfile
import threading
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, tzinfo
from decimal import Decimal
from itertools import chain, islice
from typing import Any
from xml.sax.saxutils import quoteattr
from zoneinfo import ZoneInfo

from app.domain.sources.catalog import Column
from app.rendering import TooManyRows
from app.rendering.xlsx_cells import (
    MAX_CELL_CHARS,
    TRUNCATION_MARKER,
    WIDTH_SAMPLE_ROWS,
    cell_text,
    column_width,
    day_serial_or_text,
    moment_serial_or_text,
)
from app.vocabulary import Heading

__all__ = ["MAX_CELL_CHARS", "TRUNCATION_MARKER", "column_letters", "write_xlsx"]

Progress = Callable[[int, int | None], None]

MAX_SHEET_ROWS = 1_048_576
PROGRESS_EVERY_ROWS = 2000
# Pieces of the sheet (PROGRESS_EVERY_ROWS rows each) handed to its writing thread and not yet
# written. One keeps both threads busy; four added 8 MB of peak at a million rows and no speed
# (bench/README.md, "A quiet machine").
HANDED_OVER_PIECES = 1
COPY_CHUNK_BYTES = 1024 * 1024
MAX_DECIMAL_PLACES = 10
# Above this many cells the sheet might pass zip's 4 GiB member limit, so its entry is written
# with ZIP64 sizes from the start (zipfile cannot add them after the fact).
ZIP64_CELL_THRESHOLD = 10_000_000

# The `_xHHHH_` escapes are done by xlsx_cells.ooxml_text; these are XML's own. A literal carriage
# return would reach every reader as a line feed (XML's end-of-line handling); its character
# reference is kept.
_NEEDS_XML_ESCAPE = re.compile(r"[&<>\r]")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"}

# Cell style indexes into cellXfs of the styles part written by _styles_xml.
_STYLE_HEADING = 1
_STYLE_DESCRIPTION = 2
_STYLE_DATE = 3
_STYLE_DATETIME = 4
_STYLE_DECIMAL_BASE = 5  # + number of decimal places, 0..MAX_DECIMAL_PLACES
_STYLE_TEXT = _STYLE_DECIMAL_BASE + MAX_DECIMAL_PLACES + 1


def _xml_text(text: str, warnings: Counter[str]) -> str:
    text = cell_text(text, warnings)
    return _NEEDS_XML_ESCAPE.sub(lambda m: _ENTITIES[m.group(0)], text) if _NEEDS_XML_ESCAPE.search(text) else text


def _string_cell(ref: str, text: str, style: int, warnings: Counter[str]) -> str:
    return (
        f'<c r="{ref}" s="{style}" t="inlineStr"><is><t xml:space="preserve">{_xml_text(text, warnings)}</t></is></c>'
    )


def _cell_writers(warnings: Counter[str], zone: tzinfo) -> dict[str, Callable[[Any, str], str]]:
    """One function per column type turning a value into its cell's XML (empty for a missing value)."""

    def text(value: str | None, ref: str) -> str:
        return "" if value is None else _string_cell(ref, value, _STYLE_TEXT, warnings)

    def integer(value: int | None, ref: str) -> str:
        return "" if value is None else f'<c r="{ref}"><v>{int(value)}</v></c>'

    def decimal(value: Decimal | None, ref: str) -> str:
        if value is None:
            return ""
        if not value.is_finite():
            return _string_cell(ref, str(value), _STYLE_TEXT, warnings)
        # The stored digits go into the file as they are; Excel reads them as a number.
        digits = f"{value:f}"
        dot = digits.find(".")
        places = 0 if dot < 0 else min(len(digits) - dot - 1, MAX_DECIMAL_PLACES)
        return f'<c r="{ref}" s="{_STYLE_DECIMAL_BASE + places}"><v>{digits}</v></c>'

    def day(value: date | None, ref: str) -> str:
        if value is None:
            return ""
        serial = day_serial_or_text(value, warnings)
        if isinstance(serial, str):
            return _string_cell(ref, serial, _STYLE_TEXT, warnings)
        return f'<c r="{ref}" s="{_STYLE_DATE}"><v>{serial}</v></c>'

    def moment(value: datetime | None, ref: str) -> str:
        if value is None:
            return ""
        serial = moment_serial_or_text(value, zone, warnings)
        if isinstance(serial, str):
            return _string_cell(ref, serial, _STYLE_TEXT, warnings)
        return f'<c r="{ref}" s="{_STYLE_DATETIME}"><v>{serial!r}</v></c>'

    def boolean(value: bool | None, ref: str) -> str:
        if value is None:
            return ""
        return f'<c r="{ref}" t="b"><v>{1 if value else 0}</v></c>'

    return {"text": text, "integer": integer, "decimal": decimal, "date": day, "datetime": moment, "boolean": boolean}


_MIN_WIDTHS = {"date": 12, "datetime": 20, "decimal": 10, "integer": 8, "boolean": 8, "text": 12}


def column_letters(index: int) -> str:
    """Spreadsheet column letters for a zero-based column index (0 → A, 26 → AA)."""
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def heading_texts(columns: Sequence[Column], heading: str, zone_name: str) -> list[str]:
    """The heading row's texts; a time stamp column names the zone its times are shown in."""
    if heading not in (Heading.NAMES, Heading.LABELS):
        raise ValueError(f"unknown heading behaviour {heading!r}")
    texts = [column.name if heading == Heading.NAMES else column.label for column in columns]
    return [f"{text} ({zone_name})" if c.type == "datetime" else text for text, c in zip(texts, columns, strict=True)]


def description_texts(columns: Sequence[Column], zone_name: str) -> list[str]:
    """The descriptions row; a time stamp column's says the zone (the catalog's say UTC)."""
    texts = []
    for column in columns:
        text = column.description
        if column.type == "datetime":
            zone = f"({zone_name})"
            text = text.replace("(UTC)", zone) if "(UTC)" in text else f"{text} {zone}"
        texts.append(text)
    return texts


def _shown_text(column_type: str, value: Any) -> str:
    """About what a cell of the column shows, for its width; dates, time stamps and booleans have
    fixed widths, which the type's floor already covers."""
    if value is None:
        return ""
    if column_type == "text":
        return str(value)
    if column_type == "integer":
        return str(int(value))
    if column_type == "decimal":
        return f"{value:f}" if isinstance(value, Decimal) and value.is_finite() else str(value)
    return ""


def _column_widths(columns: Sequence[Column], headings: Sequence[str], sample: Sequence[Sequence]) -> list[float]:
    """Each column's width from its heading and the sampled rows' values."""
    return [
        column_width(
            chain([heading], (_shown_text(column.type, row[index]) for row in sample)), _MIN_WIDTHS[column.type]
        )
        for index, (column, heading) in enumerate(zip(columns, headings, strict=True))
    ]


def _sheet_head(widths: Sequence[float], frozen_rows: int) -> str:
    pane = (
        f'<pane ySplit="{frozen_rows}" topLeftCell="A{frozen_rows + 1}" activePane="bottomLeft" state="frozen"/>'
        f'<selection pane="bottomLeft" activeCell="A{frozen_rows + 1}" sqref="A{frozen_rows + 1}"/>'
        if frozen_rows
        else ""
    )
    cols = "".join(
        f'<col min="{i}" max="{i}" width="{width}" customWidth="1"/>' for i, width in enumerate(widths, start=1)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        f'<sheetViews><sheetView workbookViewId="0">{pane}</sheetView></sheetViews>'
        '<sheetFormatPr defaultRowHeight="15"/>'
        f"<cols>{cols}</cols><sheetData>"
    )


_SHEET_TAIL = (
    '</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>'
)

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
    '<Override PartName="/docProps/app.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/>'
    '<Relationship Id="rId2" '
    'Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" '
    'Target="docProps/core.xml"/>'
    '<Relationship Id="rId3" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" '
    'Target="docProps/app.xml"/>'
    "</Relationships>"
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
    'Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'
    "</Relationships>"
)
_APP_PROPERTIES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    "<Application>Rhythm Exports</Application></Properties>"
)


def _core_properties(created: datetime) -> str:
    stamp = created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        "<dc:creator>Rhythm Exports</dc:creator>"
        f'<dcterms:created xsi:type="dcterms:W3CDTF">{stamp}</dcterms:created>'
        f'<dcterms:modified xsi:type="dcterms:W3CDTF">{stamp}</dcterms:modified>'
        "</cp:coreProperties>"
    )


def _sheet_name(name: str) -> str:
    """A name Excel accepts for a sheet: at most 31 characters, none of []:*?/\\."""
    cleaned = re.sub(r"[\[\]:*?/\\]", " ", name).strip().strip("'")[:31]
    return cleaned or "Export"


def _workbook_xml(sheet_name: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<bookViews><workbookView activeTab="0"/></bookViews>'
        f'<sheets><sheet name={quoteattr(_sheet_name(sheet_name))} sheetId="1" r:id="rId1"/></sheets>'
        "</workbook>"
    )


_NUMBER_FORMAT_DATE = 164
_NUMBER_FORMAT_DATETIME = 165
_NUMBER_FORMAT_INTEGER = 1  # Excel's built-in "0"


def _decimal_number_format(places: int) -> int:
    return _NUMBER_FORMAT_INTEGER if places == 0 else _NUMBER_FORMAT_DATETIME + places


def _styles_xml() -> str:
    decimal_formats = "".join(
        f'<numFmt numFmtId="{_decimal_number_format(places)}" formatCode="0.{"0" * places}"/>'
        for places in range(1, MAX_DECIMAL_PLACES + 1)
    )
    decimal_styles = "".join(
        f'<xf numFmtId="{_decimal_number_format(places)}" fontId="0" fillId="0" borderId="0" xfId="0"'
        ' applyNumberFormat="1"/>'
        for places in range(MAX_DECIMAL_PLACES + 1)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f'<numFmts count="{2 + MAX_DECIMAL_PLACES}">'
        f'<numFmt numFmtId="{_NUMBER_FORMAT_DATE}" formatCode="yyyy-mm-dd"/>'
        f'<numFmt numFmtId="{_NUMBER_FORMAT_DATETIME}" formatCode="yyyy-mm-dd hh:mm:ss"/>'
        f"{decimal_formats}</numFmts>"
        '<fonts count="3">'
        '<font><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
        '<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
        '<font><i/><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
        "</fonts>"
        '<fills count="2"><fill><patternFill patternType="none"/></fill>'
        '<fill><patternFill patternType="gray125"/></fill></fills>'
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
        f'<cellXfs count="{_STYLE_TEXT + 1}">'
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
        '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" quotePrefix="1"/>'
        '<xf numFmtId="0" fontId="2" fillId="0" borderId="0" xfId="0" applyFont="1" applyAlignment="1"'
        ' quotePrefix="1"><alignment wrapText="1" vertical="top"/></xf>'
        f'<xf numFmtId="{_NUMBER_FORMAT_DATE}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
        f'<xf numFmtId="{_NUMBER_FORMAT_DATETIME}" fontId="0" fillId="0" borderId="0" xfId="0"'
        ' applyNumberFormat="1"/>'
        f"{decimal_styles}"
        '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" quotePrefix="1"/>'
        "</cellXfs>"
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
        "</styleSheet>"
    )


def _label_row(row_number: int, texts: Sequence[str], style: int, warnings: Counter[str]) -> str:
    cells = "".join(
        _string_cell(f"{column_letters(i)}{row_number}", text, style, warnings) for i, text in enumerate(texts)
    )
    return f'<row r="{row_number}">{cells}</row>'


class _WrittenInAThread:
    """Writes what it is handed into `sink` from a thread of its own. The sheet is most of the
    workbook, and zipfile's deflate and CRC release the GIL: its next rows are made while the last
    ones are compressed, as a pipe to gzip would overlap them. A failure of the sink is raised to
    the caller at its next write, or on leaving; leaving ends the thread in every case."""

    def __init__(self, sink) -> None:
        self._sink = sink
        self._pieces: queue.Queue[bytes | None] = queue.Queue(maxsize=HANDED_OVER_PIECES)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._write_handed_over, name="xlsx-sheet", daemon=True)

    def _write_handed_over(self) -> None:
        while (piece := self._pieces.get()) is not None:
            if self._failure is None:
                try:
                    self._sink.write(piece)
                except BaseException as exc:  # raised again in the caller's thread
                    self._failure = exc

    def write(self, piece: bytes) -> None:
        if self._failure is not None:
            raise self._failure
        self._pieces.put(piece)

    def __enter__(self) -> _WrittenInAThread:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._pieces.put(None)
        self._thread.join()
        if exc_info[0] is None and self._failure is not None:
            raise self._failure


def write_xlsx(
    columns: Sequence[Column],
    rows: Iterable[Sequence],
    out,
    *,
    heading: str,
    include_descriptions: bool,
    progress: Progress,
    total: int | None,
    sheet_name: str = "Export",
    time_zone: str = "UTC",
    warnings: Counter[str],
) -> int:
    """Write the rows (typed values, in `columns` order) as a one-sheet workbook to `out`.

    Time stamps are shown in `time_zone` (an IANA name). Raises TooManyRows before writing
    anything when `total` already says the rows cannot fit one sheet, and while writing if more
    rows come than fit. Returns the number of data rows; counts what it had to change in `warnings`.
    """
    label_rows: list[tuple[list[str], int]] = []
    if heading != Heading.NONE:
        label_rows.append((heading_texts(columns, heading, time_zone), _STYLE_HEADING))
        if include_descriptions:
            label_rows.append((description_texts(columns, time_zone), _STYLE_DESCRIPTION))
    capacity = MAX_SHEET_ROWS - len(label_rows)
    if total is not None and total > capacity:
        raise TooManyRows(
            f"The query gives {total:,} rows; an Excel sheet holds at most {capacity:,} with this heading. "
            "Add filters or a row limit, or choose CSV."
        )

    writers_by_type = _cell_writers(warnings, ZoneInfo(time_zone))
    cell_writers = [writers_by_type[column.type] for column in columns]
    letters = [column_letters(i) for i in range(len(columns))]
    force_zip64 = total is None or total * len(columns) > ZIP64_CELL_THRESHOLD
    rows = iter(rows)
    sample = list(islice(rows, WIDTH_SAMPLE_ROWS))
    headings = label_rows[0][0] if label_rows else [""] * len(columns)
    widths = _column_widths(columns, headings, sample)
    written = 0
    with tempfile.TemporaryFile() as spool:
        with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED) as package:
            package.writestr("[Content_Types].xml", _CONTENT_TYPES)
            package.writestr("_rels/.rels", _ROOT_RELS)
            package.writestr("docProps/app.xml", _APP_PROPERTIES)
            package.writestr("docProps/core.xml", _core_properties(datetime.now(UTC)))
            package.writestr("xl/workbook.xml", _workbook_xml(sheet_name))
            package.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
            package.writestr("xl/styles.xml", _styles_xml())
            with (
                package.open("xl/worksheets/sheet1.xml", "w", force_zip64=force_zip64) as sheet_entry,
                _WrittenInAThread(sheet_entry) as sheet,
            ):
                sheet.write(_sheet_head(widths, len(label_rows)).encode("utf-8"))
                row_number = 0
                for texts, style in label_rows:
                    row_number += 1
                    sheet.write(_label_row(row_number, texts, style, warnings).encode("utf-8"))
                pending: list[str] = []
                for row in chain(sample, rows):
                    if written == capacity:
                        raise TooManyRows(
                            f"The query gives more than {capacity:,} rows, more than an Excel sheet holds. "
                            "Add filters or a row limit, or choose CSV."
                        )
                    row_number += 1
                    written += 1
                    number = str(row_number)
                    cells = "".join(
                        [
                            write_cell(value, letter + number)
                            for write_cell, value, letter in zip(cell_writers, row, letters, strict=True)
                        ]
                    )
                    pending.append(f'<row r="{number}">{cells}</row>')
                    if written % PROGRESS_EVERY_ROWS == 0:
                        sheet.write("".join(pending).encode("utf-8"))
                        pending.clear()
                        progress(written, total)
                sheet.write("".join(pending).encode("utf-8"))
                sheet.write(_SHEET_TAIL.encode("utf-8"))
        spool.seek(0)
        shutil.copyfileobj(spool, out, COPY_CHUNK_BYTES)
    progress(written, total)
    return written
