"""A summary report: headline figures, then a horizontal bar chart."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from reportlab.lib.colors import HexColor
from reportlab.platypus import Flowable

from app.rendering import ByteSink
from app.rendering.pdf.document import TextBlock, build_document, title_block
from app.rendering.pdf.formatting import exact_number, figure_text
from app.rendering.pdf.lines import draw_line
from app.rendering.pdf.model import PdfLayout
from app.rendering.pdf.styles import GREY, TEXT, Styles

FIGURES_PER_ROW = 3
BAR = HexColor("#4a78b5")
NEGATIVE_BAR = HexColor("#c0504d")


class _Rows(Flowable):
    """A flowable of rows that each know their height (the last item), split between rows at a
    page end: many figures, or a chart's long labels, run on to the next page."""

    rows: list[tuple]
    margin = 0.0  # height over the rows'

    def _set_rows(self, rows: list[tuple]) -> None:
        self.rows = rows
        self.height = sum(row[-1] for row in rows) + self.margin

    def wrap(self, available_width, available_height):
        return self.width, self.height

    def split(self, available_width, available_height):
        used, fits = self.margin, 0
        for row in self.rows:
            if used + row[-1] > available_height:
                break
            used += row[-1]
            fits += 1
        if fits in (0, len(self.rows)):
            return []
        parts = []
        for rows in (self.rows[:fits], self.rows[fits:]):
            part = copy.copy(self)
            # platypus marks a flowable it has moved to a new page (_postponed) and gives up when
            # it cannot place it a second time; a part is a new flowable.
            part.__dict__.pop("_postponed", None)
            part._set_rows(rows)
            parts.append(part)
        return parts


class _Figures(_Rows):
    """The headline figures, three to a row: a small label over a large value."""

    margin = 10.0

    def __init__(
        self, figures: Sequence[tuple[str, Any]], layout: PdfLayout, width: float, styles: Styles, warnings: Counter
    ) -> None:
        super().__init__()
        self.width = width
        self.label_style, self.value_style = styles.figure_label, styles.figure_value
        cell = width / FIGURES_PER_ROW - 6
        rows = []
        for start in range(0, len(figures), FIGURES_PER_ROW):
            cells = [
                (
                    self.label_style.lay_out(str(label), cell, warnings),
                    self.value_style.lay_out(figure_text(value, layout), cell, warnings),
                )
                for label, value in figures[start : start + FIGURES_PER_ROW]
            ]
            height = max(len(lb) * self.label_style.leading + len(v) * self.value_style.leading for lb, v in cells)
            rows.append((cells, height + 8))
        self._set_rows(rows)

    def draw(self):
        top = self.height - 6
        for cells, height in self.rows:
            for index, (label_lines, value_lines) in enumerate(cells):
                x = index * self.width / FIGURES_PER_ROW
                y = top - 4
                self.canv.setFillColor(GREY)
                for line in label_lines:
                    draw_line(self.canv, line, x, y - self.label_style.size, self.label_style.size)
                    y -= self.label_style.leading
                self.canv.setFillColor(TEXT)
                for line in value_lines:
                    draw_line(self.canv, line, x, y - self.value_style.size, self.value_style.size)
                    y -= self.value_style.leading
            top -= height


class _Chart(_Rows):
    """One bar per entry: the label, a bar as long as the value against the largest, the value.

    With negative values the bars share a zero line: negative bars run left of it, positive
    ones right, so a bar's length and side both read as its value.
    """

    def __init__(
        self, chart: Sequence[tuple[str, Any]], layout: PdfLayout, width: float, styles: Styles, warnings: Counter
    ) -> None:
        super().__init__()
        self.width = width
        self.style = styles.cell
        numbers = []
        for _, value in chart:
            number = exact_number(value)
            numbers.append(float(number) if number is not None else 0.0)
        most = max((n for n in numbers), default=0.0)
        least = min((n for n in numbers), default=0.0)
        span = (max(most, 0.0) - min(least, 0.0)) or 1.0
        self.label_width, self.bar_width = width * 0.28, width * 0.56
        self.value_width = width - self.label_width - self.bar_width
        room = self.bar_width - 3
        self.zero = self.label_width - min(least, 0.0) / span * room
        rows = []
        for (label, value), bar in zip(chart, numbers, strict=True):
            label_lines = self.style.lay_out(str(label), self.label_width - 3, warnings)
            value_lines = self.style.lay_out(figure_text(value, layout), self.value_width - 3, warnings)
            height = max(len(label_lines), len(value_lines), 1) * self.style.leading + 3
            rows.append((label_lines, bar / span * room, value_lines, height))
        self._set_rows(rows)

    def draw(self):
        canvas, style = self.canv, self.style
        top = self.height
        for label_lines, length, value_lines, height in self.rows:
            baseline = top - 1.5 - style.size
            canvas.setFillColor(TEXT)
            for offset, line in enumerate(label_lines):
                draw_line(canvas, line, 0, baseline - offset * style.leading, style.size)
            for offset, line in enumerate(value_lines):
                draw_line(canvas, line, self.width - line.width, baseline - offset * style.leading, style.size)
            if abs(length) >= 0.5:
                canvas.setFillColor(BAR if length > 0 else NEGATIVE_BAR)
                canvas.rect(
                    min(self.zero, self.zero + length), top - height + 2, abs(length), height - 4, stroke=0, fill=1
                )
            top -= height


def render_summary_pdf(
    layout: PdfLayout,
    figures: list[tuple[str, Any]],
    chart: list[tuple[str, float | int | Decimal]] | None,
    out: ByteSink,
    *,
    chart_title: str | None = None,
    warnings: Counter | None = None,
) -> None:
    """A summary: headline figures, then an optional horizontal bar chart; one page unless
    the figures or the chart's labels need more."""
    warnings = Counter() if warnings is None else warnings

    def story(width: float, styles: Styles):
        yield title_block(layout, width, styles, warnings)
        if figures:
            yield _Figures(figures, layout, width, styles, warnings)
        if chart:
            if chart_title:
                yield TextBlock([(styles.chart_title, TEXT, chart_title, 4.0)], width, warnings)
            yield _Chart(chart, layout, width, styles, warnings)

    build_document(layout, out, story)
