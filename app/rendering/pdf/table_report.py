"""A table report's PDF, plain or coded (grouped): the title block, the header row that repeats on
every page, then the body's rows in blocks (app/rendering/pdf/table_blocks.py), with progress and
the row limit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from reportlab.platypus import Flowable

from app.rendering import ByteSink
from app.rendering.pdf.document import build_document, title_block
from app.rendering.pdf.model import Group, PdfColumn, PdfLayout
from app.rendering.pdf.styles import Styles
from app.rendering.pdf.table_blocks import Placement, Progress, RowBlock, row_blocks
from app.rendering.pdf.table_rows import Row, Table, grouped_rows, table_rows


def render_body(
    columns: Sequence[PdfColumn],
    layout: PdfLayout,
    out: ByteSink,
    body: Callable[[Table], Iterable[Row]],
    *,
    progress: Progress | None,
    total: int | None,
    max_rows: int | None,
    warnings: Counter,
) -> int:
    placement = Placement(progress, total, warnings)
    made = 0

    def story(width: float, styles: Styles) -> Iterator[Flowable]:
        nonlocal made
        table = Table(columns, layout, width, styles, warnings)
        yield title_block(layout, width, styles, warnings)
        yield RowBlock([table.header()], width, placement)

        def counted() -> Iterator[Row]:
            nonlocal made
            any_row = False
            for row in body(table):
                any_row = True
                made += row.data_rows
                yield row
            if not any_row:
                yield table.note("No rows to show.")

        yield from row_blocks(counted(), width, placement, max_rows)

    def header(width: float, styles: Styles) -> Row:
        return Table(columns, layout, width, styles, Counter()).header()

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
