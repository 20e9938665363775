"""A report table's rows, laid out as they are made: the columns' widths, each cell's text wrapped
to its column (a number, a date or a header word set smaller rather than broken), the header row,
group headings (and their "(continued)" copies), subtotals and the grand total, summed as exact
decimals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from app.rendering.pdf.formatting import add_exact, format_value, rows_label
from app.rendering.pdf.lines import Line, TextStyle, isolated
from app.rendering.pdf.model import Group, PdfColumn, PdfLayout
from app.rendering.pdf.styles import CELL_LEADING, PAD_X, PAD_Y, Styles

#: Column types whose values are read whole: a number or a date is never broken over lines (a
#: date and time may wrap between the two).
WHOLE_TYPES = frozenset({"integer", "decimal", "date", "boolean"})
#: How many laid-out cells a table remembers (a column's repeated values: teams, dates, projects,
#: yes and no), each laid out once and shared by every row that shows it.
_CELL_CACHE_SIZE = 2_048
#: Types whose equal values always print alike (a Decimal keeps its places: 1.5 and 1.50 are
#: equal and print apart, so a Decimal's cell is found by its text).
_PRINTED_ALIKE_WHEN_EQUAL = frozenset({str, int, bool, float, date, datetime})


@dataclass(slots=True)
class Cell:
    x: float
    width: float
    align: str
    lines: list[Line]
    style: TextStyle


@dataclass(slots=True)
class Row:
    kind: str  # "data", "header", "heading", "subtotal", "total", "note"
    cells: list[Cell]
    height: float
    data_rows: int = 0
    continuation: Row | None = None  # the group heading that opens a page breaking inside the group
    keep_with_next: bool = False  # never the last row on a page (a heading, a total's label line)
    # What laying the row out counted, for a row counted each time it is drawn rather than once
    # when it is made: a group's "(continued)" heading prints on as many pages as the group breaks over.
    counted_when_drawn: Counter | None = None


class Table:
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
        # Data cells by column and text, and by column and value, with what laying each out counted:
        # a cell is never changed once made, and its counts are added each time a row shows it.
        self._data_cells: dict[tuple, tuple[Cell, Counter]] = {}

    def _data_cell(self, index: int, value: Any) -> Cell:
        """The cell showing ``value`` in column ``index``, laid out once per document for each text
        it shows (and formatted once for each value whose equals print alike)."""
        by_value = (index, value.__class__, value) if value.__class__ in _PRINTED_ALIKE_WHEN_EQUAL else None
        known = self._data_cells.get(by_value) if by_value is not None else None
        if known is None:
            text = format_value(self.columns[index], value, self.layout)
            known = self._data_cells.get((index, text))
            if known is None:
                counted: Counter = Counter()
                known = (self._cell(index, text, self.styles.cell, counted), counted)
                if len(self._data_cells) >= _CELL_CACHE_SIZE:
                    self._data_cells.clear()
                self._data_cells[(index, text)] = known
            if by_value is not None:
                self._data_cells[by_value] = known
        cell, counted = known
        if counted:
            self.warnings.update(counted)
        return cell

    def _cell(self, index: int, text: str, style: TextStyle, warnings: Counter | None = None) -> Cell:
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
        lines = style.lay_out(text, inner, self.warnings if warnings is None else warnings)
        return Cell(self.xs[index], width, self.aligns[index], lines, style)

    def _span(
        self, start: int, end: int, text: str, style: TextStyle, align: str = "left", warnings: Counter | None = None
    ) -> Cell:
        x = self.xs[start]
        width = sum(self.widths[start:end])
        counted = self.warnings if warnings is None else warnings
        return Cell(x, width, align, style.lay_out(text, width - 2 * PAD_X, counted), style)

    @staticmethod
    def _row(
        kind: str,
        cells: list[Cell],
        data_rows: int = 0,
        continuation: Row | None = None,
        keep_with_next: bool = False,
    ) -> Row:
        height = max((len(cell.lines) * cell.style.leading for cell in cells), default=0.0)
        height = max(height, CELL_LEADING, max(cell.style.leading for cell in cells)) + 2 * PAD_Y
        return Row(kind, cells, height, data_rows, continuation, keep_with_next)

    def header(self) -> Row:
        """The column labels; a label whose longest word is wider than its column is set smaller
        rather than broken inside a word."""
        cells = []
        for i, column in enumerate(self.columns):
            style = self.styles.fitted(self.styles.cell_bold, column.label.split(), self.widths[i] - 2 * PAD_X)
            lines = style.lay_out(column.label, self.widths[i] - 2 * PAD_X, self.warnings)
            cells.append(Cell(self.xs[i], self.widths[i], self.aligns[i], lines, style))
        return self._row("header", cells)

    def data(self, values: Sequence[Any], continuation: Row | None = None) -> Row:
        if len(values) != len(self.columns):
            raise ValueError(f"a row has {len(values)} values for {len(self.columns)} columns")
        cells = [self._data_cell(i, value) for i, value in enumerate(values) if value is not None]
        if not cells:
            cells = [self._data_cell(0, "")]
        return self._row("data", cells, 1, continuation)

    def heading(self, text: str) -> Row:
        return self._row("heading", [self._span(0, len(self.columns), text, self.styles.heading)], keep_with_next=True)

    def continued_heading(self, text: str) -> Row:
        """The heading that opens a page breaking inside a group: counted on each page it opens."""
        counted: Counter = Counter()
        row = self._row(
            "heading",
            [self._span(0, len(self.columns), text, self.styles.heading, warnings=counted)],
            keep_with_next=True,
        )
        row.counted_when_drawn = counted
        return row

    def note(self, text: str) -> Row:
        return self._row("note", [self._span(0, len(self.columns), text, self.styles.cell, "center")])

    def totals(self, kind: str, label: str, totals: dict[str, Any], continuation: Row | None = None) -> list[Row]:
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


def table_rows(table: Table, rows: Iterable[Sequence[Any]]) -> Iterator[Row]:
    for values in rows:
        yield table.data(values)


def grouped_rows(table: Table, groups: Iterable[Group], *, grand_total: bool = True) -> Iterator[Row]:
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
