"""The fonts a PDF prints with, and which of them draws each character.

The TrueType files are committed under app/rendering/fonts/ with their licences (the README
there says where each came from). NotoSans draws Latin, Greek and Cyrillic; each other script
has a font of its own, and Symbola draws emoji and symbols, tried in the order of FAMILIES. Scripts whose letters change
shape or order with their neighbours are shaped with HarfBuzz (uharfbuzz), and in any font so is
text with combining marks (app/rendering/pdf/lines.py); reportlab embeds only the glyphs used.

Fonts are registered with reportlab once per process, on first use.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path

FONT_DIR = Path(__file__).resolve().parent.parent / "fonts"


@dataclass(frozen=True)
class _Family:
    name: str
    regular: str
    bold: str | None  # None: the regular face prints bold text too
    shaped: bool  # letters join, reorder or stack: HarfBuzz lays out all its text, not only marks
    right_to_left: bool = False


#: The primary family first; a character goes to the first family that has a glyph for it.
FAMILIES: tuple[_Family, ...] = (
    _Family("sans", "NotoSans-Regular.ttf", "NotoSans-Bold.ttf", shaped=False),
    _Family("arabic", "NotoSansArabic-Regular.ttf", "NotoSansArabic-Bold.ttf", shaped=True, right_to_left=True),
    _Family("hebrew", "NotoSansHebrew-Regular.ttf", "NotoSansHebrew-Bold.ttf", shaped=True, right_to_left=True),
    _Family("devanagari", "NotoSansDevanagari-Regular.ttf", "NotoSansDevanagari-Bold.ttf", shaped=True),
    _Family("bengali", "NotoSansBengali-Regular.ttf", "NotoSansBengali-Bold.ttf", shaped=True),
    _Family("tamil", "NotoSansTamil-Regular.ttf", "NotoSansTamil-Bold.ttf", shaped=True),
    _Family("thai", "NotoSansThai-Regular.ttf", "NotoSansThai-Bold.ttf", shaped=True),
    _Family("georgian", "NotoSansGeorgian-Regular.ttf", "NotoSansGeorgian-Bold.ttf", shaped=False),
    _Family("armenian", "NotoSansArmenian-Regular.ttf", "NotoSansArmenian-Bold.ttf", shaped=False),
    _Family("cjk", "wqy-microhei.ttc", None, shaped=False),
    # Emoji and symbols, in outlines: colour emoji fonts are bitmaps, which reportlab cannot draw.
    _Family("symbols", "Symbola.ttf", None, shaped=False),
)


class Face:
    """One font of a weight: its reportlab name, how it lays text out, and what it can draw.

    The file is read and registered with reportlab the first time its glyphs are asked about,
    so a report in Latin script never parses the 5 MB CJK font.
    """

    def __init__(self, name: str, filename: str, shaped: bool, right_to_left: bool) -> None:
        self.name = name
        self.filename = filename
        self.shaped = shaped
        self.right_to_left = right_to_left

    @cached_property
    def glyphs(self) -> Glyphs:
        return _register_once(self.name, self.filename, self.shaped)


class Glyphs:
    """The code points a font draws, read from reportlab's own map of the font (a copy of it
    would hold another 30,000 numbers for the CJK font, in every job that prints CJK)."""

    def __init__(self, char_to_glyph: dict[int, int]) -> None:
        self._char_to_glyph = char_to_glyph

    def __contains__(self, code: object) -> bool:
        # Glyph 0 is the font's "missing" box: a character mapped to it (NotoSans maps U+FFFF
        # there) is one the font cannot draw.
        return isinstance(code, int) and bool(self._char_to_glyph.get(code))


@dataclass(frozen=True)
class FontSet:
    """The faces of one weight, primary first."""

    faces: tuple[Face, ...]

    @property
    def primary(self) -> Face:
        return self.faces[0]


def _register(name: str, filename: str, shaped: bool) -> Glyphs:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    path = FONT_DIR / filename
    options = {"subfontIndex": 0} if filename.endswith(".ttc") else {}
    # Every face may be shaped: the unshaped families still shape a run that carries combining marks.
    font = TTFont(name, str(path), shapable=True, **options)
    pdfmetrics.registerFont(font)
    return Glyphs(font.face.charToGlyph)


@lru_cache(maxsize=2)
def font_set(bold: bool = False) -> FontSet:
    faces = []
    for family in FAMILIES:
        filename = family.bold if bold and family.bold else family.regular
        name = f"rpt-{family.name}-{'bold' if bold and family.bold else 'regular'}"
        faces.append(Face(name, filename, family.shaped, family.right_to_left))
    fonts = FontSet(tuple(faces))
    fonts.primary.glyphs  # noqa: B018 - the primary font is always used: register it now
    return fonts


@cache
def _register_once(name: str, filename: str, shaped: bool) -> Glyphs:
    return _register(name, filename, shaped)


def is_noncharacter(char: str) -> bool:
    """U+FDD0–U+FDEF and the last two code points of every plane: never text, never drawn."""
    code = ord(char)
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


def needs_no_glyph(char: str) -> bool:
    """Format characters (joiners, bidi marks, zero-width space) steer layout and draw nothing."""
    return unicodedata.category(char) == "Cf"
