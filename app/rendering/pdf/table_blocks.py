"""A table's rows painted on the page, in blocks of ROWS_PER_BLOCK rows.

Each block is one flowable that splits between rows at a page end by itself, so the time per row
stays flat however long the table is (one platypus table of every row would copy the remaining
rows at every page). A page that breaks inside a group opens with the group's "(continued)"
heading, and a heading never ends a page. Blocks are made from the rows as the layout reaches
them, so no more than a block of rows is held at a time, and ``progress(rows_placed, total)`` is
called as each piece of a block is drawn on its page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, FrameBreak

from app.rendering.pdf.lines import LineWriter
from app.rendering.pdf.model import PdfTooLarge
from app.rendering.pdf.styles import BAND, GREY, HEADING_BAND, PAD_X, PAD_Y, SUBTOTAL_RULE, TEXT, TOTAL_RULE
from app.rendering.pdf.table_rows import Row

Progress = Callable[[int, int | None], None]

ROWS_PER_BLOCK = 200


def _paint_band(canvas: Canvas, row: Row, top: float, width: float) -> None:
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


def paint_rows(canvas: Canvas, rows: Sequence[Row], top: float, width: float) -> None:
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


class Placement:
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


class RowBlock(Flowable):
    """Consecutive table rows; splits between rows at a page end."""

    def __init__(self, rows: list[Row], width: float, placement: Placement) -> None:
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
            return [FrameBreak, RowBlock([first.continuation, *self.rows], self.width, self.placement)]
        rest = self.rows[fits:]
        continuation = rest[0].continuation
        if continuation is not None:
            rest = [continuation, *rest]
        return [RowBlock(self.rows[:fits], self.width, self.placement), RowBlock(rest, self.width, self.placement)]

    def draw(self):
        paint_rows(self.canv, self.rows, self.height, self.width)
        for row in self.rows:
            if row.counted_when_drawn:
                self.placement.warnings.update(row.counted_when_drawn)
        self.placement.drawn(sum(row.data_rows for row in self.rows))


def row_blocks(rows: Iterable[Row], width: float, placement: Placement, max_rows: int | None) -> Iterator[Flowable]:
    block: list[Row] = []
    data_rows = 0
    for row in rows:
        if row.data_rows:
            data_rows += row.data_rows
            if max_rows is not None and data_rows > max_rows:
                raise PdfTooLarge(max_rows)
        block.append(row)
        if len(block) >= ROWS_PER_BLOCK and not row.keep_with_next:
            # A block never ends with a group heading: if it ended a page, the heading would too.
            yield RowBlock(block, width, placement)
            block = []
    if block:
        yield RowBlock(block, width, placement)
