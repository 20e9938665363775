"""Streaming PDF table renderer: xhtml2pdf in bounded chunks, joined and numbered with pypdf.

xhtml2pdf's time and memory grow faster than the rows of one table, so a table is rendered
in chunks of ``chunk_rows`` rows, each an xhtml2pdf pass of its own written to a file in a
temporary directory. The chunks are joined with pypdf and every page is then stamped with
"Page N of M" (app/rendering/pdf_join.py), which is only possible once M is known. Rows are
consumed from an iterator and turned into HTML files as they arrive, so no more than a
chunk's rows are held at a time.

Each chunk starts a new page and is a table of its own whose header row repeats on every
page (``<table repeat="1">``); the title block is in the first chunk only.

xhtml2pdf is pure Python, so a long body is rendered on several CPUs: this process reads the
rows and writes each chunk's HTML, rendering processes (app/rendering/pdf_processes.py)
render the chunks to PDF files, with a bounded number of chunks in flight, and one of them
joins the files at the end. This process then never imports xhtml2pdf, reportlab or pypdf.

Safety: every value is HTML-escaped, and the renderer reads nothing but its own stylesheet
and font files. The link_callback answers with a path for those (an allow-list of symbolic
``asset:`` names) and with an inert empty ``data:`` URI for anything else, and the
resource policy handed to xhtml2pdf refuses the network and every directory but the asset
and font directories, so nothing a value says is ever fetched.

Nothing here needs a Flask application context or the database.
"""

from __future__ import annotations

import html
import importlib.util
import itertools
import logging
import math
import os
import re
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

ASSET_DIR = Path(__file__).resolve().parent / "pdf_assets"
STYLESHEET_URI = "asset:table.css"
#: What the link_callback answers for anything that is not one of the product's own files:
#: an empty inline resource, which fetches nothing and decodes to nothing.
REFUSED_URI = "data:,"

COLUMN_TYPES = frozenset({"text", "integer", "decimal", "date", "datetime", "boolean"})
NUMERIC_TYPES = frozenset({"integer", "decimal"})
#: Portrait width and height in points (ISO 216 A4: 210 × 297 mm; US Letter: 8.5 × 11 in).
PAGE_SIZES = {"a4": (210 * 72 / 25.4, 297 * 72 / 25.4), "letter": (612.0, 792.0)}
ORIENTATIONS = frozenset({"portrait", "landscape"})

DEFAULT_CHUNK_ROWS = 400
MAX_DEFAULT_WORKERS = 2
#: A body of fewer chunks renders in this process: starting the rendering processes (each
#: imports xhtml2pdf and reportlab, about a second) would cost more than it saves.
PARALLEL_MIN_CHUNKS = 3

# Page margins in points. The bottom one leaves room for the footer stamped after the join
# (app/rendering/pdf_join.py), which is right-aligned with the side margin.
MARGIN_TOP = 34.0
MARGIN_SIDE = 34.0
MARGIN_BOTTOM = 46.0


class PdfTooLarge(Exception):
    """More rows arrived than a PDF is allowed to hold."""

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        super().__init__(
            f"This report has more than {max_rows:,} rows, which is more than a PDF export "
            f"allows. Export it as XLSX instead, which has no such limit."
        )


class PdfRenderError(RuntimeError):
    """xhtml2pdf reported an error while rendering a chunk."""


@dataclass(frozen=True)
class PdfColumn:
    name: str
    label: str
    type: str = "text"  # 'text', 'integer', 'decimal', 'date', 'datetime', 'boolean'
    width: float | None = None  # relative width weight; None = an equal share
    align: str | None = None  # 'left', 'right', 'center'; default right for integer/decimal

    def __post_init__(self) -> None:
        if self.type not in COLUMN_TYPES:
            raise ValueError(f"unknown column type {self.type!r} for column {self.name!r}")
        if self.align not in (None, "left", "right", "center"):
            raise ValueError(f"unknown alignment {self.align!r} for column {self.name!r}")
        if self.width is not None and not (self.width > 0 and math.isfinite(self.width)):
            raise ValueError(f"column {self.name!r} needs a positive width, not {self.width!r}")

    @property
    def numeric(self) -> bool:
        return self.type in NUMERIC_TYPES

    @property
    def effective_align(self) -> str:
        if self.align:
            return self.align
        return "right" if self.numeric else "left"


@dataclass(frozen=True)
class PdfLayout:
    title: str
    subtitle: str = ""
    page_size: str = "A4"  # or "Letter"
    orientation: str = "portrait"  # or "landscape"
    filters_text: str | None = None  # printed under the title when given
    generated_at: datetime | None = None  # printed when given
    date_format: str = "%d/%m/%Y"  # the workspace's format for date and datetime cells
    time_format: str = "%H:%M"  # appended to date_format for datetime cells
    thousands_separator: str = ","
    decimal_separator: str = "."

    def __post_init__(self) -> None:
        if self.page_size.lower() not in PAGE_SIZES:
            raise ValueError(f"unknown page size {self.page_size!r}; use A4 or Letter")
        if self.orientation.lower() not in ORIENTATIONS:
            raise ValueError(f"unknown orientation {self.orientation!r}")

    @property
    def datetime_format(self) -> str:
        return f"{self.date_format} {self.time_format}"


@dataclass(frozen=True)
class Group:
    """One group of a grouped ("coded") report.

    ``rows`` may be any iterable and is consumed once. ``row_count`` is printed in the group
    heading; when it is None and ``rows`` has a length, that length is used, and otherwise
    the heading has no count (the subtotal row always has it). ``subtotals`` maps column
    names to the values to print on the subtotal row; when None, the numeric columns are
    summed while the rows stream by.
    """

    code: str
    description: str
    rows: Iterable[Sequence[Any]]
    subtotals: Mapping[str, Any] | None = None
    row_count: int | None = None


# --------------------------------------------------------------------------- formatting


def format_number(
    value: Any, *, thousands_separator: str = ",", decimal_separator: str = "."
) -> str:
    """A number with thousands separators, keeping the decimals the value has.

    ``Decimal("1234.50")`` is "1,234.50", ``1234.5`` is "1,234.5", ``1234`` is "1,234".
    A string that reads as a number is formatted like one; any other string is returned
    as it is.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        text = f"{value:,}"
    elif isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        text = format(Decimal(repr(value)), ",f")
    elif isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        text = format(value, ",f")
    else:
        raw = str(value).strip()
        try:
            # Plain notation only: "1,5" could be either a decimal comma or a thousands
            # separator, so a string with a comma is printed as it is.
            number = Decimal(raw) if raw else None
        except InvalidOperation:
            return str(value)
        if number is None or not number.is_finite():
            return str(value)
        text = format(number, ",f")
    if thousands_separator != "," or decimal_separator != ".":
        text = text.translate({ord(","): thousands_separator, ord("."): decimal_separator})
    return text


def _parsed_if_iso(value: Any) -> Any:
    """A string that reads as an ISO date or datetime, parsed; anything else as it is."""
    if isinstance(value, str):
        parsed = _parse_iso(value)
        return value if parsed is None else parsed
    return value


def format_date(value: Any, fmt: str) -> str:
    """A date (or the date of a datetime) in ``fmt``; ISO strings are parsed first."""
    if value is None:
        return ""
    value = _parsed_if_iso(value)
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        return value.strftime(fmt)
    return str(value)


def format_datetime(value: Any, fmt: str, date_fmt: str | None = None) -> str:
    """A datetime in ``fmt``; a plain date (which has no time to show) in ``date_fmt``."""
    if value is None:
        return ""
    value = _parsed_if_iso(value)
    if isinstance(value, datetime):
        return value.strftime(fmt)
    if isinstance(value, date):
        return value.strftime(date_fmt or fmt)
    return str(value)


_TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
_FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


def format_boolean(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | int):
        return "Yes" if value else "No"
    word = str(value).strip().lower()
    if word in _TRUE_WORDS:
        return "Yes"
    if word in _FALSE_WORDS:
        return "No"
    return str(value)


def format_value(column: PdfColumn, value: Any, layout: PdfLayout) -> str:
    """The text a cell of ``column`` shows for ``value`` (not yet HTML-escaped)."""
    if value is None:
        return ""
    kind = column.type
    if kind in NUMERIC_TYPES:
        return format_number(
            value,
            thousands_separator=layout.thousands_separator,
            decimal_separator=layout.decimal_separator,
        )
    if kind == "date":
        return format_date(value, layout.date_format)
    if kind == "datetime":
        return format_datetime(value, layout.datetime_format, layout.date_format)
    if kind == "boolean":
        return format_boolean(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _parse_iso(text: str) -> date | datetime | None:
    text = text.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        return datetime.fromisoformat(text)
    except ValueError:
        return None


# Control characters other than tab, line feed and carriage return have no place in a PDF
# text string; the three are turned into a space and line breaks.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
_NEWLINE = re.compile(r"\r\n|\r|\n")


def text_to_html(text: str) -> str:
    """``text`` as HTML: escaped, line breaks kept, control characters dropped."""
    if not text:
        return ""
    escaped = html.escape(text, quote=True)
    if not escaped.isprintable():
        escaped = _CONTROL.sub("", escaped.replace("\t", " "))
        escaped = _NEWLINE.sub("<br/>", escaped)
    return escaped


# --------------------------------------------------------------------------- assets


@dataclass(frozen=True)
class _Font:
    family: str
    uri: str
    path: Path


# Symbolic asset name -> candidate (package, file inside it) pairs, first found wins. The
# "debian" package stands for a file Debian's fonts-dejavu-core installs, used only when
# the pip package is missing.
_FONT_CANDIDATES: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    (
        "rptsans",
        "asset:font/sans",
        (
            ("manimgx_fonts", "NotoSans[wght].ttf"),
            ("debian", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
        ),
    ),
    ("rptcjk", "asset:font/cjk", (("paperang_p2_fonts_cjk", "fonts/wqy-microhei.ttc"),)),
    ("rptarabic", "asset:font/arabic", (("manimgx_fonts", "NotoSansArabic[wght].ttf"),)),
    ("rpthebrew", "asset:font/hebrew", (("manimgx_fonts", "NotoSansHebrew[wght].ttf"),)),
    ("rptsymbols", "asset:font/symbols", (("manimgx_fonts", "NotoSansSymbols[wght].ttf"),)),
    ("rptemoji", "asset:font/emoji", (("manimgx_fonts", "NotoEmoji[wght].ttf"),)),
)


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


@lru_cache(maxsize=1)
def available_fonts() -> tuple[_Font, ...]:
    """The fonts found installed, in font-family fallback order."""
    fonts: list[_Font] = []
    for family, uri, candidates in _FONT_CANDIDATES:
        for package, relative in candidates:
            if package == "debian":
                path = Path(relative)
            else:
                base = _package_dir(package)
                if base is None:
                    continue
                path = base / relative
            if path.is_file():
                fonts.append(_Font(family, uri, path.resolve()))
                break
    if not fonts or fonts[0].family != "rptsans":
        raise RuntimeError(
            "No font for PDF rendering is installed: install the manimgx-fonts package "
            "(and paperang-p2-fonts-cjk for Chinese, Japanese and Korean)."
        )
    return tuple(fonts)


@lru_cache(maxsize=1)
def _asset_map() -> dict[str, str]:
    """The allow-list: symbolic URI -> absolute path of one of the product's own files."""
    assets = {STYLESHEET_URI: str(ASSET_DIR / "table.css")}
    for font in available_fonts():
        assets[font.uri] = str(font.path)
    return assets


def link_callback(uri: Any, rel: Any = None) -> str:
    """Resolve the renderer's own asset names; answer an inert URI for anything else.

    xhtml2pdf treats a falsy answer as "fetch the URI as written", so a refusal is an
    empty ``data:`` URI rather than None.
    """
    path = _asset_map().get(uri) if isinstance(uri, str) else None
    if path is None:
        log.warning("PDF renderer refused to load %r", str(uri)[:200])
        return REFUSED_URI
    return path


@lru_cache(maxsize=1)
def _resource_policy():
    from xhtml2pdf.config.resources import ResourceAccessPolicy

    roots = {ASSET_DIR.resolve(), *(font.path.parent for font in available_fonts())}
    return ResourceAccessPolicy(
        allow_remote=False,
        allowed_hosts=frozenset(),
        base_dir=None,
        extra_roots=tuple(sorted(roots)),
        max_resources=32,
    )


# --------------------------------------------------------------------------- HTML


def _page_size(layout: PdfLayout) -> tuple[float, float]:
    width, height = PAGE_SIZES[layout.page_size.lower()]
    return (height, width) if layout.orientation.lower() == "landscape" else (width, height)


def _column_widths(columns: Sequence[PdfColumn]) -> list[float]:
    """Percent widths from the relative weights; a column without one gets an equal share."""
    given = [c.width for c in columns if c.width is not None]
    default = (sum(given) / len(given)) if given else 1.0
    weights = [c.width if c.width is not None else default for c in columns]
    total = sum(weights)
    return [100.0 * w / total for w in weights]


_ALIGN_CLASS = {"left": "", "right": ' class="r"', "center": ' class="c"'}


@dataclass
class _Document:
    """The parts of the HTML shared by every chunk of one document."""

    head: str
    primary_head: str
    title_block: str
    table_open: str
    columns: Sequence[PdfColumn]
    layout: PdfLayout
    cell_open: list[str] = field(default_factory=list)

    def page(self, body: str, *, first: bool) -> bytes:
        if first:
            body = self.title_block + body
        head = self.primary_head if PRIMARY_FONT_TEXT.fullmatch(body) else self.head
        # Lone surrogates cannot be encoded; they become "?" rather than an error.
        return f"{head}<body>{body}</body></html>".encode("utf-8", "replace")


#: Text the primary font has a glyph for every character of (a test checks the installed
#: font): Latin (Vietnamese included), Greek, Cyrillic and common punctuation. A chunk of
#: nothing else is rendered without the fallback fonts, which a rendering process would
#: otherwise load for nothing: the CJK font alone costs 23 MB. Any other character brings
#: in every fallback font.
PRIMARY_FONT_TEXT = re.compile(
    r"[\x00-\u024f\u0300-\u036f\u0370-\u03e1\u03f0-\u03ff\u0400-\u052f\u1e00-\u1fff"
    r"\u2010-\u2027\u2030-\u205e\u20a0-\u20bf]*"
)


def _head_html(layout: PdfLayout, *, primary_only: bool = False) -> str:
    width, height = _page_size(layout)
    fonts = available_fonts()[:1] if primary_only else available_fonts()
    faces = "".join(
        f'@font-face {{ font-family: {font.family}; src: url("{font.uri}"); }}\n' for font in fonts
    )
    families = ", ".join(font.family for font in fonts)
    style = (
        f"@page {{ size: {width:.2f}pt {height:.2f}pt; margin: {MARGIN_TOP}pt {MARGIN_SIDE}pt "
        f"{MARGIN_BOTTOM}pt {MARGIN_SIDE}pt; }}\n{faces}html, body {{ font-family: {families}; }}\n"
    )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        f"<title>{text_to_html(layout.title)}</title>"
        f'<link rel="stylesheet" href="{STYLESHEET_URI}"><style>{style}</style></head>'
    )


def _title_block(layout: PdfLayout) -> str:
    parts = ['<div class="head">', f"<h1>{text_to_html(layout.title)}</h1>"]
    if layout.subtitle:
        parts.append(f'<p class="subtitle">{text_to_html(layout.subtitle)}</p>')
    if layout.filters_text:
        parts.append(f'<p class="meta">{text_to_html(layout.filters_text)}</p>')
    if layout.generated_at is not None:
        stamp = format_datetime(layout.generated_at, layout.datetime_format)
        parts.append(f'<p class="meta">Generated {text_to_html(stamp)}</p>')
    parts.append("</div>")
    return "".join(parts)


def _document(columns: Sequence[PdfColumn], layout: PdfLayout) -> _Document:
    if not columns:
        raise ValueError("a PDF table needs at least one column")
    widths = _column_widths(columns)
    header = "".join(
        f'<th width="{w:.3f}%"{_ALIGN_CLASS[c.effective_align]}>{text_to_html(c.label)}</th>'
        for c, w in zip(columns, widths, strict=True)
    )
    table_open = f'<table class="data" repeat="1"><thead><tr>{header}</tr></thead><tbody>'
    return _Document(
        head=_head_html(layout),
        primary_head=_head_html(layout, primary_only=True),
        title_block=_title_block(layout),
        table_open=table_open,
        columns=columns,
        layout=layout,
        cell_open=[f"<td{_ALIGN_CLASS[c.effective_align]}>" for c in columns],
    )


def _row_html(doc: _Document, row: Sequence[Any]) -> str:
    if len(row) != len(doc.columns):
        raise ValueError(f"a row has {len(row)} values for {len(doc.columns)} columns")
    layout = doc.layout
    cells = [
        f"{opener}{text_to_html(format_value(column, value, layout))}</td>"
        for opener, column, value in zip(doc.cell_open, doc.columns, row, strict=True)
    ]
    return "<tr>" + "".join(cells) + "</tr>"


# --------------------------------------------------------------------------- body blocks


@dataclass(frozen=True)
class BodyBlock:
    """One or more table rows of a document body, as HTML.

    ``data_rows`` counts the data rows in it (headings and totals count 0);
    ``keep_with_next`` keeps a group heading from ending a chunk; ``continuation`` is the
    row printed first when a chunk starts inside this block's group.
    """

    html: str
    data_rows: int = 0
    keep_with_next: bool = False
    continuation: str | None = None


def table_blocks(doc: _Document, rows: Iterable[Sequence[Any]]) -> Iterator[BodyBlock]:
    for row in rows:
        yield BodyBlock(_row_html(doc, row), 1)


def _to_number(value: Any) -> Decimal | int | None:
    """``value`` as an exact number to add up, or None when it is not one."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _add(total: Decimal | int | None, value: Decimal | int | None) -> Decimal | int | None:
    if value is None:
        return total
    if total is None:
        return value
    return total + value


def _totals_row(doc: _Document, label: str, totals: Mapping[str, Any], css_class: str) -> str:
    """A subtotal or total row: the label over the leading non-numeric columns."""
    columns = doc.columns
    lead = 0
    while lead < len(columns) and not columns[lead].numeric:
        lead += 1
    label_html = f"<b>{text_to_html(label)}</b>"
    cells: list[str] = []
    prefix = ""
    if lead == 0:
        # No room beside the numbers: the label takes a row of its own.
        prefix = f'<tr class="{css_class}"><td colspan="{len(columns)}">{label_html}</td></tr>'
        css_class = ""
    else:
        span = f' colspan="{lead}"' if lead > 1 else ""
        cells.append(f"<td{span}>{label_html}</td>")
    for index in range(lead, len(columns)):
        column = columns[index]
        value = totals.get(column.name) if column.numeric else None
        text = text_to_html(format_value(column, value, doc.layout)) if value is not None else ""
        cells.append(f"{doc.cell_open[index]}{text}</td>")
    row_class = f' class="{css_class}"' if css_class else ""
    return f"{prefix}<tr{row_class}>{''.join(cells)}</tr>"


def _heading_html(doc: _Document, group: Group, count: int | None, *, continued: bool) -> str:
    text = f"{group.code} — {group.description}" if group.description else str(group.code)
    if continued:
        text += " (continued)"
    elif count is not None:
        text += f" · {count:,} row" + ("" if count == 1 else "s")
    return (
        f'<tr class="g"><td colspan="{len(doc.columns)}"><b>{text_to_html(text)}</b></td></tr>'
    )


def grouped_blocks(
    doc: _Document, groups: Iterable[Group], *, grand_total: bool = True
) -> Iterator[BodyBlock]:
    """Heading, rows and subtotal of each group, then the grand total."""
    numeric = [(i, c) for i, c in enumerate(doc.columns) if c.numeric]
    grand: dict[str, Any] = {c.name: None for _, c in numeric}
    grand_rows = 0
    any_group = False
    for group in groups:
        any_group = True
        count = group.row_count
        if count is None and isinstance(group.rows, Sequence):
            count = len(group.rows)
        continuation = _heading_html(doc, group, None, continued=True)
        yield BodyBlock(_heading_html(doc, group, count, continued=False), keep_with_next=True)
        sums: dict[str, Any] = {c.name: None for _, c in numeric}
        seen = 0
        for row in group.rows:
            seen += 1
            row_html = _row_html(doc, row)  # checks the row's length first
            for index, column in numeric:
                sums[column.name] = _add(sums[column.name], _to_number(row[index]))
            yield BodyBlock(row_html, 1, continuation=continuation)
        shown = dict(group.subtotals) if group.subtotals is not None else sums
        for _, column in numeric:
            grand[column.name] = _add(grand[column.name], _to_number(shown.get(column.name)))
        grand_rows += seen
        label = f"Subtotal {group.code} · {seen:,} row" + ("" if seen == 1 else "s")
        yield BodyBlock(_totals_row(doc, label, shown, "s"), continuation=continuation)
    if grand_total and any_group:
        label = f"Grand total · {grand_rows:,} row" + ("" if grand_rows == 1 else "s")
        yield BodyBlock(_totals_row(doc, label, grand, "t"))


def _chunks(
    blocks: Iterable[BodyBlock], chunk_rows: int, max_rows: int | None
) -> Iterator[tuple[list[str], int]]:
    """Group blocks into chunks of about ``chunk_rows`` table rows; yield (html parts, data rows).

    Headings and totals count towards the chunk's size (they cost as much to lay out), a
    heading never ends a chunk, and a chunk that starts inside a group repeats its heading.
    """
    buffer: list[BodyBlock] = []
    size = 0
    total = 0
    for block in blocks:
        if block.data_rows:
            total += block.data_rows
            if max_rows is not None and total > max_rows:
                raise PdfTooLarge(max_rows)
        if size >= chunk_rows and not block.keep_with_next:
            carry: list[BodyBlock] = []
            while buffer and buffer[-1].keep_with_next:
                carry.insert(0, buffer.pop())
            if buffer:
                yield _chunk_parts(buffer)
                buffer, size = carry, len(carry)
        buffer.append(block)
        size += max(block.data_rows, 1)
    if buffer:
        yield _chunk_parts(buffer)


def _chunk_parts(blocks: list[BodyBlock]) -> tuple[list[str], int]:
    parts = []
    first = blocks[0]
    if first.continuation is not None:
        parts.append(first.continuation)
    parts.extend(block.html for block in blocks)
    return parts, sum(block.data_rows for block in blocks)


# --------------------------------------------------------------------------- rendering


def default_workers() -> int:
    """How many processes render a long body: one per CPU this process may use, at most two.

    At most two because every rendering process holds its own interpreter, xhtml2pdf, fonts
    and chunk (about 120 MB at the default chunk size), so each one more costs as much
    memory again.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # no CPU affinity outside Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_WORKERS, cpus))


def _render_html(source: bytes, dest: BinaryIO) -> None:
    from xhtml2pdf import pisa

    result = pisa.CreatePDF(
        source,
        dest=dest,
        encoding="utf-8",
        link_callback=link_callback,
        resource_policy=_resource_policy(),
    )
    if result.err:
        raise PdfRenderError(f"xhtml2pdf reported {result.err} error(s) rendering a PDF chunk")


def render_html_file(source: Path, destination: Path) -> None:
    """Render the HTML document at ``source`` into a PDF file at ``destination``.

    What a rendering process (app/rendering/pdf_processes.py) runs for each chunk, so it
    renders through the same link_callback and resource policy as this process.
    """
    with destination.open("wb") as handle:
        _render_html(source.read_bytes(), handle)


@dataclass(frozen=True)
class _Chunk:
    html: Path
    data_rows: int

    @property
    def pdf(self) -> Path:
        return self.html.with_suffix(".pdf")


def _write_chunks(doc: _Document, chunks: Iterable[tuple[list[str], int]], folder: Path) -> Iterator[_Chunk]:
    """Write each chunk as a whole HTML document into ``folder``, the first with the title."""
    for index, (parts, data_rows) in enumerate(chunks):
        body = doc.table_open + "".join(parts) + "</tbody></table>"
        path = folder / f"chunk-{index:05d}.html"
        path.write_bytes(doc.page(body, first=index == 0))
        yield _Chunk(path, data_rows)


def _empty_chunk(doc: _Document, folder: Path) -> _Chunk:
    empty = f'<tr><td class="empty" colspan="{len(doc.columns)}">No rows to show.</td></tr>'
    return next(_write_chunks(doc, [([empty], 0)], folder))


_Rendered = Callable[[_Chunk], None]


def _render_here(chunks: Iterable[_Chunk], rendered: _Rendered, title: str, destination: Path) -> None:
    """Render the chunks one after another in this process, then join them."""
    from app.rendering.pdf_join import join_files

    paths = []
    for chunk in chunks:
        render_html_file(chunk.html, chunk.pdf)
        chunk.html.unlink()
        paths.append(chunk.pdf)
        rendered(chunk)
    join_files(paths, title, destination)


def _render_in_processes(
    chunks: Iterable[_Chunk], workers: int, rendered: _Rendered, title: str, destination: Path
) -> None:
    """Render the chunks in ``workers`` rendering processes, then join them in one of those.

    This process reads the rows and writes each chunk's HTML; at most ``workers + 1`` chunks
    are in flight, one of them queued so that no process idles while the next chunk's rows
    are read, and no more rows than that are held.
    """
    from app.rendering.pdf_processes import RenderingProcesses

    paths: list[Path] = []
    with RenderingProcesses(workers) as processes:
        in_flight: deque[tuple[Any, _Chunk]] = deque()

        def wait_oldest() -> None:
            ticket, chunk = in_flight.popleft()
            paths.append(processes.wait(ticket))
            chunk.html.unlink()
            rendered(chunk)

        for chunk in chunks:
            in_flight.append((processes.render(chunk.html, chunk.pdf), chunk))
            if len(in_flight) > workers:
                wait_oldest()
        while in_flight:
            wait_oldest()
        processes.join(paths, title, destination)


def _render_blocks(
    doc: _Document,
    blocks: Iterable[BodyBlock],
    out: BinaryIO,
    *,
    chunk_rows: int,
    progress: Callable[[int], None] | None,
    max_rows: int | None,
    workers: int | None,
) -> int:
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError("workers must be at least 1")
    done = 0

    def rendered(chunk: _Chunk) -> None:
        nonlocal done
        done += chunk.data_rows
        if progress is not None:
            progress(done)

    with _rendering_folder(out) as (tmp, joined):
        chunks = _write_chunks(doc, _chunks(blocks, chunk_rows, max_rows), tmp)
        # Read a few chunks ahead: a short body renders here, sparing the processes' start.
        ahead = list(itertools.islice(chunks, PARALLEL_MIN_CHUNKS if workers > 1 else 1))
        if workers > 1 and len(ahead) == PARALLEL_MIN_CHUNKS:
            _render_in_processes(itertools.chain(ahead, chunks), workers, rendered, doc.layout.title, joined)
        else:
            _render_here(itertools.chain(ahead or [_empty_chunk(doc, tmp)], chunks), rendered, doc.layout.title, joined)
    return done


@contextmanager
def _rendering_folder(out: BinaryIO) -> Iterator[tuple[Path, Path]]:
    """A temporary folder for one document's files, and where to join them; the joined file goes to ``out``."""
    with tempfile.TemporaryDirectory(prefix="pdf-render-") as tmp_name:
        tmp = Path(tmp_name)
        joined = tmp / "joined.pdf"
        yield tmp, joined
        with joined.open("rb") as handle:
            shutil.copyfileobj(handle, out, 1024 * 1024)


# --------------------------------------------------------------------------- public API


def render_table_pdf(
    columns: list[PdfColumn],
    rows: Iterable[Sequence[Any]],
    layout: PdfLayout,
    out: BinaryIO,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
    max_rows: int | None = None,
    workers: int | None = None,
) -> int:
    """Render ``rows`` as a table PDF into ``out``; return the number of rows rendered.

    ``rows`` is consumed once, one chunk at a time. ``progress`` is called with the rows
    rendered so far after each chunk. More than ``max_rows`` rows raise PdfTooLarge as soon
    as the first row past the limit arrives. ``workers`` is how many processes render a body
    of more than two chunks (default: ``default_workers()``); 1 renders everything here.
    """
    doc = _document(columns, layout)
    return _render_blocks(
        doc,
        table_blocks(doc, rows),
        out,
        chunk_rows=chunk_rows,
        progress=progress,
        max_rows=max_rows,
        workers=workers,
    )


def render_grouped_pdf(
    columns: list[PdfColumn],
    groups: Iterable[Group],
    layout: PdfLayout,
    out: BinaryIO,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
    max_rows: int | None = None,
    grand_total: bool = True,
    workers: int | None = None,
) -> int:
    """Render a grouped body: per group a heading, its rows and a subtotal; then a grand total.

    Numeric (integer and decimal) columns are subtotalled; the grand total is the sum of
    the subtotals printed. Returns the number of data rows rendered. ``chunk_rows``,
    ``progress``, ``max_rows`` and ``workers`` are as for render_table_pdf.
    """
    doc = _document(columns, layout)
    return _render_blocks(
        doc,
        grouped_blocks(doc, groups, grand_total=grand_total),
        out,
        chunk_rows=chunk_rows,
        progress=progress,
        max_rows=max_rows,
        workers=workers,
    )


def render_summary_pdf(
    layout: PdfLayout,
    figures: list[tuple[str, Any]],
    chart: list[tuple[str, float | int | Decimal]] | None,
    out: BinaryIO,
    *,
    chart_title: str | None = None,
) -> None:
    """A one-page summary: headline figures, then an optional horizontal bar chart."""
    parts = [_title_block(layout)]
    if figures:
        parts.append('<table class="figures">')
        per_row = 3
        for start in range(0, len(figures), per_row):
            row = figures[start : start + per_row]
            labels = "".join(
                f'<td class="label" width="{100 / per_row:.2f}%">{text_to_html(str(label))}</td>'
                for label, _ in row
            )
            values = "".join(
                f'<td class="value">{text_to_html(_figure_text(value, layout))}</td>'
                for _, value in row
            )
            pad = per_row - len(row)
            labels += '<td class="label"></td>' * pad
            values += '<td class="value"></td>' * pad
            parts.append(f"<tr>{labels}</tr><tr>{values}</tr>")
        parts.append("</table>")
    if chart:
        if chart_title:
            parts.append(f"<h2>{text_to_html(chart_title)}</h2>")
        parts.append(_chart_html(chart, layout))
    head = _head_html(layout)
    source = (head + "<body>" + "".join(parts) + "</body></html>").encode("utf-8", "replace")
    with _rendering_folder(out) as (tmp, joined):
        page = tmp / "summary.html"
        page.write_bytes(source)
        _render_here([_Chunk(page, 0)], lambda chunk: None, layout.title, joined)


def _figure_text(value: Any, layout: PdfLayout) -> str:
    if isinstance(value, bool):
        return format_boolean(value)
    if isinstance(value, int | float | Decimal):
        return format_number(
            value,
            thousands_separator=layout.thousands_separator,
            decimal_separator=layout.decimal_separator,
        )
    if isinstance(value, datetime):
        return format_datetime(value, layout.datetime_format)
    if isinstance(value, date):
        return format_date(value, layout.date_format)
    return "" if value is None else str(value)


def _chart_html(chart: Sequence[tuple[str, Any]], layout: PdfLayout) -> str:
    numbers = []
    for _, value in chart:
        number = _to_number(value)
        numbers.append(float(number) if number is not None else 0.0)
    scale = max((abs(n) for n in numbers), default=0.0) or 1.0
    rows = []
    for (label, value), number in zip(chart, numbers, strict=True):
        percent = round(100.0 * abs(number) / scale, 1)
        fill_class = "fill" if number >= 0 else "fill neg"
        if percent >= 0.5:
            rest = f'<td width="{100 - percent:.1f}%"></td>' if percent < 99.5 else ""
            bar = (
                f'<table class="bar"><tr><td class="{fill_class}" width="{percent:.1f}%">'
                f"&nbsp;</td>{rest}</tr></table>"
            )
        else:
            bar = ""
        rows.append(
            f'<tr><td width="28%">{text_to_html(str(label))}</td><td width="56%">{bar}</td>'
            f'<td class="value" width="16%">{text_to_html(_figure_text(value, layout))}</td></tr>'
        )
    return '<table class="chart">' + "".join(rows) + "</table>"
