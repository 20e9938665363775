"""The look of report PDFs: type sizes, cell padding and colours, and the text styles of one document."""

from __future__ import annotations

import math
from collections.abc import Sequence

from reportlab.lib.colors import HexColor

from app.rendering.pdf.lines import TextStyle

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
