"""Joining rendered chunk PDFs into one document, with "Page N of M" on every page.

The renderer (app/rendering/pdf.py) writes a long table as several PDF files, one per chunk
of rows. They are joined here in order with pypdf, and only then, once M is known, every
page gets its footer.

The footer is a few PDF operators appended to each page's own content, not a page merged
onto it: merging makes pypdf parse every operator of a table page (tens of thousands of
Python objects a page), while appending only decompresses and recompresses the stream.
The page's content is wrapped in q/Q so that whatever graphics state it leaves behind
(colour, transformation) does not reach the footer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.rendering.pdf import MARGIN_SIDE

#: Where the footer's baseline sits, in points from the page's bottom edge, under the
#: renderer's bottom margin; its right end is at the side margin.
FOOTER_BASELINE = 22.0
FOOTER_FONT = "Helvetica"
FOOTER_FONT_SIZE = 8.0
FOOTER_GREY = 0.3
#: The name the footer's font has in every page's resources; reportlab and xhtml2pdf name
#: theirs F1, F2, ..., so it cannot collide.
FOOTER_FONT_KEY = "/RptFooter"


def join_files(paths: Sequence[Path], title: str, destination: Path) -> int:
    """Join the PDF files at ``paths`` in order into ``destination``, numbering every page.

    Returns the number of pages written.
    """
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_metadata({"/Title": title, "/Producer": "xhtml2pdf, reportlab and pypdf"})
    for path in paths:
        writer.append(str(path))
    _fix_astral_to_unicode(writer)
    _stamp_page_numbers(writer)
    with destination.open("wb") as handle:
        writer.write(handle)
    pages = len(writer.pages)
    writer.close()
    return pages


def footer_text(number: int, total: int) -> str:
    return f"Page {number:,} of {total:,}"


def _stamp_page_numbers(writer: Any) -> None:
    from pypdf.generic import ContentStream, DictionaryObject, NameObject
    from reportlab.pdfbase.pdfmetrics import stringWidth

    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject(f"/{FOOTER_FONT}"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    font_ref = writer._add_object(font)
    total = len(writer.pages)
    for number, page in enumerate(writer.pages, start=1):
        text = footer_text(number, total)
        box = page.mediabox
        x = float(box.right) - MARGIN_SIDE - stringWidth(text, FOOTER_FONT, FOOTER_FONT_SIZE)
        y = float(box.bottom) + FOOTER_BASELINE
        footer = (
            f"BT {FOOTER_FONT_KEY} {FOOTER_FONT_SIZE:g} Tf {FOOTER_GREY:g} g "
            f"{x:.2f} {y:.2f} Td ({text}) Tj ET"
        ).encode("ascii")
        contents = page.get_contents()
        original = contents.get_data() if contents is not None else b""
        stamped = ContentStream(None, writer)
        stamped.set_data(b"q\n" + original + b"\nQ\n" + footer + b"\n")
        page.replace_contents(stamped)
        page.compress_content_streams()
        _page_fonts(page)[NameObject(FOOTER_FONT_KEY)] = font_ref


def _page_fonts(page: Any) -> Any:
    """The /Font dictionary of the page's own resources, made where missing."""
    from pypdf.generic import DictionaryObject, NameObject

    resources = page.get("/Resources")
    if resources is None:
        resources = DictionaryObject()
        page[NameObject("/Resources")] = resources
    resources = resources.get_object()
    fonts = resources.get("/Font")
    if fonts is None:
        fonts = DictionaryObject()
        resources[NameObject("/Font")] = fonts
    return fonts.get_object()


_ASTRAL_DESTINATION = re.compile(rb"<([0-9A-Fa-f]{5,6})>")


def _utf16_hex(match: re.Match[bytes]) -> bytes:
    code = int(match.group(1), 16)
    if code > 0x10FFFF:
        return match.group(0)
    return b"<" + chr(code).encode("utf-16-be").hex().upper().encode("ascii") + b">"


def _fix_astral_to_unicode(writer: Any) -> None:
    """Write characters beyond U+FFFF in the fonts' ToUnicode maps as UTF-16 surrogate pairs.

    ReportLab writes them as five or six hex digits (``<1F642>``), which PDF readers take
    as two bytes and a half, so an emoji or a CJK Extension B character was extracted and
    copied as a wrong character. Codes in ReportLab's maps are two hex digits, so a five
    or six digit value can only be a destination.
    """
    seen: set[int] = set()
    for page in writer.pages:
        resources = page.get("/Resources")
        fonts = resources.get_object().get("/Font") if resources is not None else None
        if fonts is None:
            continue
        for reference in fonts.get_object().values():
            font = reference.get_object()
            to_unicode = font.get("/ToUnicode")
            if to_unicode is None:
                continue
            stream = to_unicode.get_object()
            if id(stream) in seen:
                continue
            seen.add(id(stream))
            data = stream.get_data()
            if _ASTRAL_DESTINATION.search(data):
                stream.set_data(_ASTRAL_DESTINATION.sub(_utf16_hex, data))
