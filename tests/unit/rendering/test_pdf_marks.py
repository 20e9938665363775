"""Combining marks in a PDF: drawn over or under their letter, where the shaper puts them.

The page's content stream is read back glyph by glyph (text position, rise, each glyph's width
from the font's /Widths), each glyph named by the font's ToUnicode map, and its ink measured in
the committed font file with HarfBuzz.
"""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import dataclass
from functools import cache

import uharfbuzz
from pypdf import PdfReader
from pypdf.generic import ContentStream

from app.rendering.pdf import PdfColumn, PdfLayout
from app.rendering.pdf.fonts import FONT_DIR
from app.rendering.pdf.table_report import render_table_pdf


@dataclass(frozen=True)
class Glyph:
    char: str
    x: float  # where its origin is drawn, in the text object's space
    advance: float
    ink: tuple[float, float]  # the outline's left and right edges
    ink_heights: tuple[float, float]  # its bottom and top, from the baseline


@cache
def _harfbuzz_font(base_font: str) -> uharfbuzz.Font:
    name = base_font.lstrip("/").split("+", 1)[-1]
    return uharfbuzz.Font(uharfbuzz.Face(uharfbuzz.Blob.from_file_path(str(FONT_DIR / f"{name}.ttf"))))


def _to_unicode(font) -> dict[int, str]:
    cmap = font["/ToUnicode"].get_object().get_data().decode("latin-1")
    return {int(code, 16): chr(int(char, 16)) for code, char in re.findall(r"<([0-9A-F]{2})> <([0-9A-F]{4})>", cmap)}


def _drawn_glyphs(pdf: bytes) -> list[Glyph]:
    """Every glyph of the first page in drawing order, with its origin and ink (Tm, Td, Tf, Ts, Tj, TJ)."""
    reader = PdfReader(io.BytesIO(pdf))
    page = reader.pages[0]
    fonts = page["/Resources"]["/Font"]
    glyphs: list[Glyph] = []
    line_x = x = size = rise = 0.0
    font = widths = chars = hb_font = None
    for operands, operator in ContentStream(page.get_contents(), reader).operations:
        if operator == b"Tm":
            line_x = x = float(operands[4])
        elif operator == b"Td":
            line_x = x = line_x + float(operands[0])
        elif operator == b"Ts":
            rise = float(operands[0])
        elif operator == b"Tf":
            font, size = fonts[operands[0]].get_object(), float(operands[1])
            first = int(font.get("/FirstChar", 0))
            widths = {first + i: float(width) for i, width in enumerate(font.get("/Widths", []))}
            chars = _to_unicode(font) if "/ToUnicode" in font else {}
            hb_font = _harfbuzz_font(font["/BaseFont"]) if "/ToUnicode" in font else None
        elif operator in (b"Tj", b"TJ"):
            for item in operands[0] if operator == b"TJ" else operands:
                if isinstance(item, bytes | str):
                    for code in item if isinstance(item, bytes) else item.encode("latin-1"):
                        advance = widths[code] * size / 1000
                        char = chars.get(code, "")
                        ink, heights = (x, x + advance), (rise, rise)
                        if hb_font is not None and char:
                            extents = hb_font.get_glyph_extents(hb_font.get_nominal_glyph(ord(char)))
                            left, top = x + extents.x_bearing * size / 1000, rise + extents.y_bearing * size / 1000
                            ink = (left, left + extents.width * size / 1000)
                            heights = (top + extents.height * size / 1000, top)
                        glyphs.append(Glyph(char, x, advance, ink, heights))
                        x += advance
                else:
                    x -= float(item) * size / 1000
    return glyphs


def _clusters(glyphs: list[Glyph]) -> list[list[Glyph]]:
    """Each letter with the combining marks drawn after it."""
    clusters: list[list[Glyph]] = []
    for glyph in glyphs:
        if clusters and glyph.char and unicodedata.category(glyph.char) == "Mn":
            clusters[-1].append(glyph)
        else:
            clusters.append([glyph])
    return clusters


def _render(text: str) -> bytes:
    out = io.BytesIO()
    render_table_pdf([PdfColumn("s", "S")], [(text,)], PdfLayout(title="T"), out)
    return out.getvalue()


def _marks_outside_their_letter(text: str) -> list[str]:
    """The marks of the page whose ink reaches past their letter's own width."""
    outside = []
    for base, *marks in _clusters(_drawn_glyphs(_render(text))):
        for mark in marks:
            if mark.ink[0] < base.x or mark.ink[1] > base.x + base.advance:
                outside.append(
                    f"{base.char}+U+{ord(mark.char):04X} at {mark.ink} beside {base.x}..{base.x + base.advance}"
                )
    return outside


def test_a_diaeresis_after_its_letter_is_drawn_over_it():
    """`a` + U+0308 prints as ä: no part of the dots stands beside the letter."""
    assert _marks_outside_their_letter("Zwa\u0308lf") == []


def test_a_mark_above_and_a_mark_below_one_letter_are_drawn_over_and_under_it():
    """`q` + U+0307 + U+0323: both dots within the letter's width, the one above over it, the one below
    under its descender."""
    glyphs = _drawn_glyphs(_render("q\u0307\u0323"))
    ((letter, *marks),) = [cluster for cluster in _clusters(glyphs) if cluster[0].char == "q"]
    below, above = sorted(marks, key=lambda mark: mark.ink_heights)
    assert (below.char, above.char) == ("\u0323", "\u0307")
    assert below.ink_heights[1] < letter.ink_heights[0] and above.ink_heights[0] > letter.ink_heights[1]
    assert _marks_outside_their_letter("q\u0307\u0323") == []
