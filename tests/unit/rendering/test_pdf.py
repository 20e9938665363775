"""The streaming PDF table renderer, read back with poppler's pdftotext."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from app.rendering import pdf
from app.rendering.pdf import (
    Group,
    PdfColumn,
    PdfLayout,
    PdfTooLarge,
    format_boolean,
    format_date,
    format_datetime,
    format_number,
    format_value,
    link_callback,
    render_grouped_pdf,
    render_summary_pdf,
    render_table_pdf,
)
from app.rendering.pdf_processes import RenderingProcesses
from app.seed_data import HOSTILE_VALUES

TITLE = "Quarterly client ledger"


def _hostile_values() -> list[str]:
    """The shared hostile values (a copy of shared/data/hostile-values.txt, escapes decoded)."""
    values = list(HOSTILE_VALUES)
    assert "line one\nline two" in values and "\t=1+1" in values and "\r=1+1" in values
    return values


def norm(text: str) -> str:
    """Compatibility-normalised text without format characters, whitespace collapsed.

    NFKC folds the Arabic presentation forms the shaper draws back to the letters written;
    the format characters (bidi embeddings, zero-width joiners) are layout, not content.
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())


def pdftotext(data: bytes, tmp_path: Path, *args: str) -> list[str]:
    """The text of each page of a PDF, as pdftotext prints it."""
    path = tmp_path / f"doc-{len(list(tmp_path.iterdir()))}.pdf"
    path.write_bytes(data)
    result = subprocess.run(
        ["pdftotext", *args, "-enc", "UTF-8", str(path), "-"],
        capture_output=True,
        check=True,
    )
    pages = result.stdout.decode("utf-8").split("\f")
    if pages and not pages[-1].strip():
        pages.pop()
    return pages


def render(columns, rows, layout=None, **kwargs) -> tuple[bytes, int]:
    out = io.BytesIO()
    count = render_table_pdf(columns, rows, layout or PdfLayout(title=TITLE), out, **kwargs)
    return out.getvalue(), count


LEDGER_COLUMNS = [
    PdfColumn("n", "No.", "integer", width=0.7),
    PdfColumn("value", "Value", "text", width=5.5),
    PdfColumn("amount", "Amount", "decimal", width=1.5),
    PdfColumn("day", "Day", "date", width=1.3),
    PdfColumn("flag", "Flag", "boolean", width=0.8),
]
LEDGER_ROWS = 1000
LEDGER_CHUNK = 50


def ledger_row(i: int, hostile: list[str]) -> tuple:
    return (
        i + 1,
        hostile[i % len(hostile)],
        Decimal(i * 1234 + 5) / Decimal(100),
        date(2024, 1 + i % 12, 1 + i % 28),
        i % 3 == 0,
    )


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """A 1,000-row table of hostile values rendered in chunks of 50 rows, read back."""
    hostile = _hostile_values()
    progress: list[int] = []
    layout = PdfLayout(
        title=TITLE,
        subtitle="All clients",
        filters_text="Status is active",
        generated_at=datetime(2024, 6, 1, 12, 30),
    )
    data, count = render(
        LEDGER_COLUMNS,
        (ledger_row(i, hostile) for i in range(LEDGER_ROWS)),
        layout,
        chunk_rows=LEDGER_CHUNK,
        progress=progress.append,
    )
    tmp = tmp_path_factory.mktemp("ledger")
    return {
        "data": data,
        "count": count,
        "progress": progress,
        "pages": pdftotext(data, tmp, "-layout"),
        "hostile": hostile,
    }


ROW_START = re.compile(r"^\s{0,8}(\d[\d,]*)\s")


def row_blocks(pages: list[str]) -> dict[int, str]:
    """Each data row's text: from the line that starts with its number to the next row's."""
    blocks: dict[int, list[str]] = {}
    current = None
    for page in pages:
        for line in page.splitlines():
            match = ROW_START.match(line)
            if match:
                current = int(match.group(1).replace(",", ""))
                blocks.setdefault(current, []).append(line)
            elif current is not None and line.strip() and not line.strip().startswith("Page "):
                if norm(line) == "No. Value Amount Day Flag":
                    current = None  # a repeated header row starts the next page
                else:
                    blocks[current].append(line)
        current = None
    return {number: "\n".join(lines) for number, lines in blocks.items()}


def test_title_block_is_on_the_first_page_only(ledger):
    """The title, subtitle, filters and generation time print on page 1 and nowhere else."""
    pages = ledger["pages"]
    assert len(pages) > 3
    first = norm(pages[0])
    assert TITLE in first
    assert "All clients" in first
    assert "Status is active" in first
    assert "Generated 01/06/2024 12:30" in first
    for page in pages[1:]:
        assert TITLE not in norm(page)
        assert "Status is active" not in norm(page)


def test_header_row_repeats_on_every_page(ledger):
    """Every page of the multi-page table starts its table with the column header row."""
    for number, page in enumerate(ledger["pages"], start=1):
        lines = [norm(line) for line in page.splitlines() if line.strip()]
        assert "No. Value Amount Day Flag" in lines, f"page {number} has no header row"


def test_every_page_is_numbered_page_n_of_m(ledger):
    """Each page carries "Page N of M" with its own N and the document's page count as M."""
    reader = PdfReader(io.BytesIO(ledger["data"]))
    total = len(reader.pages)
    assert total == len(ledger["pages"])
    assert reader.metadata.title == TITLE
    for number, page in enumerate(ledger["pages"], start=1):
        assert re.findall(r"Page ([\d,]+) of ([\d,]+)", page) == [(f"{number:,}", f"{total:,}")]


def test_every_value_of_a_thousand_row_table_is_present(ledger):
    """All 1,000 rows print, each with its hostile value, amount, date and Yes/No as written."""
    assert ledger["count"] == LEDGER_ROWS
    blocks = row_blocks(ledger["pages"])
    assert sorted(blocks) == list(range(1, LEDGER_ROWS + 1))
    hostile = ledger["hostile"]
    for i in range(LEDGER_ROWS):
        number, value, amount, day, flag = ledger_row(i, hostile)
        block = norm(blocks[number])
        for part in re.split(r"[\r\n]", value):
            assert norm(part) in block, f"row {number}: {part!r} missing from {block!r}"
        assert format_number(amount) in block
        assert day.strftime("%d/%m/%Y") in block
        assert ("Yes" if flag else "No") in block


def test_hostile_markup_prints_literally(ledger):
    """Tags, pdf: directives and template syntax in values are text, never markup."""
    text = norm("\n".join(ledger["pages"]))
    for literal in [
        "<pdf:nextpage />",
        "</td></tr></table>",
        "{{ 7*7 }}",
        "${7*7}",
        "<b>bold</b> & <i>italic</i>",
        '<img src="http://example.invalid/x.png">',
        '=HYPERLINK("http://example.invalid/?leak="&A1,"Click")',
    ]:
        assert literal in text


def test_chunks_each_start_a_page_and_progress_reports_each_chunk(ledger):
    """Rendering in chunks of 50 gives 20 passes, progress after each, rows in order."""
    assert ledger["progress"] == list(range(LEDGER_CHUNK, LEDGER_ROWS + 1, LEDGER_CHUNK))
    numbers = [
        int(m.group(1).replace(",", ""))
        for page in ledger["pages"]
        for m in map(ROW_START.match, page.splitlines())
        if m
    ]
    assert numbers == list(range(1, LEDGER_ROWS + 1))
    # Row 51 opens the second chunk, so it is the first row of its page.
    page_of_51 = next(p for p in ledger["pages"] if re.search(r"^\s*51\s", p, re.M))
    first_row = next(m for m in map(ROW_START.match, page_of_51.splitlines()) if m)
    assert first_row.group(1) == "51"


def test_chunked_render_reads_back_like_a_single_pass(tmp_path):
    """A table spanning several chunks extracts to the same rows as one rendered in one pass."""
    columns = [
        PdfColumn("n", "No.", "integer", width=1),
        PdfColumn("name", "Name", width=4),
        PdfColumn("amount", "Amount", "decimal", width=2),
        PdfColumn("when", "When", "datetime", width=2),
    ]
    rows = [
        (i, f"Client {i} Ødegaard", Decimal(i) * Decimal("1000.25"), datetime(2024, 3, 4, 5, i % 60))
        for i in range(1, 131)
    ]
    chunked, _ = render(columns, rows, chunk_rows=50)
    single, _ = render(columns, rows, chunk_rows=1000)

    def data_lines(data: bytes) -> list[str]:
        lines = []
        for page in pdftotext(data, tmp_path, "-layout"):
            lines.extend(norm(line) for line in page.splitlines() if ROW_START.match(line))
        return lines

    expected = [
        f"{i} Client {i} Ødegaard {format_number(amount)} {when.strftime('%d/%m/%Y %H:%M')}"
        for i, _, amount, when in rows
    ]
    assert data_lines(chunked) == expected
    assert data_lines(single) == expected
    assert len(PdfReader(io.BytesIO(chunked)).pages) >= 3


def test_rows_are_pulled_one_chunk_at_a_time():
    """Rendering in-process, the renderer has taken at most one row past a chunk when it reports it."""
    pulled = 0

    def rows():
        nonlocal pulled
        for i in range(120):
            pulled += 1
            yield (i, "x")

    seen: list[tuple[int, int]] = []
    columns = [PdfColumn("n", "N", "integer"), PdfColumn("s", "S")]
    render(columns, rows(), chunk_rows=40, workers=1, progress=lambda done: seen.append((done, pulled)))
    assert [done for done, _ in seen] == [40, 80, 120]
    for done, pulled_then in seen:
        assert pulled_then <= done + 1


def test_unicode_names_read_back(tmp_path):
    """Latin with diacritics, Cyrillic, Greek, Chinese, Japanese, Korean, Arabic and Hebrew read back."""
    names = [
        "Zoë Ødegaard-Łukasiewicz",
        "Nguyễn Thị Minh Khai",
        "Дмитрий Шостакович",
        "Σωκράτης Παπαδόπουλος",
        "山田 太郎",
        "王小明",
        "さくら カタカナ",
        "김민준",
        "محمد الأمين",
        "שׂרה כהן",
    ]
    columns = [PdfColumn("n", "N", "integer", width=1), PdfColumn("name", "Name", width=8)]
    data, _ = render(columns, list(enumerate(names, start=1)))
    text = norm("\n".join(pdftotext(data, tmp_path, "-layout")))
    for name in names:
        assert norm(name) in text
    fonts = pdf_font_names(data)
    assert "NotoSans-Regular" in fonts
    assert "WenQuanYiMicroHei" in fonts


def pdf_font_names(data: bytes) -> str:
    """pdffonts' listing of the fonts a PDF uses."""
    return subprocess.run(["pdffonts", "-"], input=data, capture_output=True, check=True).stdout.decode()


def test_a_chunk_the_primary_font_covers_is_rendered_without_the_fallback_fonts(tmp_path):
    """Latin, Greek and Cyrillic alone load only the primary font; one CJK name brings the fallbacks in."""
    columns = [PdfColumn("n", "N", "integer", width=1), PdfColumn("name", "Name", width=8)]
    latin = [(1, "Zoë Ødegaard-Łukasiewicz"), (2, "Дмитрий Шостакович"), (3, "Σωκράτης – €12")]
    alone, _ = render(columns, latin, chunk_rows=3, workers=1)
    mixed, _ = render(columns, [*latin, (4, "山田 太郎")], chunk_rows=3, workers=1)

    assert "NotoSans-Regular" in pdf_font_names(alone)
    assert "WenQuanYiMicroHei" not in pdf_font_names(alone)
    assert "WenQuanYiMicroHei" in pdf_font_names(mixed)
    assert [norm(name) in norm(" ".join(pdftotext(alone, tmp_path))) for _, name in latin] == [True] * 3


def test_the_primary_font_has_a_glyph_for_every_character_it_is_trusted_with():
    """Every assigned character PRIMARY_FONT_TEXT admits is in the installed primary font."""
    from reportlab.pdfbase.ttfonts import TTFont

    face = TTFont("primary", str(pdf.available_fonts()[0].path)).face
    admitted = (chr(code) for code in range(0x10000) if pdf.PRIMARY_FONT_TEXT.fullmatch(chr(code)))
    # Controls are dropped before rendering and unassigned code points print with no font.
    printable = [ch for ch in admitted if unicodedata.category(ch) not in ("Cc", "Cn")]
    assert pdf.PRIMARY_FONT_TEXT.fullmatch("Zoë Łódź Дмитрий Σωκράτης Nguyễn – “€1,5” …")
    assert [ch for ch in printable if ord(ch) not in face.charToGlyph] == []


def test_emoji_beyond_the_basic_plane_extract_as_written(tmp_path):
    """Characters past U+FFFF come back from the text layer as themselves, not as garbage."""
    columns = [PdfColumn("s", "S")]
    data, _ = render(columns, [("🙂 emoji 👩‍💻",)])
    text = norm("\n".join(pdftotext(data, tmp_path, "-layout")))
    assert norm("🙂 emoji 👩‍💻") in text


def test_link_callback_answers_only_for_the_products_own_files():
    """Known asset names resolve to files in the asset and font directories; nothing else does."""
    stylesheet = link_callback(pdf.STYLESHEET_URI)
    assert Path(stylesheet) == pdf.ASSET_DIR / "table.css"
    assert Path(stylesheet).is_file()
    assert Path(link_callback("asset:font/sans")).is_file()
    for hostile in [
        "file:///etc/passwd",
        "/etc/passwd",
        "../../../../etc/passwd",
        "http://example.invalid/x.png",
        "https://169.254.169.254/latest/meta-data/",
        "asset:../../etc/passwd",
        "asset:table.css/../../x",
        None,
    ]:
        answer = link_callback(hostile)
        assert answer == pdf.REFUSED_URI
        assert "passwd" not in answer and "http" not in answer


def test_resource_policy_refuses_the_network_and_foreign_files():
    """The policy given to xhtml2pdf denies http(s) and any path outside the asset roots."""
    from xhtml2pdf.config.resources import ResourceAccessError

    policy = pdf._resource_policy()
    with pytest.raises(ResourceAccessError):
        policy.check_url("http://example.invalid/x.png")
    with pytest.raises(ResourceAccessError):
        policy.check_path("/etc/passwd")
    policy.check_path(pdf.ASSET_DIR / "table.css")


def test_image_markup_in_a_value_is_printed_and_nothing_is_fetched(tmp_path, monkeypatch):
    """<img src="file:///etc/passwd"> in data prints as text; only the product's assets are asked for."""
    asked: list[str] = []

    def recording_callback(uri, rel=None):
        asked.append(uri)
        return link_callback(uri, rel)

    monkeypatch.setattr(pdf, "link_callback", recording_callback)
    values = [
        '<img src="file:///etc/passwd">',
        '<img src="http://127.0.0.1:9/x.png">',
        '<link rel="stylesheet" href="file:///etc/passwd">',
    ]
    data, _ = render([PdfColumn("s", "S")], [(v,) for v in values])
    text = norm("\n".join(pdftotext(data, tmp_path, "-layout")))
    for value in values:
        assert value in text
    assert "root:" not in text
    assert asked, "the stylesheet and fonts go through the callback"
    assert set(asked) <= set(pdf._asset_map())


def test_too_many_rows_raise_pdf_too_large_suggesting_xlsx():
    """Row max_rows + 1 raises PdfTooLarge at once; exactly max_rows renders."""
    pulled = 0

    def rows(n):
        nonlocal pulled
        for i in range(n):
            pulled += 1
            yield (i,)

    columns = [PdfColumn("n", "N", "integer")]
    with pytest.raises(PdfTooLarge) as raised:
        render(columns, rows(1000), max_rows=30, chunk_rows=10)
    assert "XLSX" in str(raised.value)
    assert raised.value.max_rows == 30
    assert pulled == 31
    _, count = render(columns, rows(30), max_rows=30, chunk_rows=10)
    assert count == 30


def test_long_unbroken_text_wraps_inside_its_column(tmp_path):
    """A 300-character word and a long URL wrap within their columns; numbers align right."""
    columns = [
        PdfColumn("a", "A", width=1),
        PdfColumn("b", "B", width=1),
        PdfColumn("c", "C", "decimal", width=1),
    ]
    word = "W" * 300
    url = "https://example.invalid/" + "segment" * 40
    data, _ = render(
        columns,
        [(word, "short", Decimal("1.50")), ("x", url, Decimal("1234567.891")), ("y", "z", -3)],
    )
    bbox = subprocess.run(
        ["pdftotext", "-bbox", "-", "-"], input=data, capture_output=True, check=True
    ).stdout.decode()
    words = [
        (float(x0), float(x1), text)
        for x0, x1, text in re.findall(r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" '
                                       r'yMax="[\d.]+">([^<]*)</word>', bbox)
    ]
    page_width = 595.28
    content = page_width - 2 * pdf.MARGIN_SIDE
    col_a_right = pdf.MARGIN_SIDE + content / 3
    col_b_right = pdf.MARGIN_SIDE + 2 * content / 3
    pieces_a = [w for w in words if set(w[2]) == {"W"}]
    assert "".join(t for _, _, t in pieces_a) == word
    assert len(pieces_a) > 3
    assert all(x1 <= col_a_right + 0.5 for _, x1, _ in pieces_a)
    pieces_b = [w for w in words if w[0] >= col_a_right and w[1] <= col_b_right + 0.5]
    assert "".join(t for _, _, t in pieces_b if t not in {"B", "short", "z"}) == url
    numbers = [w for w in words if w[2] in {"1.50", "1,234,567.891", "-3", "C"}]
    assert len(numbers) == 4
    assert max(x1 for _, x1, _ in numbers) - min(x1 for _, x1, _ in numbers) < 0.5
    assert all(x1 <= page_width - pdf.MARGIN_SIDE + 0.5 for _, x1, _ in words)


def test_grouped_render_prints_subtotals_and_grand_total(tmp_path):
    """Each group gets a heading with its count and a subtotal; the grand total sums them."""
    columns = [
        PdfColumn("code", "Code", width=1),
        PdfColumn("client", "Client", width=3),
        PdfColumn("qty", "Qty", "integer", width=1),
        PdfColumn("amount", "Amount", "decimal", width=1.5),
    ]
    spec = {"A10": ("Retail clients", 7), "B20": ("Wholesale", 23), "C30": ("Дистрибьюторы", 4)}
    groups_rows = {
        code: [
            (code, f"{code} client {i}", i * 3 + len(code), Decimal(i * 1001 + 7) / Decimal(100))
            for i in range(count)
        ]
        for code, (_, count) in spec.items()
    }
    groups = [Group(code, spec[code][0], iter(rows), row_count=len(rows)) for code, rows in groups_rows.items()]
    out = io.BytesIO()
    count = render_grouped_pdf(columns, groups, PdfLayout(title="Coded report"), out, chunk_rows=10)
    assert count == sum(len(rows) for rows in groups_rows.values())
    text = norm("\n".join(pdftotext(out.getvalue(), tmp_path, "-layout")))

    grand_qty, grand_amount = 0, Decimal(0)
    for code, rows in groups_rows.items():
        description, n = spec[code]
        qty = sum(r[2] for r in rows)
        amount = sum((r[3] for r in rows), Decimal(0))
        grand_qty += qty
        grand_amount += amount
        assert f"{code} — {norm(description)} · {n} rows" in text
        assert f"Subtotal {code} · {n} rows {qty:,} {format_number(amount)}" in text
    assert f"Grand total · {count} rows {grand_qty:,} {format_number(grand_amount)}" in text
    # B20 has 23 rows and chunks hold 10, so its heading repeats where a chunk starts in it.
    assert "B20 — Wholesale (continued)" in text


def test_grouped_render_prints_given_subtotals(tmp_path):
    """Subtotals supplied with a group are printed as given and feed the grand total."""
    columns = [PdfColumn("label", "Label", width=3), PdfColumn("amount", "Amount", "decimal")]
    groups = [
        Group("X", "First", [("a", Decimal("1.10")), ("b", Decimal("2.20"))], {"amount": Decimal("3.30")}),
        Group("Y", "Second", [("c", Decimal("10.00"))], {"amount": Decimal("10.00")}),
    ]
    out = io.BytesIO()
    render_grouped_pdf(columns, groups, PdfLayout(title="Given"), out)
    text = norm("\n".join(pdftotext(out.getvalue(), tmp_path, "-layout")))
    assert "Subtotal X · 2 rows 3.30" in text
    assert "Subtotal Y · 1 row 10.00" in text
    assert "Grand total · 3 rows 13.30" in text


def test_summary_prints_figures_and_chart(tmp_path):
    """Headline figures are formatted, every chart bar is labelled with its value."""
    out = io.BytesIO()
    render_summary_pdf(
        PdfLayout(title="Summary", subtitle="June"),
        [("Clients", 12345), ("Revenue", Decimal("98765.40")), ("Active", True), ("Region", "Nordics")],
        [("North", 120), ("South", Decimal("80.5")), ("Έβρος", 0), ("Refunds", -40)],
        out,
        chart_title="Orders by region",
    )
    pages = pdftotext(out.getvalue(), tmp_path, "-layout")
    assert len(pages) == 1
    text = norm(pages[0])
    for expected in ["Summary", "June", "Clients", "12,345", "Revenue", "98,765.40", "Yes", "Nordics",
                     "Orders by region", "North", "120", "South", "80.5", "Έβρος", "Refunds", "-40",
                     "Page 1 of 1"]:
        assert expected in text


def test_empty_table_renders_a_header_and_a_note(tmp_path):
    """No rows still gives a one-page PDF with the header row and a "No rows" note."""
    data, count = render([PdfColumn("a", "Alpha"), PdfColumn("b", "Beta", "integer")], iter(()))
    assert count == 0
    pages = pdftotext(data, tmp_path, "-layout")
    assert len(pages) == 1
    text = norm(pages[0])
    assert "Alpha Beta" in text and "No rows to show." in text and "Page 1 of 1" in text


def test_letter_landscape_page_size():
    """Letter landscape pages are 792 x 612 points."""
    data, _ = render([PdfColumn("a", "A")], [("x",)], PdfLayout(title="L", page_size="Letter",
                                                                  orientation="landscape"))
    page = PdfReader(io.BytesIO(data)).pages[0]
    assert (round(float(page.mediabox.width)), round(float(page.mediabox.height))) == (792, 612)


def test_a_row_of_the_wrong_length_is_an_error():
    """A row with more or fewer values than columns raises ValueError."""
    with pytest.raises(ValueError):
        render([PdfColumn("a", "A"), PdfColumn("b", "B")], [("only one",)])


def test_number_date_and_boolean_formatting():
    """Numbers get separators and keep their decimals; dates follow the format; booleans are Yes/No."""
    assert format_number(1234567) == "1,234,567"
    assert format_number(-1234) == "-1,234"
    assert format_number(Decimal("1234.50")) == "1,234.50"
    assert format_number(Decimal("0.000")) == "0.000"
    assert format_number(Decimal("-1234567.891")) == "-1,234,567.891"
    assert format_number(1234.5) == "1,234.5"
    assert format_number(0.1) == "0.1"
    assert format_number("1234.5") == "1,234.5"
    assert format_number("n/a") == "n/a"
    assert format_number("1,5") == "1,5"
    assert format_number(float("nan")) == "nan"
    assert format_number(None) == ""
    assert format_number(Decimal("1234.5"), thousands_separator=".", decimal_separator=",") == "1.234,5"
    assert format_date(date(2024, 3, 9), "%d/%m/%Y") == "09/03/2024"
    assert format_date(datetime(2024, 3, 9, 23, 59), "%Y-%m-%d") == "2024-03-09"
    assert format_date("2024-03-09", "%d.%m.%Y") == "09.03.2024"
    assert format_date("not a date", "%d/%m/%Y") == "not a date"
    assert format_datetime(datetime(2024, 3, 9, 7, 5), "%m/%d/%Y %H:%M") == "03/09/2024 07:05"
    assert format_datetime(date(2024, 3, 9), "%d %b %Y %H:%M", "%d %b %Y") == "09 Mar 2024"
    assert format_datetime("2024-03-09T07:05:00", "%d/%m/%Y %H:%M") == "09/03/2024 07:05"
    assert format_boolean(True) == "Yes"
    assert format_boolean(False) == "No"
    assert format_boolean("t") == "Yes"
    assert format_boolean(0) == "No"
    assert format_boolean(None) == ""
    layout = PdfLayout(title="t", date_format="%m/%d/%Y")
    assert format_value(PdfColumn("d", "D", "date"), date(2024, 12, 31), layout) == "12/31/2024"
    assert format_value(PdfColumn("d", "D", "datetime"), datetime(2024, 12, 31, 8, 0), layout) == (
        "12/31/2024 08:00"
    )
    assert format_value(PdfColumn("d", "D", "datetime"), date(2024, 12, 31), layout) == "12/31/2024"
    assert format_value(PdfColumn("i", "I", "integer"), 1000, layout) == "1,000"
    assert format_value(PdfColumn("t", "T"), None, layout) == ""


def test_text_to_html_escapes_and_keeps_line_breaks():
    """Markup is escaped, newlines become <br/>, tabs spaces and other control characters vanish."""
    assert pdf.text_to_html('<a href="x">&</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
    assert pdf.text_to_html("one\ntwo\r\nthree\rfour") == "one<br/>two<br/>three<br/>four"
    assert pdf.text_to_html("a\tb\x00c\x1bd") == "a bcd"


def test_column_and_layout_validation():
    """Unknown column types, alignments, page sizes and orientations are refused."""
    with pytest.raises(ValueError):
        PdfColumn("a", "A", "money")
    with pytest.raises(ValueError):
        PdfColumn("a", "A", align="justify")
    with pytest.raises(ValueError):
        PdfLayout(title="t", page_size="A3")
    with pytest.raises(ValueError):
        PdfLayout(title="t", orientation="sideways")


# --------------------------------------------------------------------------- rendering processes

PARALLEL_COLUMNS = [
    PdfColumn("n", "No.", "integer", width=1),
    PdfColumn("name", "Name", width=4),
    PdfColumn("amount", "Amount", "decimal", width=2),
    PdfColumn("day", "Day", "date", width=2),
]


def parallel_rows(count: int, *, fail_at: int | None = None):
    """``count`` rows; raises at row ``fail_at`` the way a dropped database connection would."""
    for i in range(1, count + 1):
        if i == fail_at:
            raise ConnectionError("the database connection was lost")
        yield (i, f"Client {i} Ødegaard 山田", Decimal(i) * Decimal("12.5"), date(2024, 1 + i % 12, 1 + i % 28))


def child_processes() -> list[int]:
    """The process ids of this process's live children."""
    pids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        pids += [int(pid) for pid in (task / "children").read_text().split()]
    return pids


def render_recording_processes(rows, **kwargs) -> tuple[bytes, list[int], list[int]]:
    """Render; return the PDF, the progress reported and how many child processes ran at each report."""
    progress: list[int] = []
    children: list[int] = []

    def report(done: int) -> None:
        progress.append(done)
        children.append(len(child_processes()))

    data, _ = render(PARALLEL_COLUMNS, rows, chunk_rows=40, progress=report, **kwargs)
    return data, progress, children


def test_rendering_processes_give_the_same_document_as_rendering_in_process(tmp_path):
    """Two rendering processes produce the pages, text and progress that one process does."""
    in_process, progress_one, children_one = render_recording_processes(parallel_rows(200), workers=1)
    parallel, progress_two, children_two = render_recording_processes(parallel_rows(200), workers=2)

    assert children_one == [0] * 5
    assert all(count >= 1 for count in children_two), "the chunks were rendered by other processes"
    assert progress_one == progress_two == [40, 80, 120, 160, 200]
    assert pdftotext(parallel, tmp_path, "-layout") == pdftotext(in_process, tmp_path, "-layout")
    one, two = PdfReader(io.BytesIO(in_process)), PdfReader(io.BytesIO(parallel))
    assert len(one.pages) == len(two.pages) >= 5
    for page_one, page_two in zip(one.pages, two.pages, strict=True):
        assert page_one.get_contents().get_data() == page_two.get_contents().get_data()
    assert child_processes() == []


def test_a_body_of_two_chunks_renders_in_process():
    """Two chunks are not worth starting processes for: they render here even with workers=2."""
    _, progress, children = render_recording_processes(parallel_rows(80), workers=2)
    assert progress == [40, 80]
    assert children == [0, 0]


def test_rendering_processes_hold_a_bounded_number_of_chunks():
    """With two processes, at most two chunks (plus one row) beyond those reported have been read."""
    pulled = 0

    def rows():
        nonlocal pulled
        for row in parallel_rows(200):
            pulled += 1
            yield row

    seen: list[tuple[int, int]] = []
    render(PARALLEL_COLUMNS, rows(), chunk_rows=40, workers=2, progress=lambda done: seen.append((done, pulled)))
    assert [done for done, _ in seen] == list(range(40, 201, 40))
    for done, pulled_then in seen:
        assert pulled_then <= done + 2 * 40 + 1


def test_pdf_too_large_while_processes_render_leaves_no_temporary_files(tmp_path, monkeypatch):
    """Row max_rows + 1 raises PdfTooLarge at once; the processes stop and every chunk file is removed."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pulled = 0

    def rows():
        nonlocal pulled
        for row in parallel_rows(1000):
            pulled += 1
            yield row

    with pytest.raises(PdfTooLarge):
        render(PARALLEL_COLUMNS, rows(), chunk_rows=40, max_rows=170, workers=2)
    assert pulled == 171
    assert list(tmp_path.iterdir()) == []
    assert child_processes() == []


def test_an_error_reading_rows_while_processes_render_reaches_the_caller(tmp_path, monkeypatch):
    """An exception from the rows mid-stream propagates as it is; the processes stop and temp files go."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    progress: list[int] = []
    with pytest.raises(ConnectionError, match="database connection was lost"):
        render(PARALLEL_COLUMNS, parallel_rows(400, fail_at=190), chunk_rows=40, workers=2, progress=progress.append)
    assert progress and progress[-1] < 190
    assert list(tmp_path.iterdir()) == []
    assert child_processes() == []


def test_an_error_in_a_rendering_process_reaches_the_caller(tmp_path):
    """A chunk that fails in a rendering process raises its error here, naming it."""
    with RenderingProcesses(2) as processes:
        ticket = processes.render(tmp_path / "removed.html", tmp_path / "removed.pdf")
        with pytest.raises(pdf.PdfRenderError, match="FileNotFoundError"):
            processes.wait(ticket)
    assert child_processes() == []


def test_a_rendering_process_that_dies_is_an_error_not_a_hang(tmp_path):
    """A rendering process killed mid-chunk (out of memory, say) raises PdfRenderError at once."""
    source = tmp_path / "chunk.html"
    source.write_bytes(b"<html><body><p>chunk</p></body></html>")
    with RenderingProcesses(1) as processes:
        (pid,) = processes.pids
        os.kill(pid, 9)
        ticket = processes.render(source, tmp_path / "chunk.pdf")
        with pytest.raises(pdf.PdfRenderError, match="ended"):
            processes.wait(ticket)
    assert child_processes() == []


def test_rendering_in_processes_keeps_the_pdf_libraries_out_of_the_caller(tmp_path):
    """With rendering processes, the caller never imports xhtml2pdf, reportlab or pypdf."""
    script = (
        "import io, sys\n"
        "from app.rendering.pdf import PdfColumn, PdfLayout, render_table_pdf\n"
        "out = io.BytesIO()\n"
        "rows = ((i, f'Client {i}') for i in range(120))\n"
        "columns = [PdfColumn('n', 'No.', 'integer'), PdfColumn('name', 'Name')]\n"
        "count = render_table_pdf(columns, rows, PdfLayout(title='T'), out, chunk_rows=40, workers=2)\n"
        "assert count == 120 and out.getvalue().startswith(b'%PDF')\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'xhtml2pdf', 'reportlab', 'pypdf'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[3]
    )
    assert result.stdout.strip() == "[]"


def test_worker_count_defaults_to_the_cpus_at_most_two_and_must_be_positive():
    """The default is between one and two processes; fewer than one is refused."""
    assert 1 <= pdf.default_workers() <= 2
    with pytest.raises(ValueError):
        render(PARALLEL_COLUMNS, parallel_rows(3), workers=0)
