"""Right-to-left words in a wrapped PDF cell: levels resolved on the whole cell, each line reordered
with its share of them (UAX #9 rule L2 per line), and a right-to-left cell set against its right edge."""

from __future__ import annotations

import io
import re
import subprocess
import unicodedata
from html import unescape
from pathlib import Path

import pytest
from bidi import get_display

from app.rendering.pdf import PdfColumn, PdfLayout
from app.rendering.pdf.reordering import paragraph_levels, visual_order
from app.rendering.pdf.styles import PAD_X
from app.rendering.pdf.table_report import render_table_pdf
from tests.factories import hostile_values

HEBREW_NOTE = "Agreed at handover with the nurse in charge שרה כהן and then confirmed by the rota manager on Monday"
ARABIC_NOTE = "Handed to the ward clerk محمد الأمين then signed off"
# The table report: id, project, note, with widths 10/60/12.
COLUMNS = [PdfColumn("id", "ID", "integer", width=10), PdfColumn("project", "Project", width=60)]
NOTE = PdfColumn("note", "Note", width=12)
_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>')


def _pdf(columns: list[PdfColumn], rows: list[tuple]) -> bytes:
    out = io.BytesIO()
    render_table_pdf(columns, rows, PdfLayout(title="Handover"), out)
    return out.getvalue()


def _pdftotext(data: bytes, tmp_path: Path, *args: str) -> str:
    path = tmp_path / f"doc-{len(list(tmp_path.iterdir()))}.pdf"
    path.write_bytes(data)
    return subprocess.run(
        ["pdftotext", *args, "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True
    ).stdout.decode()


def _read(text: str) -> str:
    """Text as read: the bidi embeddings pdftotext adds left out, white space collapsed."""
    return " ".join("".join(ch for ch in text if unicodedata.category(ch) != "Cf").split())


def _words(data: bytes, tmp_path: Path) -> list[tuple[float, float, float, str]]:
    """Each word pdftotext finds as (x min, y min, x max, its glyphs left to right)."""
    found = _WORD.findall(_pdftotext(data, tmp_path, "-bbox"))
    return [(float(x0), float(y0), float(x1), unescape(word)) for x0, y0, x1, word in found]


@pytest.mark.parametrize("note", [HEBREW_NOTE, ARABIC_NOTE], ids=["hebrew", "arabic"])
def test_a_wrapped_cell_reads_back_in_the_order_it_was_written(tmp_path, note):
    """Old: "nurse in charge / and then שרה כהן" and "ward clerk محمد / then الأمين": words moved across the name."""
    data = _pdf([*COLUMNS, NOTE], [(1, "Ward rota", note)])
    assert note in _read(_pdftotext(data, tmp_path, "-raw"))


def test_the_name_is_drawn_left_of_the_words_after_it_on_its_line(tmp_path):
    """In a left-to-right paragraph the Hebrew name comes before "and then": its glyphs lie left of them."""
    words = _words(_pdf([*COLUMNS, NOTE], [(1, "Ward rota", HEBREW_NOTE)]), tmp_path)
    # The name is one span of ActualText: one word to pdftotext, its glyphs left to right.
    name = [word for word in words if "הרש" in word[3] or "שרה" in word[3]]
    and_then = [word for word in words if word[3] in ("and", "then")]
    assert len(name) == 1 and len(and_then) == 2
    assert {round(word[1]) for word in name} == {round(word[1]) for word in and_then}  # one line
    assert max(word[2] for word in name) < min(word[0] for word in and_then)


def test_a_right_to_left_cell_is_set_against_its_right_edge(tmp_path):
    """A note written right to left ends at the cell's right edge; a left-to-right one starts at its left."""
    columns = [PdfColumn("id", "ID", "integer", width=10), NOTE, PdfColumn("project", "Project", width=60)]
    words = _words(_pdf(columns, [(1, "אושר", "Ward rota"), (2, "Agreed", "Ward rota")]), tmp_path)
    heading = {word[3]: word for word in words}
    cell_left = heading["Note"][0]
    cell_right = heading["Project"][0] - 2 * PAD_X
    hebrew = next(word for word in words if word[3] in ("אושר", "רשוא"))
    assert hebrew[2] == pytest.approx(cell_right, abs=0.6)
    assert heading["Agreed"][0] == pytest.approx(cell_left, abs=0.1)


def test_each_line_is_reordered_with_the_paragraphs_levels_not_its_own():
    """The line "שרה כהן and then" of a left-to-right paragraph keeps the name first; on its own it would turn round."""
    base, levels = paragraph_levels(HEBREW_NOTE)
    start = HEBREW_NOTE.index("שרה")
    line = "שרה כהן and then"
    assert base == 0
    assert visual_order(line, levels[start : start + len(line)], base) == "ןהכ הרש and then"
    assert get_display(line) == "and then ןהכ הרש"


@pytest.mark.parametrize(
    "text",
    [
        *hostile_values(),
        "אב (x) [ג] 123 abc",
        "محمد 2024-01-02 الأمين",
        "x \u2068محمد · 3\u2069 rows",
        "שלום  ",
        "  שלום",
        "עברית 🙂 ok",
    ],
)
def test_a_line_that_is_its_whole_paragraph_is_ordered_as_python_bidi_orders_it(text):
    """Rule L2 over python-bidi's levels gives what its own reordering gives for one line."""
    for paragraph in text.splitlines() or [text]:
        base, levels = paragraph_levels(paragraph)
        assert visual_order(paragraph, levels, base) == get_display(paragraph)
