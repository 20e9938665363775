"""Report PDFs laid out with reportlab's platypus: title block, a table whose header row
repeats on every page, "Page N of M" on each page.

The body is a stream of table rows (data rows; for a coded report, group headings, subtotals
and a grand total) cut into blocks of ROWS_PER_BLOCK rows. Each block is one flowable that
splits at page ends by itself, so the time per row stays flat however long the table is (one
platypus table of every row would copy the remaining rows at every page). Blocks are made
from the rows as the layout reaches them, so no more than a block of rows is held at a time,
and ``progress(rows_placed, total)`` is called as each piece of a block is drawn on its page.

"Page N of M" is added to every page's stream when the document is saved and M is known: no
second pass over the document.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reportlab import rl_config
from reportlab.lib.colors import HexColor
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import BaseDocTemplate, Flowable, Frame, FrameBreak, NextPageTemplate, PageTemplate

from app.rendering import ByteSink
from app.rendering.pdf.formatting import add_exact, format_datetime, format_value, rows_label
from app.rendering.pdf.lines import Line, LineWriter, TextStyle, draw_line, isolated
from app.rendering.pdf.model import MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP, Group, PdfColumn, PdfLayout, PdfTooLarge

Progress = Callable[[int, int | None], None]

#: Column types whose values are read whole: a number or a date is never broken over lines (a
#: date and time may wrap between the two).
WHOLE_TYPES = frozenset({"integer", "decimal", "date", "boolean"})

ROWS_PER_BLOCK = 200
CELL_SIZE = 8.0
CELL_LEADING = 10.0
HEADING_SIZE = 9.0
#: The smallest size a number, a date or a header word is set in to fit its column whole.
SMALLEST_FITTED_SIZE = 5.0
PAD_X = 2.5
PAD_Y = 1.5
FOOTER_SIZE = 7.5
TEXT = HexColor("#111111")
GREY = HexColor("#555555")
BAND = HexColor("#e6e6e6")
HEADING_BAND = HexColor("#f0f0f0")
SUBTOTAL_RULE = HexColor("#888888")
TOTAL_RULE = HexColor("#222222")


class Styles:
    """The text styles of one document (each remembers the fonts of the characters it met)."""

    def __init__(self) -> None:
        self.cell = TextStyle(bold=False, size=CELL_SIZE, leading=CELL_LEADING)
        self.cell_bold = TextStyle(bold=True, size=CELL_SIZE, leading=CELL_LEADING)
        self.heading = TextStyle(bold=True, size=HEADING_SIZE, leading=HEADING_SIZE * 1.25)
        self.chart_title = TextStyle(bold=True, size=11, leading=14)
        self.figure_label = TextStyle(bold=False, size=9, leading=11)
        self.figure_value = TextStyle(bold=False, size=16, leading=19)
        self.title = TextStyle(bold=True, size=15, leading=18)
        self.subtitle = TextStyle(bold=False, size=10, leading=12.5)
        self.meta = TextStyle(bold=False, size=8, leading=10)
        self.footer = TextStyle(bold=False, size=FOOTER_SIZE, leading=FOOTER_SIZE * 1.25)
        self._smaller: dict[tuple[bool, float], TextStyle] = {}

    def fitted(self, style: TextStyle, parts: Sequence[str], width: float) -> TextStyle:
        """``style``, or a smaller size of it in which the widest of ``parts`` fits ``width`` (not
        below SMALLEST_FITTED_SIZE: past that, the text wraps as any other)."""
        widest = style.width(parts[0]) if len(parts) == 1 else max(map(style.width, parts), default=0.0)
        if widest <= width:
            return style
        size = max(SMALLEST_FITTED_SIZE, math.floor(style.size * width / widest * 4) / 4)
        key = (style.bold, size)
        smaller = self._smaller.get(key)
        if smaller is None:
            smaller = self._smaller[key] = TextStyle(
                bold=style.bold, size=size, leading=style.leading * size / style.size
            )
        return smaller


# --------------------------------------------------------------------------- rows


@dataclass(slots=True)
class _Cell:
    x: float
    width: float
    align: str
    lines: list[Line]
    style: TextStyle


@dataclass(slots=True)
class _Row:
    kind: str  # "data", "header", "heading", "subtotal", "total", "note"
    cells: list[_Cell]
    height: float
    data_rows: int = 0
    continuation: _Row | None = None  # the group heading that opens a page breaking inside the group
    keep_with_next: bool = False  # never the last row on a page (a heading, a total's label line)
    # What laying the row out counted, for a row counted each time it is drawn rather than once
    # when it is made: a group's "(continued)" heading prints on as many pages as the group breaks over.
    counted_when_drawn: Counter | None = None


class _Table:
    """The columns' geometry and the rows of one document, laid out as they are made."""

    def __init__(
        self, columns: Sequence[PdfColumn], layout: PdfLayout, width: float, styles: Styles, warnings: Counter
    ) -> None:
        if not columns:
            raise ValueError("a PDF table needs at least one column")
        self.columns = list(columns)
        self.layout = layout
        self.width = width
        self.styles = styles
        self.warnings = warnings
        given = [c.width for c in columns if c.width is not None]
        default = (sum(given) / len(given)) if given else 1.0
        weights = [c.width if c.width is not None else default for c in columns]
        self.widths = [width * w / sum(weights) for w in weights]
        self.xs = [sum(self.widths[:i]) for i in range(len(columns))]
        self.aligns = [c.effective_align for c in columns]
        self.numeric = [(i, c) for i, c in enumerate(columns) if c.numeric]
        # Subtotal labels span the columns before the first number.
        self.lead = next((i for i, c in enumerate(columns) if c.numeric), len(columns))

    def _cell(self, index: int, text: str, style: TextStyle) -> _Cell:
        width = self.widths[index]
        inner = width - 2 * PAD_X
        kind = self.columns[index].type
        # Text of fewer characters than its width in ems fits as it is (no glyph of a number or
        # a date is wider than an em): only longer text is measured.
        if len(text) * style.size > inner:
            if kind in WHOLE_TYPES:
                # A number or a date broken over two lines reads as two values ("-12,345." and
                # "25"): it is set smaller until it fits its column on one line.
                style = self.styles.fitted(style, [text], inner)
            elif kind == "datetime":
                style = self.styles.fitted(style, text.split(), inner)  # it may wrap before the time
        lines = style.lay_out(text, inner, self.warnings)
        return _Cell(self.xs[index], width, self.aligns[index], lines, style)

    def _span(
        self, start: int, end: int, text: str, style: TextStyle, align: str = "left", warnings: Counter | None = None
    ) -> _Cell:
        x = self.xs[start]
        width = sum(self.widths[start:end])
        counted = self.warnings if warnings is None else warnings
        return _Cell(x, width, align, style.lay_out(text, width - 2 * PAD_X, counted), style)

    @staticmethod
    def _row(
        kind: str,
        cells: list[_Cell],
        data_rows: int = 0,
        continuation: _Row | None = None,
        keep_with_next: bool = False,
    ) -> _Row:
        height = max((len(cell.lines) * cell.style.leading for cell in cells), default=0.0)
        height = max(height, CELL_LEADING, max(cell.style.leading for cell in cells)) + 2 * PAD_Y
        return _Row(kind, cells, height, data_rows, continuation, keep_with_next)

    def header(self) -> _Row:
        """The column labels; a label whose longest word is wider than its column is set smaller
        rather than broken inside a word."""
        cells = []
        for i, column in enumerate(self.columns):
            style = self.styles.fitted(self.styles.cell_bold, column.label.split(), self.widths[i] - 2 * PAD_X)
            lines = style.lay_out(column.label, self.widths[i] - 2 * PAD_X, self.warnings)
            cells.append(_Cell(self.xs[i], self.widths[i], self.aligns[i], lines, style))
        return self._row("header", cells)

    def data(self, values: Sequence[Any], continuation: _Row | None = None) -> _Row:
        if len(values) != len(self.columns):
            raise ValueError(f"a row has {len(values)} values for {len(self.columns)} columns")
        style, layout = self.styles.cell, self.layout
        cells = [
            self._cell(i, format_value(column, value, layout), style)
            for i, (column, value) in enumerate(zip(self.columns, values, strict=True))
            if value is not None
        ]
        if not cells:
            cells = [self._cell(0, "", style)]
        return self._row("data", cells, 1, continuation)

    def heading(self, text: str) -> _Row:
        return self._row("heading", [self._span(0, len(self.columns), text, self.styles.heading)], keep_with_next=True)

    def continued_heading(self, text: str) -> _Row:
        """The heading that opens a page breaking inside a group: counted on each page it opens."""
        counted: Counter = Counter()
        row = self._row(
            "heading",
            [self._span(0, len(self.columns), text, self.styles.heading, warnings=counted)],
            keep_with_next=True,
        )
        row.counted_when_drawn = counted
        return row

    def note(self, text: str) -> _Row:
        return self._row("note", [self._span(0, len(self.columns), text, self.styles.cell, "center")])

    def totals(self, kind: str, label: str, totals: dict[str, Any], continuation: _Row | None = None) -> list[_Row]:
        """A subtotal or grand total: the label over the leading non-numeric columns, or on a
        row of its own when the first column is a number."""
        style = self.styles.cell_bold
        numbers = [
            self._cell(i, format_value(column, totals.get(column.name), self.layout), style)
            for i, column in self.numeric
            if i >= self.lead and totals.get(column.name) is not None
        ]
        if self.lead == 0:
            label_row = self._row(
                kind, [self._span(0, len(self.columns), label, style)], 0, continuation, keep_with_next=True
            )
            return [label_row, self._row(f"{kind}-figures", numbers or [self._cell(0, "", style)], 0, continuation)]
        return [self._row(kind, [self._span(0, self.lead, label, style), *numbers], 0, continuation)]


def table_rows(table: _Table, rows: Iterable[Sequence[Any]]) -> Iterator[_Row]:
    for values in rows:
        yield table.data(values)


def grouped_rows(table: _Table, groups: Iterable[Group], *, grand_total: bool = True) -> Iterator[_Row]:
    """Heading, rows and subtotal of each group, then the grand total; sums are exact decimals."""
    grand: dict[str, Any] = {}
    grand_rows = 0
    any_group = False
    for group in groups:
        any_group = True
        count = group.row_count
        if count is None and isinstance(group.rows, Sequence):
            count = len(group.rows)
        code = isolated(str(group.code))
        text = f"{code} — {isolated(group.description)}" if group.description else code
        yield table.heading(text if count is None else f"{text} · {rows_label(count)}")
        continuation = table.continued_heading(f"{text} (continued)")
        sums: dict[str, Any] = {}
        seen = 0
        for values in group.rows:
            row = table.data(values, continuation)
            seen += 1
            for index, column in table.numeric:
                sums[column.name] = add_exact(sums.get(column.name), values[index])
            yield row
        shown = dict(group.subtotals) if group.subtotals is not None else sums
        for _, column in table.numeric:
            grand[column.name] = add_exact(grand.get(column.name), shown.get(column.name))
        grand_rows += seen
        yield from table.totals("subtotal", f"Subtotal {code} · {rows_label(seen)}", shown, continuation)
    if grand_total and any_group:
        yield from table.totals("total", f"Grand total · {rows_label(grand_rows)}", grand)


# --------------------------------------------------------------------------- painting


def _paint_band(canvas: Canvas, row: _Row, top: float, width: float) -> None:
    """A row's background and rule, if its kind has them."""
    bottom = top - row.height
    if row.kind in ("header", "total", "total-figures"):
        canvas.setFillColor(BAND)
        canvas.rect(0, bottom, width, row.height, stroke=0, fill=1)
    elif row.kind == "heading":
        canvas.setFillColor(HEADING_BAND)
        canvas.rect(0, bottom, width, row.height, stroke=0, fill=1)
    if row.kind in ("subtotal", "total"):
        canvas.setStrokeColor(TOTAL_RULE if row.kind == "total" else SUBTOTAL_RULE)
        canvas.setLineWidth(1 if row.kind == "total" else 0.5)
        canvas.line(0, top, width, top)


def _paint_rows(canvas: Canvas, rows: Sequence[_Row], top: float, width: float) -> None:
    """Draw rows from ``top`` down: their bands, then all their text in one text object (a text
    object per cell would repeat the font and position operators for every value)."""
    row_top = top
    for row in rows:
        if row.kind != "data":
            _paint_band(canvas, row, row_top, width)
        row_top -= row.height
    writer = LineWriter(canvas)
    row_top = top
    for row in rows:
        writer.color(GREY if row.kind == "note" else TEXT)
        for cell in row.cells:
            style = cell.style
            baseline = row_top - PAD_Y - style.size
            for line in cell.lines:
                # A right-to-left paragraph in a left-aligned (text) cell starts at the cell's right edge.
                if cell.align == "right" or (cell.align == "left" and line.right_to_left):
                    x = cell.x + cell.width - PAD_X - line.width
                elif cell.align == "center":
                    x = cell.x + (cell.width - line.width) / 2
                else:
                    x = cell.x + PAD_X
                writer.line(line, x, baseline, style.size)
                baseline -= style.leading
        row_top -= row.height
    writer.finish()


class _Placement:
    """Counts the data rows drawn and tells ``progress``; adds the counts of rows counted as drawn."""

    def __init__(self, progress: Progress | None, total: int | None, warnings: Counter | None = None) -> None:
        self.progress = progress
        self.total = total
        self.placed = 0
        self.warnings = Counter() if warnings is None else warnings

    def drawn(self, rows: int) -> None:
        if rows:
            self.placed += rows
            if self.progress is not None:
                self.progress(self.placed, self.total)


class _Block(Flowable):
    """Consecutive table rows; splits between rows at a page end."""

    def __init__(self, rows: list[_Row], width: float, placement: _Placement) -> None:
        super().__init__()
        self.rows = rows
        self.width = width
        self.placement = placement
        self.height = sum(row.height for row in rows)

    def wrap(self, available_width, available_height):
        return self.width, self.height

    def split(self, available_width, available_height):
        used = 0.0
        fits = 0
        for row in self.rows:
            if used + row.height > available_height:
                break
            used += row.height
            fits += 1
        # A group heading (or a total's label line) never ends a page: it goes over with the row after it.
        while fits and self.rows[fits - 1].keep_with_next:
            fits -= 1
        if fits == 0:
            first = self.rows[0]
            if first.continuation is None:
                return []
            # The page breaks before this block, inside a group: the next page opens with the
            # group's heading, as it does when the page breaks inside a block.
            return [FrameBreak, _Block([first.continuation, *self.rows], self.width, self.placement)]
        rest = self.rows[fits:]
        continuation = rest[0].continuation
        if continuation is not None:
            rest = [continuation, *rest]
        return [_Block(self.rows[:fits], self.width, self.placement), _Block(rest, self.width, self.placement)]

    def draw(self):
        _paint_rows(self.canv, self.rows, self.height, self.width)
        for row in self.rows:
            if row.counted_when_drawn:
                self.placement.warnings.update(row.counted_when_drawn)
        self.placement.drawn(sum(row.data_rows for row in self.rows))


class TextBlock(Flowable):
    """Paragraphs of one style each, with the space after each: a title block, a chart title."""

    def __init__(self, parts: list[tuple[TextStyle, Any, str, float]], width: float, warnings: Counter) -> None:
        super().__init__()
        self.width = width
        self.parts = [
            (style, color, style.lay_out(text, width, warnings), after) for style, color, text, after in parts
        ]
        self.height = sum(len(lines) * style.leading + after for style, _, lines, after in self.parts)

    def wrap(self, available_width, available_height):
        return self.width, self.height

    def draw(self):
        top = self.height
        for style, color, lines, after in self.parts:
            self.canv.setFillColor(color)
            for line in lines:
                draw_line(self.canv, line, 0, top - style.size, style.size)
                top -= style.leading
            top -= after


def title_block(layout: PdfLayout, width: float, styles: Styles, warnings: Counter) -> TextBlock:
    parts = [(styles.title, TEXT, layout.title, 3.0)]
    if layout.subtitle:
        parts.append((styles.subtitle, HexColor("#333333"), layout.subtitle, 2.0))
    if layout.filters_text:
        parts.append((styles.meta, GREY, layout.filters_text, 2.0))
    if layout.generated_at is not None:
        stamp = format_datetime(layout.generated_at, layout.datetime_format, time_zone=layout.time_zone)
        parts.append((styles.meta, GREY, f"Generated {stamp}", 2.0))
    parts[-1] = (*parts[-1][:3], parts[-1][3] + 6.0)
    return TextBlock(parts, width, warnings)


# --------------------------------------------------------------------------- document


class _LazyStory:
    """The flowables platypus asks for, made from an iterator as it reaches them.

    platypus works through a list from its front (reads [0], deletes [0], puts split parts
    back at the front); this answers the same calls while holding only the front.
    """

    def __init__(self, flowables: Iterable[Flowable]) -> None:
        self._source = iter(flowables)
        self._front: list[Flowable] = []

    def _fill(self, count: int) -> None:
        while len(self._front) < count:
            try:
                self._front.append(next(self._source))
            except StopIteration:
                return

    def __len__(self) -> int:
        self._fill(1)
        return len(self._front)

    def __getitem__(self, index):
        if isinstance(index, slice):
            self._fill(index.stop if index.stop is not None else 1 << 30)
        else:
            self._fill(index + 1)
        return self._front[index]

    def __setitem__(self, index, value) -> None:
        self._front[index] = value

    def __delitem__(self, index) -> None:
        self._fill(1)
        del self._front[index]

    def insert(self, index: int, value: Flowable) -> None:
        self._front.insert(index, value)


def _numbered_canvas(footer_style: TextStyle, page_width: float):
    """A canvas that writes "Page N of M" at the foot of every page once M is known, at save.

    Page streams stay as text until the document is written, so each gets its footer's few
    operators appended then: no second layout pass, and no object per page.
    """

    class NumberedCanvas(Canvas):
        def save(self):
            pages = self._doc.Pages.pages
            for number, page in enumerate(pages, start=1):
                line = footer_style.line(f"Page {number:,} of {len(pages):,}", Counter())
                writer = LineWriter(self)
                writer.color(GREY)
                writer.line(line, page_width - MARGIN_SIDE - line.width, MARGIN_BOTTOM / 2, footer_style.size)
                page.stream += writer.code() + "\n"
            super().save()

    return NumberedCanvas


def build_document(
    layout: PdfLayout,
    out: ByteSink,
    story: Callable[[float, Styles], Iterable[Flowable]],
    *,
    header: Callable[[float, Styles], _Row] | None = None,
) -> None:
    """Lay out the flowables ``story(content_width, styles)`` gives, on the layout's pages,
    into ``out``. With ``header``, its row opens every page after the first."""
    # A PDF is a binary file: encoding its compressed streams as base-85 text would add a quarter
    # to every page and font, for mail systems of the 1990s.
    rl_config.useA85 = 0
    page_width, page_height = layout.page_size_points
    content_width = page_width - 2 * MARGIN_SIDE
    body_height = page_height - MARGIN_TOP - MARGIN_BOTTOM
    styles = Styles()
    header_row = header(content_width, styles) if header is not None else None
    header_height = header_row.height if header_row is not None else 0.0

    def later_page(canvas, doc):
        if header_row is not None:
            canvas.saveState()
            canvas.translate(MARGIN_SIDE, 0)
            _paint_rows(canvas, [header_row], page_height - MARGIN_TOP, content_width)
            canvas.restoreState()

    def frame(name: str, height: float) -> Frame:
        return Frame(
            MARGIN_SIDE,
            MARGIN_BOTTOM,
            content_width,
            height,
            id=name,
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )

    doc = BaseDocTemplate(
        out,
        pagesize=(page_width, page_height),
        title=layout.title,
        leftMargin=MARGIN_SIDE,
        rightMargin=MARGIN_SIDE,
        topMargin=MARGIN_TOP,
        bottomMargin=MARGIN_BOTTOM,
        # Every page opens in the primary font, so no unembedded base-14 font is referenced.
        initialFontName=styles.cell.fonts.primary.name,
        pageTemplates=[
            PageTemplate("first", [frame("first", body_height)]),
            PageTemplate("later", [frame("later", body_height - header_height)], onPage=later_page),
        ],
    )

    def flowables() -> Iterator[Flowable]:
        yield NextPageTemplate("later")
        yield from story(content_width, styles)

    doc.build(_LazyStory(flowables()), canvasmaker=_numbered_canvas(styles.footer, page_width))


def _blocks(rows: Iterable[_Row], width: float, placement: _Placement, max_rows: int | None) -> Iterator[Flowable]:
    block: list[_Row] = []
    data_rows = 0
    for row in rows:
        if row.data_rows:
            data_rows += row.data_rows
            if max_rows is not None and data_rows > max_rows:
                raise PdfTooLarge(max_rows)
        block.append(row)
        if len(block) >= ROWS_PER_BLOCK and not row.keep_with_next:
            # A block never ends with a group heading: if it ended a page, the heading would too.
            yield _Block(block, width, placement)
            block = []
    if block:
        yield _Block(block, width, placement)


def render_body(
    columns: Sequence[PdfColumn],
    layout: PdfLayout,
    out: ByteSink,
    body: Callable[[_Table], Iterable[_Row]],
    *,
    progress: Progress | None,
    total: int | None,
    max_rows: int | None,
    warnings: Counter,
) -> int:
    placement = _Placement(progress, total, warnings)
    made = 0

    def story(width: float, styles: Styles) -> Iterator[Flowable]:
        nonlocal made
        table = _Table(columns, layout, width, styles, warnings)
        yield title_block(layout, width, styles, warnings)
        yield _Block([table.header()], width, placement)

        def counted() -> Iterator[_Row]:
            nonlocal made
            any_row = False
            for row in body(table):
                any_row = True
                made += row.data_rows
                yield row
            if not any_row:
                yield table.note("No rows to show.")

        yield from _blocks(counted(), width, placement, max_rows)

    def header(width: float, styles: Styles) -> _Row:
        return _Table(columns, layout, width, styles, Counter()).header()

    build_document(layout, out, story, header=header)
    return made


def render_table_pdf(
    columns: list[PdfColumn],
    rows: Iterable[Sequence[Any]],
    layout: PdfLayout,
    out: ByteSink,
    *,
    progress: Progress | None = None,
    total: int | None = None,
    max_rows: int | None = None,
    warnings: Counter | None = None,
) -> int:
    """Render ``rows`` as a table PDF into ``out``; return the number of rows rendered.

    ``rows`` is consumed once, a block at a time. ``progress(rows_placed, total)`` is called as
    rows are placed on pages. More than ``max_rows`` rows raise PdfTooLarge as soon as the row
    past the limit arrives. Characters no font has and clipped cells are counted in ``warnings``.
    """
    return render_body(
        columns,
        layout,
        out,
        lambda table: table_rows(table, rows),
        progress=progress,
        total=total,
        max_rows=max_rows,
        warnings=Counter() if warnings is None else warnings,
    )


def render_grouped_pdf(
    columns: list[PdfColumn],
    groups: Iterable[Group],
    layout: PdfLayout,
    out: ByteSink,
    *,
    progress: Progress | None = None,
    total: int | None = None,
    max_rows: int | None = None,
    grand_total: bool = True,
    warnings: Counter | None = None,
) -> int:
    """Render a grouped body: per group a heading, its rows and a subtotal; then a grand total.

    Numeric (integer and decimal) columns are subtotalled exactly (decimals, never floats); the
    grand total is the sum of the subtotals printed. Returns the number of data rows rendered.
    """
    return render_body(
        columns,
        layout,
        out,
        lambda table: grouped_rows(table, groups, grand_total=grand_total),
        progress=progress,
        total=total,
        max_rows=max_rows,
        warnings=Counter() if warnings is None else warnings,
    )
