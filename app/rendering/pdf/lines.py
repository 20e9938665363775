"""Cell text laid out in lines: wrapped to a width, clipped at a bound, drawn in every script.

A line is a list of pieces in visual order, each in one font. Characters go to the first font
that has a glyph for them (app/rendering/pdf/fonts.py). Right-to-left text (Arabic, Hebrew) is
put in visual order with the Unicode bidi algorithm: levels resolved on the whole paragraph,
then each wrapped line reordered with its share of them (app/rendering/pdf/reordering.py), and
each right-to-left piece is shaped by HarfBuzz, so the glyphs join. So is every piece holding a
combining mark (`a` + U+0308, `q` + U+0307 + U+0323), whatever its font: a mark has no width of
its own, and the shaper's offsets, which reportlab applies when it draws a shaped piece (a `TJ`
adjustment and a text rise per glyph), put it over or under its letter instead of after it.
Shaped glyphs do not map back to their characters one by one (a joined Arabic letter maps to a
presentation form, an Indic conjunct to nothing useful, `a` + U+0308 to the glyph of `ä`), so
every shaped piece, and every run of characters no font has, carries its characters as the
PDF's ActualText, and copying and pdftotext give the letters as written.

ActualText holds a piece's characters in the order its glyphs are drawn, left to right, as
the glyphs' own text would be: text extractors (poppler's pdftotext among them) read a line
left to right and turn each right-to-left run back into logical order themselves, so a
right-to-left piece's ActualText is its logical text reversed (measured with pdftotext 22.12:
logical ActualText comes out backwards).

No character is lost without a count. A character no font can draw (a control character, a
noncharacter such as U+FFFF, a letter of a script no font covers) prints as the replacement
mark and counts once in ``warnings`` as ``glyph_missing``; a cell cut at its bound counts as
``cell_clipped``. A space or format character that a run's
font lacks is drawn as a plain space or as nothing, never as the font's empty box. Each of
these keeps its own characters in the text layer (ActualText). Unicode's mandatory line
breaks (LF, CR, VT, FF, NEL, U+2028, U+2029) start a new line.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections import Counter
from dataclasses import dataclass, field

from reportlab.lib.abag import ABag
from reportlab.lib.rl_accel import fp_str
from reportlab.pdfbase.pdfmetrics import getFont, stringWidth
from reportlab.pdfbase.ttfonts import ShapedStr, shapeFragWord

from app.rendering.pdf.fonts import FontSet, Glyphs, font_set, is_noncharacter, needs_no_glyph
from app.rendering.pdf.reordering import paragraph_levels, visual_order

#: A cell longer than this is cut before it is laid out: no page shows more of one value.
MAX_CELL_CHARS = 4_000
#: A cell that wraps to more lines than this is cut there, so a row always fits on a page.
MAX_CELL_LINES = 24
CLIP_MARKER = "[…]"
REPLACEMENT = "\ufffd"

GLYPH_MISSING = "glyph_missing"
CELL_CLIPPED = "cell_clipped"

# Characters NotoSans draws without shaping: Latin (Vietnamese included), Greek, Cyrillic and
# common punctuation (a test checks the committed font has each). Text of these alone skips
# the per-character font lookup.
_PRIMARY_ONLY = re.compile(
    r"[ -~\u00a0-\u024f\u0370-\u0377\u037a-\u037f\u0384-\u038a\u038c\u038e-\u03a1\u03a3-\u03e1\u03f0-\u03ff"
    r"\u0400-\u0482\u048a-\u052f\u1e00-\u1eff\u2010-\u2027\u2030-\u205e\u20a0-\u20bf]*"
)
#: How many laid-out cells a style remembers: columns repeat their values (teams, dates, codes).
_LAYOUT_CACHE_SIZE = 2_048
# Unicode's mandatory line breaks (UAX #14: BK, CR, LF, NL) start a new line; any other control
# character has no glyph in any font and is counted as missing.
_NEWLINE = re.compile(r"\r\n|[\n\r\v\f\x85\u2028\u2029]")
_TOKEN = re.compile(r"\s+|\S+")
# Where a long unbroken value (an email, a URL, a path) may break: after its punctuation.
_BREAK_AFTER = re.compile(r"(?<=[@./\\_:;,?&=+\-])")
_BREAK_CHARACTERS = re.compile(r"[@./\\_:;,?&=+\-]+")
_BEYOND_BASIC_PLANE = re.compile(r"[\U00010000-\U0010ffff]")
_RIGHT_TO_LEFT = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
# Combining marks of the scripts the unshaped fonts draw (Latin, Greek, Cyrillic, symbols): a mark
# has no width of its own, and only the shaper's offsets put it over or under its letter.
_COMBINING_MARK = re.compile(r"[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")

_NEUTRAL = -2  # a space: joins the piece it is in
_FORMAT = -3  # a format character: drawn only where the piece's font has it
_MISSING = -1


@dataclass(frozen=True, slots=True)
class Piece:
    font: str
    text: str  # a ShapedStr when HarfBuzz laid it out
    width: float
    # The characters the glyphs stand for, in drawing order, where the glyphs alone do not say.
    actual: str | None


@dataclass(frozen=True, slots=True)
class Line:
    pieces: tuple[Piece, ...]
    width: float
    # The line's paragraph reads right to left: a left-aligned cell sets it against its right edge.
    right_to_left: bool = False


@dataclass
class TextStyle:
    """One font weight and size; remembers which face draws each character seen."""

    bold: bool
    size: float
    leading: float
    fonts: FontSet = field(init=False)
    _face_of: dict[str, int] = field(init=False, default_factory=dict)
    # (text, width, max lines) -> (lines, what laying it out counted): a repeated value is laid out once,
    # and counted every time.
    _laid_out: dict[tuple[str, float, int], tuple[list[Line], Counter]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.fonts = font_set(self.bold)

    def face_index(self, char: str) -> int:
        index = self._face_of.get(char)
        if index is None:
            if unicodedata.category(char) in ("Cc", "Cs") or is_noncharacter(char):
                # A control character, half a surrogate pair or a noncharacter: nothing draws it.
                index = _MISSING
            elif char.isspace():
                index = _NEUTRAL
            elif needs_no_glyph(char):
                index = _FORMAT
            else:
                code = ord(char)
                index = next((i for i, face in enumerate(self.fonts.faces) if code in face.glyphs), _MISSING)
            self._face_of[char] = index
        return index

    def width(self, text: str) -> float:
        """The width of logical text, before shaping (what wrapping goes by)."""
        primary = self.fonts.primary.name
        if _PRIMARY_ONLY.fullmatch(text):
            return stringWidth(text, primary, self.size)
        faces = self.fonts.faces
        return sum(
            stringWidth(drawn, faces[index].name if index >= 0 else primary, self.size)
            for index, drawn, _ in self._runs(text)
        )

    def _runs(self, text: str) -> list[tuple[int, str, str]]:
        """Maximal runs of one face (spaces and format characters join the run they are in;
        -1 = no face has it), each as (face, what is drawn, the characters it stands for).

        What is drawn differs from the characters only where a font has no glyph: a format
        character the run's font lacks is left out (it draws nothing either way), a space it
        lacks is drawn as a plain space, and in a run no font has, each character is drawn as
        the replacement mark (spaces as spaces, format characters as nothing)."""
        runs: list[tuple[int, str, str]] = []
        current = None
        chars: list[str] = []
        faces = self.fonts.faces

        def flush(index: int) -> None:
            run = "".join(chars)
            drawn = run
            if index == _MISSING:
                drawn = "".join(_shown_for_missing(ch) for ch in run)
            elif not run.isprintable():
                glyphs = faces[index].glyphs
                drawn = "".join(_drawn_with(ch, glyphs) for ch in run)
            runs.append((index, drawn, run))

        for char in text:
            index = self.face_index(char)
            if index in (_NEUTRAL, _FORMAT):
                chars.append(char)  # before any letter: joins the first run
                continue
            if current is None:
                current = index
            elif index != current:
                # Spaces after a right-to-left run (in visual order) go with the text after it:
                # text extractors read a right-to-left run's ActualText backwards, and a space
                # at its end would come out glued to the word before it.
                carried: list[str] = []
                if current >= 0 and faces[current].right_to_left:
                    while chars and chars[-1].isspace():
                        carried.insert(0, chars.pop())
                flush(current)
                chars, current = carried, index
            chars.append(char)
        if chars:
            flush(current if current is not None else 0)
        return runs

    def line(self, text: str, warnings: Counter) -> Line:
        """One line of logical text, a paragraph of its own, as pieces in visual order; characters
        no font has are counted."""
        if not _RIGHT_TO_LEFT.search(text):
            return self._visual_line(text, False, warnings)
        base, levels = paragraph_levels(text)
        return self._visual_line(visual_order(text, levels, base), base == 1, warnings)

    def _visual_line(self, text: str, right_to_left: bool, warnings: Counter) -> Line:
        """A line already in visual order as pieces, each in one font."""
        primary = self.fonts.primary.name
        if _PRIMARY_ONLY.fullmatch(text):
            width = stringWidth(text, primary, self.size)
            return Line((Piece(primary, text, width, None),), width, right_to_left)
        runs = self._runs(text)
        pieces = []
        faces = self.fonts.faces
        for index, drawn, run in runs:
            if index == _MISSING:
                # Each character no font has prints as the replacement mark; the text layer keeps it.
                warnings[GLYPH_MISSING] += sum(_counted_missing(ch) for ch in run)
                actual: str | None = "".join(REPLACEMENT if unicodedata.category(ch) == "Cs" else ch for ch in run)
                pieces.append(Piece(primary, drawn, stringWidth(drawn, primary, self.size), actual))
                continue
            face = faces[index]
            if not face.shaped and not _COMBINING_MARK.search(drawn):
                # reportlab's ToUnicode map keeps 16 bits of a code point (U+1F642 would extract as
                # U+1F64): a character past U+FFFF keeps its text through ActualText.
                actual = None if drawn == run and not _BEYOND_BASIC_PLANE.search(run) else run
                pieces.append(Piece(face.name, drawn, stringWidth(drawn, face.name, self.size), actual))
                continue
            logical = drawn[::-1] if face.right_to_left else drawn
            shaped = _shaped(logical, face.name, self.size)
            if isinstance(shaped, ShapedStr):
                width = sum(glyph.x_advance for glyph in shaped.__shapeData__) * self.size / 1000
            else:
                width = stringWidth(logical, face.name, self.size)
            # ``run`` is in visual order, as its glyphs are drawn (see the module's docstring).
            pieces.append(Piece(face.name, shaped, width, run))
        return Line(tuple(pieces), sum(piece.width for piece in pieces), right_to_left)

    # ------------------------------------------------------------------ wrapping

    def lay_out(self, text: str, width: float, warnings: Counter, max_lines: int = MAX_CELL_LINES) -> list[Line]:
        """``text`` wrapped to ``width``: line breaks kept, leading spaces kept, long words broken
        at their punctuation (or anywhere, as a last resort), cut at ``max_lines`` with a marker."""
        if not text:
            return []
        if _PRIMARY_ONLY.fullmatch(text):
            fits = stringWidth(text, self.fonts.primary.name, self.size)
            if fits <= width:
                return [Line((Piece(self.fonts.primary.name, text, fits, None),), fits)]
        key = (text, width, max_lines)
        known = self._laid_out.get(key)
        if known is None:
            counted: Counter = Counter()
            known = (self._lay_out(text, width, counted, max_lines), counted)
            if len(self._laid_out) >= _LAYOUT_CACHE_SIZE:
                self._laid_out.clear()
            self._laid_out[key] = known
        lines, counted = known
        if counted:
            warnings.update(counted)
        return lines

    def _lay_out(self, text: str, width: float, warnings: Counter, max_lines: int) -> list[Line]:
        clipped = len(text) > MAX_CELL_CHARS
        if clipped:
            text = text[:MAX_CELL_CHARS]
        text = text.replace("\t", " ")
        # Each line in visual order, and whether its paragraph reads right to left.
        visual: list[tuple[str, bool]] = []
        for paragraph in _NEWLINE.split(text):
            visual.extend(self._paragraph_lines(paragraph, width))
            if len(visual) > max_lines:
                clipped = True
                break
        if clipped:
            visual = visual[: max_lines - 1] + [(CLIP_MARKER, False)]
            warnings[CELL_CLIPPED] += 1
        return [self._visual_line(line, right_to_left, warnings) for line, right_to_left in visual]

    def _paragraph_lines(self, paragraph: str, width: float) -> list[tuple[str, bool]]:
        """The paragraph wrapped, each line in visual order: the bidi levels are resolved on the
        whole paragraph and each line is reordered with its share of them (UAX #9, L1 and L2 per
        line), so a line never picks a direction of its own (see app/rendering/pdf/reordering.py)."""
        wrapped = self._wrap(paragraph, width)
        if not _RIGHT_TO_LEFT.search(paragraph):
            return [(line, False) for _, line in wrapped]
        base, levels = paragraph_levels(paragraph)
        return [(visual_order(line, levels[start : start + len(line)], base), base == 1) for start, line in wrapped]

    def _wrap(self, paragraph: str, width: float) -> list[tuple[int, str]]:
        """The paragraph's lines, each with where it starts in the paragraph."""
        lines: list[tuple[int, str]] = []
        start, current, current_width = 0, "", 0.0
        for token_match in _TOKEN.finditer(paragraph):
            token = token_match.group()
            token_width = self.width(token)
            if current_width + token_width <= width:
                current += token
                current_width += token_width
                continue
            if token.isspace():
                # The spaces where a line breaks are not printed.
                lines.append((start, current))
                start, current, current_width = token_match.end(), "", 0.0
                continue
            if current.strip():
                lines.append((start, current.rstrip()))
            start = token_match.start()
            if token_width <= width:
                current, current_width = token, token_width
                continue
            for part in self._break_word(token, width)[:-1]:
                lines.append((start, part))
                start += len(part)
            current = paragraph[start : token_match.end()]
            current_width = self.width(current)
        lines.append((start, current))
        return lines

    def _break_word(self, word: str, width: float) -> list[str]:
        """A word wider than ``width`` in pieces that fit: at its punctuation where possible."""
        parts: list[str] = []
        current, current_width = "", 0.0
        segments = [segment for segment in _BREAK_AFTER.split(word) if segment]
        # Punctuation that opens the word ("=" of "=HYPERLINK(") stays with what follows it,
        # not alone on a line.
        while len(segments) > 1 and _BREAK_CHARACTERS.fullmatch(segments[0]):
            segments[:2] = [segments[0] + segments[1]]
        for segment in segments:
            segment_width = self.width(segment)
            if current_width + segment_width <= width:
                current += segment
                current_width += segment_width
                continue
            if current:
                parts.append(current)
                current, current_width = "", 0.0
            if segment_width <= width:
                current, current_width = segment, segment_width
                continue
            for char in segment:
                char_width = self.width(char)
                if current and current_width + char_width > width:
                    parts.append(current)
                    current, current_width = "", 0.0
                current += char
                current_width += char_width
        if current:
            parts.append(current)
        return parts


def isolated(text: str) -> str:
    """``text`` set apart for the bidi algorithm when it has right-to-left letters, so that a
    right-to-left name inside a sentence ("A1 — محمد · 3 rows") neither carries the words and
    numbers after it into its own order nor turns the whole line right to left."""
    return f"\u2068{text}\u2069" if _RIGHT_TO_LEFT.search(text) else text


def _counted_missing(char: str) -> bool:
    """Whether ``char`` in a run no font has is a character lost from the page (and counted)."""
    return not needs_no_glyph(char) and unicodedata.category(char) != "Zs"


def _shown_for_missing(char: str) -> str:
    if needs_no_glyph(char):
        return ""
    return " " if unicodedata.category(char) == "Zs" else REPLACEMENT


def _drawn_with(char: str, glyphs: Glyphs) -> str:
    """``char`` as a font with ``glyphs`` draws it: a space it lacks as a plain space, a format
    character it lacks as nothing."""
    if ord(char) in glyphs:
        return char
    if needs_no_glyph(char):
        return ""
    return " " if char.isspace() else char


def _shaped(text: str, font: str, size: float) -> str:
    """``text`` laid out by HarfBuzz; discretionary ligatures stay off (a name is not a calligraphy)."""
    word = shapeFragWord(
        [stringWidth(text, font, size), (ABag(fontName=font, fontSize=size), text)],
        features={"kern": True, "liga": True},
    )
    return word[1][1]


# An unshaped piece's text as text operators, by font and text, for each document being written:
# each part of the text in one of the font's subsets (256 glyphs each), escaped. The font's
# subsets give a character its code once, when a document first uses it, so the same text in the
# same font is the same parts for the rest of the document: a value repeated on every page
# (a team, a date, "Yes") is split and escaped once, not once per row.
_shown_parts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PARTS_KEPT = 2_048
# A move to the next line's start, in tenths of a point, as its operator: a table's rows repeat a
# few hundred moves (column to column, row to row).
_moves: dict[tuple[int, int], str] = {}
_MOVES_KEPT = 4_096


class LineWriter:
    """Draws lines into one PDF text object, setting the font and colour only when they change."""

    def __init__(self, canvas) -> None:
        self.canvas = canvas
        self._parts: dict[tuple[str, str], list[tuple[int, str]]] = _shown_parts.setdefault(canvas._doc, {})
        self.text = canvas.beginText()
        self._font: tuple[str, float] | None = None
        self._color = None
        # Where the last line started, in tenths of a point.
        self._origin: tuple[int, int] | None = None

    def color(self, color) -> None:
        if color != self._color:
            self.text.setFillColor(color)
            self._color = color

    def line(self, line: Line, x: float, y: float, size: float) -> None:
        text = self.text
        code = text._code
        # A tenth of a point is invisible, and short coordinates compress far better; each line
        # after the first is placed relative to the one before (rows repeat the same few moves).
        tenths = round(x * 10), round(y * 10)
        if self._origin is None:
            text.setTextOrigin(tenths[0] / 10, tenths[1] / 10)
        else:
            move = (tenths[0] - self._origin[0], tenths[1] - self._origin[1])
            operator = _moves.get(move)
            if operator is None:
                if len(_moves) >= _MOVES_KEPT:
                    _moves.clear()
                operator = _moves[move] = f"{fp_str(move[0] / 10, move[1] / 10)} Td"
            code.append(operator)
        self._origin = tenths
        for piece in line.pieces:
            if (piece.font, size) != self._font:
                text.setFont(piece.font, size)
                self._font = (piece.font, size)
            if piece.actual is not None:
                code.append(f"/Span <</ActualText <FEFF{piece.actual.encode('utf-16-be').hex()}>>> BDC")
            if isinstance(piece.text, ShapedStr):
                # textOut would measure the text again only to track a cursor this writer does not use.
                code.append(text._formatText(piece.text))
            else:
                self._show(piece.font, piece.text)
            if piece.actual is not None:
                code.append("EMC")

    def _show(self, font_name: str, shown: str) -> None:
        """What reportlab's ``_formatText`` writes for unshaped text in a TrueType font (every
        font here), the split and escaped parts taken from this document's store."""
        text, doc = self.text, self.canvas._doc
        parts = self._parts.get((font_name, shown))
        if parts is None:
            escape = self.canvas._escape
            font = getFont(font_name)
            parts = [(subset, f"({escape(chunk)}) Tj") for subset, chunk in font.splitString(shown, doc)]
            if len(self._parts) >= _PARTS_KEPT:
                self._parts.clear()  # unique values (ids, notes) would otherwise grow it with the rows
            self._parts[(font_name, shown)] = parts
        for subset, operator in parts:
            if subset != text._curSubset:
                name = getFont(font_name).getSubsetInternalName(subset, doc)
                text._code.append(f"{name} {fp_str(text._fontsize)} Tf {fp_str(text._leading)} TL")
                text._curSubset = subset
            text._code.append(operator)

    def finish(self) -> None:
        self.canvas.drawText(self.text)

    def code(self) -> str:
        """The text object's operators, for a page that is already closed."""
        return self.text.getCode()


def draw_line(canvas, line: Line, x: float, y: float, size: float) -> None:
    """Draw ``line`` with its left end at ``x`` and its baseline at ``y``."""
    writer = LineWriter(canvas)
    writer.line(line, x, y, size)
    writer.finish()
