"""The streaming PDF table renderer, read back with poppler's pdftotext."""

from __future__ import annotations

import io
import re
import subprocess
import unicodedata
from collections import Counter
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from app.domain.files.file_warnings import CELL_CLIPPED, GLYPH_MISSING
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
)
from app.rendering.pdf.lines import CLIP_MARKER
from app.rendering.pdf.summary import render_summary_pdf
from app.rendering.pdf.table_blocks import ROWS_PER_BLOCK
from app.rendering.pdf.table_report import render_grouped_pdf, render_table_pdf
from app.seed_data import HOSTILE_VALUES

TITLE = "Quarterly client ledger"


def _hostile_values() -> list[str]:
    """The shared hostile values (a copy of shared/data/hostile-values.txt, escapes decoded)."""
    values = list(HOSTILE_VALUES)
    assert "line one\nline two" in values and "\t=1+1" in values and "\r=1+1" in values
    return values


def norm(text: str) -> str:
    """Text without format characters, whitespace collapsed.

    The format characters (bidi embeddings pdftotext adds around right-to-left runs, zero-width
    joiners) are layout, not content, and control characters other than line breaks are not
    printed in a PDF (they have no glyph). Letters are compared as they are: no normalisation.
    """
    text = "".join(ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) not in ("Cf", "Cc"))
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
    """A 1,000-row table of hostile values, read back."""
    hostile = _hostile_values()
    progress: list[tuple[int, int | None]] = []
    layout = PdfLayout(
        title=TITLE,
        subtitle="All clients",
        filters_text="Status is active",
        generated_at=datetime(2024, 6, 1, 12, 30),
        # Wide enough for the longest hostile value (an email address) on one line.
        orientation="landscape",
    )
    data, count = render(
        LEDGER_COLUMNS,
        (ledger_row(i, hostile) for i in range(LEDGER_ROWS)),
        layout,
        progress=lambda placed, total: progress.append((placed, total)),
        total=LEDGER_ROWS,
    )
    tmp = tmp_path_factory.mktemp("ledger")
    return {
        "data": data,
        "count": count,
        "progress": progress,
        "pages": pdftotext(data, tmp, "-layout"),
        "hostile": hostile,
    }


ROW_START = re.compile(r"^\s{0,24}(\d[\d,]*)\s")


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


def test_progress_moves_while_pages_are_laid_out(ledger):
    """Progress reports rows placed, of the total, page by page: rising, ending at every row."""
    placed = [done for done, _ in ledger["progress"]]
    assert {total for _, total in ledger["progress"]} == {LEDGER_ROWS}
    assert len(placed) >= len(ledger["pages"]) - 1
    assert placed == sorted(set(placed))
    assert 0 < placed[0] < LEDGER_ROWS and placed[-1] == LEDGER_ROWS
    numbers = [
        int(m.group(1).replace(",", ""))
        for page in ledger["pages"]
        for m in map(ROW_START.match, page.splitlines())
        if m
    ]
    assert numbers == list(range(1, LEDGER_ROWS + 1))


def test_rows_are_pulled_as_the_layout_reaches_them():
    """The renderer holds about one block of rows: when rows are placed, few more have been read."""
    pulled = 0

    def rows():
        nonlocal pulled
        for i in range(3000):
            pulled += 1
            yield (i, "x")

    seen: list[tuple[int, int]] = []
    columns = [PdfColumn("n", "N", "integer"), PdfColumn("s", "S")]
    render(columns, rows(), progress=lambda done, total: seen.append((done, pulled)))
    assert seen[-1][0] == 3000
    for done, pulled_then in seen:
        assert pulled_then <= done + 2 * ROWS_PER_BLOCK


def test_a_table_over_several_pages_reads_back_row_by_row(tmp_path):
    """A table spanning several pages and blocks extracts to every row, in order, cell by cell."""
    columns = [
        PdfColumn("n", "No.", "integer", width=1),
        PdfColumn("name", "Name", width=4),
        PdfColumn("amount", "Amount", "decimal", width=2),
        PdfColumn("when", "When", "datetime", width=2),
    ]
    rows = [
        (i, f"Client {i} Ødegaard", Decimal(i) * Decimal("1000.25"), datetime(2024, 3, 4, 5, i % 60))
        for i in range(1, 451)
    ]
    data, _ = render(columns, rows)

    def data_lines(data: bytes) -> list[str]:
        lines = []
        for page in pdftotext(data, tmp_path, "-layout"):
            lines.extend(norm(line) for line in page.splitlines() if ROW_START.match(line))
        return lines

    expected = [
        f"{i} Client {i} Ødegaard {format_number(amount)} {when.strftime('%d/%m/%Y %H:%M')}"
        for i, _, amount, when in rows
    ]
    assert data_lines(data) == expected
    assert len(PdfReader(io.BytesIO(data)).pages) >= 3


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


def test_a_document_embeds_only_the_fonts_its_text_needs(tmp_path):
    """Latin, Greek and Cyrillic alone embed only the primary font; one CJK name brings its font in."""
    columns = [PdfColumn("n", "N", "integer", width=1), PdfColumn("name", "Name", width=8)]
    latin = [(1, "Zoë Ødegaard-Łukasiewicz"), (2, "Дмитрий Шостакович"), (3, "Σωκράτης – €12")]
    alone, _ = render(columns, latin)
    mixed, _ = render(columns, [*latin, (4, "山田 太郎")])

    assert "NotoSans-Regular" in pdf_font_names(alone)
    assert "WenQuanYiMicroHei" not in pdf_font_names(alone)
    assert "WenQuanYiMicroHei" in pdf_font_names(mixed)
    assert [norm(name) in norm(" ".join(pdftotext(alone, tmp_path))) for _, name in latin] == [True] * 3


def test_emoji_beyond_the_basic_plane_extract_as_written(tmp_path):
    """Characters past U+FFFF come back from the text layer as themselves, not as garbage."""
    columns = [PdfColumn("s", "S")]
    data, _ = render(columns, [("🙂 emoji 👩‍💻",)])
    text = norm("\n".join(pdftotext(data, tmp_path, "-layout")))
    assert norm("🙂 emoji 👩‍💻") in text


def test_image_markup_in_a_value_is_printed_as_text(tmp_path):
    """<img src="file:///etc/passwd"> in data prints as text: values are never markup."""
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
        render(columns, rows(1000), max_rows=30)
    assert "XLSX" in str(raised.value)
    assert raised.value.max_rows == 30
    assert pulled == 31
    _, count = render(columns, rows(30), max_rows=30)
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
    bbox = subprocess.run(["pdftotext", "-bbox", "-", "-"], input=data, capture_output=True, check=True).stdout.decode()
    words = [
        (float(x0), float(x1), text)
        for x0, x1, text in re.findall(
            r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" '
            r'yMax="[\d.]+">([^<]*)</word>',
            bbox,
        )
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
    spec = {"A10": ("Retail clients", 7), "B20": ("Wholesale", 90), "C30": ("Дистрибьюторы", 4)}
    groups_rows = {
        code: [
            (code, f"{code} client {i}", i * 3 + len(code), Decimal(i * 1001 + 7) / Decimal(100)) for i in range(count)
        ]
        for code, (_, count) in spec.items()
    }
    groups = [Group(code, spec[code][0], iter(rows), row_count=len(rows)) for code, rows in groups_rows.items()]
    out = io.BytesIO()
    count = render_grouped_pdf(columns, groups, PdfLayout(title="Coded report"), out)
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
    # B20's 90 rows do not fit on the first page, so its heading repeats on the next.
    assert "B20 — Wholesale (continued)" in text


def _data_row_numbers(page: str) -> list[int]:
    return [int(m.group(1).replace(",", "")) for m in map(ROW_START.match, page.splitlines()) if m]


def test_a_page_break_between_two_blocks_of_a_group_opens_the_page_with_its_heading(tmp_path):
    """When a page ends exactly where one block of rows ends (ROWS_PER_BLOCK rows, the group's
    heading first) and the next page starts the next block, inside the group, that page opens
    with the group's heading marked "(continued)", as every page does that breaks inside a group."""
    columns = [
        PdfColumn("n", "No.", width=1),
        PdfColumn("name", "Name", width=4),
        PdfColumn("amount", "Amount", "decimal", width=2),
    ]
    last_of_first_block = ROWS_PER_BLOCK - 1
    # Two-line rows at the top move every page end up the list of rows; some count of them
    # makes a page end exactly at the first block's last row.
    for two_line in range(60):
        rows = [
            (str(i), f"row {i}" + ("\nsecond line" if i <= two_line else ""), Decimal(i))
            for i in range(1, ROWS_PER_BLOCK + 80)
        ]
        out = io.BytesIO()
        render_grouped_pdf(columns, [Group("G", "Main", rows)], PdfLayout(title="Blocks"), out)
        pages = pdftotext(out.getvalue(), tmp_path, "-layout")
        page_ends = [_data_row_numbers(page)[-1] for page in pages[:-1]]
        if last_of_first_block in page_ends:
            break
    else:
        pytest.fail("no page ended at the first block's last row")
    opened = pages[page_ends.index(last_of_first_block) + 1]
    lines = [norm(line) for line in opened.splitlines() if line.strip()]
    first_of_next_block = f"{ROWS_PER_BLOCK} row {ROWS_PER_BLOCK} {ROWS_PER_BLOCK}"
    assert lines[:3] == ["No. Name Amount", "G — Main (continued)", first_of_next_block]
    for page in pages[1:]:
        assert [norm(line) for line in page.splitlines() if line.strip()][1] == "G — Main (continued)"


def test_a_block_of_rows_never_ends_with_a_group_heading():
    """A group heading that would fall last in a block keeps its first row in the block, so a
    page that ends where the block ends does not end with the heading."""
    from app.rendering.pdf.styles import Styles
    from app.rendering.pdf.table_blocks import Placement, row_blocks
    from app.rendering.pdf.table_rows import Table, grouped_rows

    columns = [PdfColumn("name", "Name", width=4), PdfColumn("amount", "Amount", "decimal")]
    table = Table(columns, PdfLayout(title="T"), 500.0, Styles(), Counter())
    # The first group's heading, rows and subtotal fill a block but its last row: B's heading.
    first = [(f"a{i}", 1) for i in range(ROWS_PER_BLOCK - 3)]
    groups = [Group("A", "First", first), Group("B", "Second", [("b", 2), ("c", 3)])]
    blocks = list(row_blocks(grouped_rows(table, groups), 500.0, Placement(None, None), None))
    assert [block.rows[-1].kind for block in blocks] == ["data", "total"]
    assert [row.kind for row in blocks[0].rows[-3:]] == ["subtotal", "heading", "data"]


def test_a_total_label_on_a_line_of_its_own_never_ends_a_page():
    """When the first column is a number, a subtotal's label has a line of its own above the
    figures: where only the label would fit, it goes over to the next page with them."""
    from app.rendering.pdf.styles import Styles
    from app.rendering.pdf.table_blocks import Placement, RowBlock
    from app.rendering.pdf.table_rows import Table

    columns = [PdfColumn("amount", "Amount", "decimal"), PdfColumn("name", "Name", width=4)]
    table = Table(columns, PdfLayout(title="T"), 500.0, Styles(), Counter())
    data = table.data((Decimal(1), "x"))
    label, figures = table.totals("subtotal", "Subtotal A · 1 row", {"amount": Decimal(1)})
    block = RowBlock([data, label, figures], 500.0, Placement(None, None))
    here, there = block.split(500.0, data.height + label.height + 1)
    assert here.rows == [data]
    assert there.rows == [label, figures]


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
    for expected in [
        "Summary",
        "June",
        "Clients",
        "12,345",
        "Revenue",
        "98,765.40",
        "Yes",
        "Nordics",
        "Orders by region",
        "North",
        "120",
        "South",
        "80.5",
        "Έβρος",
        "Refunds",
        "-40",
        "Page 1 of 1",
    ]:
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
    data, _ = render([PdfColumn("a", "A")], [("x",)], PdfLayout(title="L", page_size="Letter", orientation="landscape"))
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
    assert format_value(PdfColumn("d", "D", "datetime"), datetime(2024, 12, 31, 8, 0), layout) == ("12/31/2024 08:00")
    assert format_value(PdfColumn("d", "D", "datetime"), date(2024, 12, 31), layout) == "12/31/2024"
    assert format_value(PdfColumn("i", "I", "integer"), 1000, layout) == "1,000"
    assert format_value(PdfColumn("t", "T"), None, layout) == ""


def test_equal_values_that_print_apart_each_print_as_they_are(tmp_path):
    """A table lays out a column's repeated values once; values that are equal but print apart
    (a Decimal's places, an int and a float) still print each as it is, on every row."""
    amounts = [Decimal("1.5"), Decimal("1.50"), 1, 1.0, Decimal("1.5"), Decimal("1.50"), True]
    data, _ = render(
        [PdfColumn("n", "No.", "integer"), PdfColumn("amount", "Amount", "decimal")],
        list(enumerate(amounts, start=1)),
    )
    words = [line.split() for line in pdftotext(data, tmp_path, "-layout")[0].splitlines()]
    printed = {int(row[0]): row[1] for row in words if len(row) == 2 and row[0].isdigit()}
    assert printed == {1: "1.5", 2: "1.50", 3: "1", 4: "1.0", 5: "1.5", 6: "1.50", 7: "1"}


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


# --------------------------------------------------------------------------- every script, exact cells

SCRIPT_NAMES = {
    "Devanagari": ("प्रिया शर्मा", "NotoSansDevanagari-Regular"),
    "Thai": ("สมชาย ใจดี", "NotoSansThai-Regular"),
    "Georgian": ("ნინო ბერიძე", "NotoSansGeorgian-Regular"),
    "Armenian": ("Արամ Խաչատրյան", "NotoSansArmenian-Regular"),
    "Bengali": ("অমিত রায়", "NotoSansBengali-Regular"),
    "Tamil": ("தமிழ் செல்வி", "NotoSansTamil-Regular"),
    "Arabic": ("محمد الأمين", "NotoSansArabic-Regular"),
    "Hebrew": ("שׂרה כהן", "NotoSansHebrew-Regular"),
}


def test_every_script_of_the_demo_data_prints_with_its_own_font_and_reads_back(tmp_path):
    """Devanagari, Thai, Georgian, Armenian, Bengali, Tamil, Arabic and Hebrew names print in
    their script's font, nothing is counted missing, and the text layer gives each name as written
    (Arabic and Hebrew in logical order)."""
    warnings: Counter = Counter()
    columns = [PdfColumn("script", "Script", width=2), PdfColumn("name", "Name", width=5)]
    out = io.BytesIO()
    render_table_pdf(
        columns,
        [(script, name) for script, (name, _) in SCRIPT_NAMES.items()],
        PdfLayout(title="Scripts"),
        out,
        warnings=warnings,
    )
    data = out.getvalue()
    lines = [norm(line) for line in "\n".join(pdftotext(data, tmp_path, "-layout")).splitlines()]
    fonts = pdf_font_names(data)
    for script, (name, font) in SCRIPT_NAMES.items():
        assert f"{script} {norm(name)}" in lines, f"{script}: {name!r} does not read back"
        assert font in fonts
    assert warnings[GLYPH_MISSING] == 0


# pdftotext wraps each right-to-left run it outputs in RLE/LRE ... PDF (U+202B, U+202A, U+202C):
# those come from poppler's own reordering, not from the PDF, and are all that is taken out.
POPPLER_EMBEDDINGS = {0x202A: None, 0x202B: None, 0x202C: None}


@pytest.mark.parametrize("mode", [(), ("-layout",), ("-raw",)], ids=["reading", "layout", "raw"])
def test_arabic_and_hebrew_extract_as_their_own_letters_in_logical_order(tmp_path, mode):
    """pdftotext gives an Arabic and a Hebrew name exactly as written, letter for letter (no
    presentation forms, no normalisation), in logical order: in reading, layout and raw mode."""
    arabic, hebrew = SCRIPT_NAMES["Arabic"][0], SCRIPT_NAMES["Hebrew"][0]
    out = io.BytesIO()
    render_table_pdf(
        [PdfColumn("name", "Name")], [(arabic,), (hebrew,), ("Zoë Ødegaard",)], PdfLayout(title="Right to left"), out
    )
    lines = [
        " ".join(line.translate(POPPLER_EMBEDDINGS).split())
        for line in "\n".join(pdftotext(out.getvalue(), tmp_path, *mode)).splitlines()
    ]
    assert arabic in lines
    assert hebrew in lines


def test_indic_text_is_shaped_not_drawn_letter_by_letter():
    """HarfBuzz forms the conjunct of प्र: the line draws fewer glyphs than it has characters."""
    from app.rendering.pdf.lines import TextStyle

    line = TextStyle(bold=False, size=8, leading=10).line("प्रिया", Counter())
    (piece,) = line.pieces
    assert piece.actual == "प्रिया"
    assert len(piece.text.__shapeData__) < len("प्रिया")


def test_a_character_no_font_has_is_counted_and_kept_in_the_text_layer(tmp_path):
    """Each Ethiopic letter (no committed font draws them) counts once as glyph_missing, and so
    does the noncharacter U+FFFF, which NotoSans maps to its empty box; the text layer keeps the letters."""
    warnings: Counter = Counter()
    out = io.BytesIO()
    render_table_pdf(
        [PdfColumn("s", "S")], [("ሰላም \uffff end",), ("plain",)], PdfLayout(title="T"), out, warnings=warnings
    )
    assert warnings[GLYPH_MISSING] == 4
    assert "ሰላም" in "\n".join(pdftotext(out.getvalue(), tmp_path))


def test_an_emoji_is_drawn_with_the_symbols_font_and_not_counted(tmp_path):
    """🌈, a joined sequence and a heart print in Symbola's outlines, not as the replacement mark."""
    warnings: Counter = Counter()
    data, _ = render([PdfColumn("s", "S")], [("Team 🌈 👩‍💻 ❤",)], warnings=warnings)
    assert warnings[GLYPH_MISSING] == 0
    assert "Symbola" in pdf_font_names(data)
    assert norm("Team 🌈 👩‍💻 ❤") in norm("\n".join(pdftotext(data, tmp_path, "-layout")))
    assert "\ufffd" not in "\n".join(pdftotext(data, tmp_path, "-layout"))


@pytest.mark.parametrize("noncharacter", ["\uffff", "\ufffe", "\ufdd0", "\U0001ffff"])
def test_a_noncharacter_is_a_counted_missing_glyph(noncharacter):
    """No font draws a noncharacter, even one whose table maps it to the empty box (NotoSans: U+FFFF)."""
    from app.rendering.pdf.lines import TextStyle

    warnings: Counter = Counter()
    line = TextStyle(bold=False, size=8, leading=10).line(f"a{noncharacter}b", warnings)
    assert warnings == Counter({GLYPH_MISSING: 1})
    assert "".join(piece.text for piece in line.pieces) == "a\ufffdb"


def test_subtotals_and_totals_are_exact_decimals(tmp_path):
    """Float amounts such as 0.1 and 0.2 add up to 0.3 in the subtotal, grand total and add_to."""
    columns = [PdfColumn("label", "Label", width=3), PdfColumn("amount", "Amount", "decimal")]
    groups = [Group("X", "Floats", [("a", 0.1), ("b", 0.2)]), Group("Y", "More", [("c", 0.7)])]
    out = io.BytesIO()
    render_grouped_pdf(columns, groups, PdfLayout(title="Sums"), out)
    text = norm("\n".join(pdftotext(out.getvalue(), tmp_path, "-layout")))
    assert "Subtotal X · 2 rows 0.3" in text and "0.30000000000000004" not in text
    assert "Grand total · 3 rows 1.0" in text
    totals: dict = {}
    for value in (0.1, 0.2, Decimal("0.3")):
        pdf.add_to(totals, "amount", value)
    assert totals == {"amount": Decimal("0.6")}


def test_a_huge_note_is_clipped_with_a_marker_and_counted(tmp_path):
    """A 100,000-character note is cut at its bound, marked, counted; the PDF stays one page."""
    warnings: Counter = Counter()
    note = ("Lorem ipsum dolor sit amet " * 4000)[:100_000]
    out = io.BytesIO()
    render_table_pdf(
        [PdfColumn("n", "N", "integer", width=1), PdfColumn("note", "Note", width=6)],
        [(1, note), (2, "short")],
        PdfLayout(title="Notes"),
        out,
        warnings=warnings,
    )
    pages = pdftotext(out.getvalue(), tmp_path, "-layout")
    assert len(pages) == 1
    assert CLIP_MARKER in pages[0] and "short" in pages[0]
    assert warnings[CELL_CLIPPED] == 1


def words_with_boxes(data: bytes) -> list[tuple[float, float, str]]:
    bbox = subprocess.run(["pdftotext", "-bbox", "-", "-"], input=data, capture_output=True, check=True).stdout
    return [
        (float(x0), float(x1), text)
        for x0, x1, text in re.findall(
            r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" '
            r'yMax="[\d.]+">([^<]*)</word>',
            bbox.decode(),
        )
    ]


def test_an_email_address_wraps_at_its_punctuation_within_its_column():
    """A long address breaks after its dots, @ and hyphens, every piece inside the column."""
    email = "someone.with.a.very.long.address@subdomain.example-hospital-trust.example"
    columns = [PdfColumn("email", "Email", width=1), PdfColumn("other", "Other", width=3)]
    out = io.BytesIO()
    render_table_pdf(columns, [(email, "x")], PdfLayout(title="Emails"), out)
    content = 595.28 - 2 * pdf.MARGIN_SIDE
    column_right = pdf.MARGIN_SIDE + content / 4
    pieces = [
        w
        for w in words_with_boxes(out.getvalue())
        if w[2] not in {"Email", "Other", "x", "Emails"} and not w[2].startswith("Page") and w[2] not in {"1", "of"}
    ]
    assert "".join(text for _, _, text in pieces) == email
    assert len(pieces) > 1
    assert all(x1 <= column_right + 0.5 for _, x1, _ in pieces)
    assert all(text[-1] in ".@-" for _, _, text in pieces[:-1])


def test_year_one_prints_with_four_digits(tmp_path):
    """Year 1 is 0001, in the formatter and on the page."""
    assert format_date(date(1, 1, 1), "%d/%m/%Y") == "01/01/0001"
    assert format_datetime(datetime(1, 2, 3, 4, 5), "%Y-%m-%d %H:%M") == "0001-02-03 04:05"
    data, _ = render([PdfColumn("d", "Day", "date")], [(date(1, 1, 1),)])
    assert "01/01/0001" in "\n".join(pdftotext(data, tmp_path))


def test_leading_spaces_are_kept():
    """A value's leading spaces indent it: it starts four spaces right of an unindented one."""
    data, _ = render([PdfColumn("s", "S")], [("    indented",), ("flush",)])
    starts = {text: x0 for x0, _, text in words_with_boxes(data)}
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from app.rendering.pdf.fonts import font_set

    four_spaces = stringWidth("    ", font_set().primary.name, 8)
    assert abs(starts["indented"] - starts["flush"] - four_spaces) < 0.5


def test_the_primary_font_has_a_glyph_for_every_character_it_is_trusted_with():
    """Every assigned character the fast path gives the primary font unchecked is in that font."""
    from app.rendering.pdf.fonts import font_set
    from app.rendering.pdf.lines import _PRIMARY_ONLY

    glyphs = font_set().primary.glyphs
    trusted = (chr(code) for code in range(0x10000) if _PRIMARY_ONLY.fullmatch(chr(code)))
    assert _PRIMARY_ONLY.fullmatch("Zoë Łódź Дмитрий Σωκράτης Nguyễn – “€1,5” …")
    assert [ch for ch in trusted if unicodedata.category(ch) not in ("Cc", "Cn") and ord(ch) not in glyphs] == []


def test_a_repeated_value_is_counted_every_time_it_prints():
    """Laying out the same missing glyph twice counts it twice (layouts are reused, counts are not)."""
    warnings: Counter = Counter()
    out = io.BytesIO()
    render_table_pdf([PdfColumn("s", "S")], [("ሰ",), ("ሰ",), ("ሰ",)], PdfLayout(title="T"), out, warnings=warnings)
    assert warnings[GLYPH_MISSING] == 3


# --------------------------------------------------------------------------- hostile values in every kind of report

# The characters of the hostile values that no committed font draws: two control characters
# (Symbola draws the emoji).
NO_FONT_HAS = ["\x01", "\x1f"]


def _render_hostile(kind: str, values: list[str], warnings: Counter) -> tuple[bytes, int]:
    """``values`` in a report of ``kind``; returns the PDF and how often each value prints."""
    out = io.BytesIO()
    layout = PdfLayout(title="Hostile values")
    if kind == "table":
        render_table_pdf(
            [PdfColumn("n", "N", "integer", width=1), PdfColumn("v", "Value", width=8)],
            list(enumerate(values, start=1)),
            layout,
            out,
            warnings=warnings,
        )
        return out.getvalue(), 1
    if kind == "coded":
        # Each value is a group's description (in its heading) and its only row's text.
        groups = [Group(f"G{i}", value, [(value, i)]) for i, value in enumerate(values, start=1)]
        render_grouped_pdf(
            [PdfColumn("v", "Value", width=6), PdfColumn("n", "N", "integer", width=1)],
            groups,
            layout,
            out,
            warnings=warnings,
        )
        return out.getvalue(), 2
    # A figure's label and a chart bar's label.
    render_summary_pdf(
        layout,
        [(value, i) for i, value in enumerate(values, start=1)],
        [(value, i) for i, value in enumerate(values, start=1)],
        out,
        chart_title="Chart",
        warnings=warnings,
    )
    return out.getvalue(), 2


@pytest.mark.parametrize("kind", ["table", "coded", "summary"])
def test_every_hostile_value_prints_in_every_kind_of_report(tmp_path, kind):
    """Each hostile value is in the PDF's text layer as written (white space aside), as often as
    it prints; the characters no font has are each counted as glyph_missing every time, and
    nothing else is."""
    values = _hostile_values()
    warnings: Counter = Counter()
    data, prints = _render_hostile(kind, values, warnings)
    # "raw" keeps a wrapped value's lines together, in the order they are drawn.
    text = "".join("\n".join(pdftotext(data, tmp_path, "-raw")).translate(POPPLER_EMBEDDINGS).split())
    for value in values:
        assert text.count("".join(value.split())) >= prints, f"{value!r} does not print {prints} times"
    missing = sum(value.count(char) for value in values for char in NO_FONT_HAS)
    assert warnings == Counter({GLYPH_MISSING: missing * prints})


SPACES_SOME_FONTS_LACK = ["Ann\u3000Lee", "Ogham\u1680space", "محمد\u2009الأمين", "山田\u202f太郎"]


def test_no_line_draws_the_empty_box_of_a_font_that_lacks_a_character():
    """A space a font lacks (ideographic in Latin, ogham, a thin space in Arabic, a narrow one in
    CJK) is drawn as a plain space and a control character as the replacement mark: no piece
    of a line draws a character its font has no glyph for, nor HarfBuzz's empty glyph."""
    from reportlab.pdfbase.pdfmetrics import getFont

    from app.rendering.pdf.lines import TextStyle

    style = TextStyle(bold=False, size=8, leading=10)
    for value in [*_hostile_values(), *SPACES_SOME_FONTS_LACK, "tab\x1dsep"]:
        for text in value.splitlines():
            for piece in style.line(text, Counter()).pieces:
                glyphs = getFont(piece.font).face.charToGlyph
                # Glyph 0 is the font's empty box; shaped text maps each glyph to a character.
                assert [ch for ch in piece.text if glyphs.get(ord(ch), 0) == 0] == [], (value, piece)


def test_spaces_and_controls_a_font_lacks_stay_in_the_text_layer(tmp_path):
    """The characters drawn as a plain space or a replacement mark are in the text layer as
    written; each control character counts as a missing glyph."""
    warnings: Counter = Counter()
    values = ["Ann\u3000Lee", "Ogham\u1680space", "bell\x07", "escape\x1b[0m"]
    out = io.BytesIO()
    render_table_pdf(
        [PdfColumn("v", "Value")], [(v,) for v in values], PdfLayout(title="Spaces"), out, warnings=warnings
    )
    lines = "\n".join(pdftotext(out.getvalue(), tmp_path, "-raw")).splitlines()
    for value in values:
        assert value in lines
    assert warnings == Counter({GLYPH_MISSING: 2})


def test_unicode_line_separators_break_the_line():
    """Vertical tab, form feed, next line and the line and paragraph separators start a new
    line, as a line feed does: neither dropped nor drawn."""
    from app.rendering.pdf.lines import TextStyle

    style = TextStyle(bold=False, size=8, leading=10)
    for separator in "\v\f\x85\u2028\u2029":
        assert len(style.lay_out(f"one{separator}two", 200.0, Counter())) == 2, repr(separator)


def test_half_a_surrogate_pair_prints_as_a_counted_replacement_mark(tmp_path):
    """A lone surrogate (text decoded with errors allowed) does not stop the PDF: it prints as
    the replacement mark and counts as a missing glyph."""
    warnings: Counter = Counter()
    data, _ = render([PdfColumn("v", "Value")], [("a\ud800b",)], warnings=warnings)
    assert "a\ufffdb" in "\n".join(pdftotext(data, tmp_path, "-raw"))
    assert warnings == Counter({GLYPH_MISSING: 1})


def test_bytes_that_are_not_utf8_print_as_their_escapes():
    """A byte value prints as text; a byte that is not UTF-8 prints as its escape, not a mark."""
    layout = PdfLayout(title="t")
    assert format_value(PdfColumn("b", "B"), b"caf\xc3\xa9 \xff", layout) == "café \\xff"


def test_a_continued_group_heading_counts_its_missing_glyphs_on_each_page_it_opens(tmp_path):
    """A group description with an Ethiopic letter counts once for its heading and once for each page its
    "(continued)" heading opens, and not for the pages it does not."""
    warnings: Counter = Counter()
    out = io.BytesIO()
    render_grouped_pdf(
        [PdfColumn("v", "Value")],
        [Group("A", "ሰ Team", [(f"row {i}",) for i in range(150)]), Group("B", "Other", [("x",)])],
        PdfLayout(title="Groups"),
        out,
        warnings=warnings,
    )
    pages = pdftotext(out.getvalue(), tmp_path, "-raw")
    continued = sum("A — ሰ Team (continued)" in page for page in pages)
    assert continued >= 2
    assert warnings == Counter({GLYPH_MISSING: 1 + continued})


def test_a_summary_chart_of_long_labels_runs_on_to_the_next_page(tmp_path):
    """Thirty bars with labels long enough to fill their lines do not fit one page: the chart
    goes on over the next, every bar printed."""
    labels = [f"Group {i:02d} " + "long label " * 200 for i in range(30)]
    out = io.BytesIO()
    render_summary_pdf(
        PdfLayout(title="Summary"),
        [("Rows", 30)],
        [(label, i) for i, label in enumerate(labels)],
        out,
        chart_title="By group",
    )
    pages = pdftotext(out.getvalue(), tmp_path, "-raw")
    assert len(pages) > 1
    text = "\n".join(pages)
    assert [f"Group {i:02d}" in text for i in range(30)] == [True] * 30


def test_a_right_to_left_group_description_keeps_the_row_count_after_it():
    """In the heading "A1 — محمد الأمين · 9 rows" the count stays where the sentence puts it, right
    of the Arabic name: the name is set apart for the bidi algorithm, which would otherwise read
    the number with the Arabic and print it before the name."""
    out = io.BytesIO()
    render_grouped_pdf(
        [PdfColumn("v", "Value")],
        [Group("A1", "محمد الأمين", [("x",), ("y",)], row_count=9)],
        PdfLayout(title="Headings"),
        out,
    )
    words = words_with_boxes(out.getvalue())
    arabic = [x1 for _, x1, text in words if _RIGHT_TO_LEFT.search(text)]
    (count,) = [x0 for x0, _, text in words if text == "9"]
    assert arabic and count > max(arabic)


_RIGHT_TO_LEFT = re.compile(r"[\u0590-\u08ff]")


def test_negative_chart_bars_run_left_of_a_zero_line_shared_with_the_positive_ones():
    """A chart of 30 and -10: the negative bar ends where the positive one starts (the zero
    line) and is a third as long, so its side and length both read as its value."""
    from pypdf.generic import ContentStream

    out = io.BytesIO()
    render_summary_pdf(PdfLayout(title="Chart"), [], [("up", 30), ("down", -10)], out)
    reader = PdfReader(io.BytesIO(out.getvalue()))
    operations = ContentStream(reader.pages[0].get_contents(), reader).operations
    (up_x, _, up_width, _), (down_x, _, down_width, _) = [
        [float(operand) for operand in operands] for operands, operator in operations if operator == b"re"
    ]
    assert down_x + down_width == pytest.approx(up_x)
    assert up_width == pytest.approx(3 * down_width)


def test_punctuation_that_opens_a_long_word_stays_with_it_when_the_word_breaks():
    """A formula-looking value wrapped in a narrow column does not leave its "=" alone on the
    first line; the lines still join to the value."""
    from app.rendering.pdf.lines import TextStyle

    value = '=HYPERLINK("http://example.invalid/?leak="&A1,"Click")'
    lines = TextStyle(bold=False, size=8, leading=10).lay_out(value, 50.0, Counter())
    texts = ["".join(piece.text for piece in line.pieces) for line in lines]
    assert "".join(texts) == value
    assert texts[0].startswith("=H")


def test_a_time_with_an_offset_prints_in_utc():
    """18:00 at +02:00 prints as 16:00 (and its date as the UTC date), as the CSV and XLSX writers
    give it: the page labels times UTC."""
    from datetime import timedelta, timezone

    moment = datetime(2026, 11, 2, 18, 0, tzinfo=timezone(timedelta(hours=2)))
    assert format_datetime(moment, "%d/%m/%Y %H:%M") == "02/11/2026 16:00"
    assert format_datetime("2026-11-02T00:30:00-01:00", "%d/%m/%Y %H:%M") == "02/11/2026 01:30"
    assert format_date(datetime(2026, 11, 3, 1, 0, tzinfo=timezone(timedelta(hours=2))), "%d/%m/%Y") == "02/11/2026"
    # The last minute of the calendar at -01:00 has no UTC time: it prints as written.
    last = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-1)))
    assert format_datetime(last, "%d/%m/%Y %H:%M") == "9999-12-31T23:59:00-01:00"


def test_numbers_dates_and_header_words_too_wide_for_their_column_are_set_smaller_not_broken():
    """Fourteen columns on a portrait page: each amount, date and time prints as one word inside
    its column (smaller), never as "-12,345." over "25"; each header word stays whole."""
    labels = [
        "Entry ID",
        "Employee",
        "Team",
        "Work date",
        "Hours worked",
        "Approved",
        "Note",
        "Project",
        "Recorded at",
        "Hourly rate",
        "Days",
        "Role",
        "Shift starts",
        "Amount owed",
    ]
    kinds = [
        "integer",
        "text",
        "text",
        "date",
        "decimal",
        "boolean",
        "text",
        "text",
        "datetime",
        "decimal",
        "decimal",
        "text",
        "datetime",
        "decimal",
    ]
    columns = [PdfColumn(f"c{i}", label, kind) for i, (label, kind) in enumerate(zip(labels, kinds, strict=True))]
    row = (
        1,
        "Ann Lee",
        "Team A",
        date(2026, 10, 1),
        Decimal("1234567.50"),
        True,
        "note",
        "Ward 1",
        datetime(2026, 11, 2, 18, 0),
        Decimal("-12345.25"),
        Decimal("5.5"),
        "Role",
        datetime(2026, 11, 2, 7, 0),
        Decimal("98765432.10"),
    )
    data, _ = render(columns, [row])
    words = words_with_boxes(data)
    texts = [text for _, _, text in words]
    for whole in ["01/10/2026", "1,234,567.50", "02/11/2026", "-12,345.25", "98,765,432.10", *" ".join(labels).split()]:
        assert whole in texts, whole
    column_width = (595.28 - 2 * pdf.MARGIN_SIDE) / len(columns)
    for x0, x1, text in words:
        if text in ("-12,345.25", "98,765,432.10"):
            column = int((x0 - pdf.MARGIN_SIDE) // column_width)
            assert x1 <= pdf.MARGIN_SIDE + (column + 1) * column_width + 0.5
