"""The pages every report PDF is laid out on, with reportlab's platypus: the title block, the
flowables made from an iterator as the layout reaches them, a header row that opens every page
after the first, and "Page N of M" at the foot of each page.

"Page N of M" is added to every page as a second content stream when the document is saved and
M is known: no second pass over the document. Each page's own stream is compressed as the page
ends, so the pages waiting for M hold a tenth of their text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from reportlab import rl_config
from reportlab.lib.colors import HexColor
from reportlab.pdfbase.pdfdoc import PDFArray, PDFDictionary, PDFName, PDFStream, PDFZCompress
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import BaseDocTemplate, Flowable, Frame, NextPageTemplate, PageTemplate

from app.rendering import ByteSink
from app.rendering.pdf.formatting import format_datetime
from app.rendering.pdf.lines import LineWriter, TextStyle, draw_line
from app.rendering.pdf.model import MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP, PdfLayout
from app.rendering.pdf.styles import GREY, TEXT, Styles
from app.rendering.pdf.table_blocks import paint_rows
from app.rendering.pdf.table_rows import Row


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

    A page's operators are compressed into its first content stream as the page ends (held as
    text until the save, 20,000 rows' pages took 5.5 MB); its footer's few operators are a second
    stream of the page, which a reader draws after the first: no second layout pass, and no form
    object per page.
    """

    class NumberedCanvas(Canvas):
        def showPage(self):
            super().showPage()
            page = self._doc.Pages.pages[-1]
            body = PDFStream(
                PDFDictionary({"Filter": PDFArray([PDFName(PDFZCompress.pdfname)])}),
                PDFZCompress.encode(page.stream),
            )
            page.Contents = PDFArray([self._doc.Reference(body)])
            page.stream = None

        def save(self):
            pages = self._doc.Pages.pages
            for number, page in enumerate(pages, start=1):
                line = footer_style.line(f"Page {number:,} of {len(pages):,}", Counter())
                writer = LineWriter(self)
                writer.color(GREY)
                writer.line(line, page_width - MARGIN_SIDE - line.width, MARGIN_BOTTOM / 2, footer_style.size)
                footer = PDFStream(content=writer.code() + "\n", filters=[PDFZCompress])
                page.Contents.sequence.append(self._doc.Reference(footer))
            super().save()

    return NumberedCanvas


def build_document(
    layout: PdfLayout,
    out: ByteSink,
    story: Callable[[float, Styles], Iterable[Flowable]],
    *,
    header: Callable[[float, Styles], Row] | None = None,
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
            paint_rows(canvas, [header_row], page_height - MARGIN_TOP, content_width)
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
