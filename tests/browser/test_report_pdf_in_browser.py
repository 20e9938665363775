"""A coded report from form to PDF in headless Chromium, as a person uses it.

Sign in, build a `coded` report of a saved timesheet query in the Reports form (htmx), check
its preview, save it, request its PDF, watch the file page poll its progress until it
succeeds, download it and read it back with `pdftotext -layout`: the title block, the header
row and "Page N of M" on every page, each team's heading and subtotal equal to what SQL
computes, the grand total and the Unicode names. The server is the real app over HTTP with
CSRF protection on; the PDF is made by a real RQ worker after a real scheduler dispatches it.
"""

from __future__ import annotations

import re
import subprocess
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from app.models import ExportFile, Report, TimesheetEntry
from tests import factories
from tests.fixtures.browser import download_file, fresh, htmx_swap, request_file, sign_in, watch_file_succeed

REPORT_PAGE_SCREENSHOT = Path("/tmp/rhythm-browser-report-page.png")
EXPORT_TIMEOUT_MS = 90_000
QUERY_NAME = "Timesheet hours"
REPORT_NAME = "Hours by team"
TITLE = "Heures par équipe — Часы по командам — 勤務時間"
SUBTITLE = "Zoë’s ward managers, Северный корпус"
DESCRIPTIONS = {"Team A": "Day ward", "Team B": "Ночная смена"}
# The query's columns (factories.make_query's default); the report prints four of them, by team.
PRINTED = ["id", "person_name", "work_date", "hours"]
UNTICKED = ["team_name", "approved", "note"]
WIDTHS = {"id": "12", "person_name": "45"}
HEADINGS = ["Entry ID", "Employee", "Date", "Hours"]
# Letter, landscape, in points.
PAGE_WIDTH, PAGE_HEIGHT = 792, 612
ADDED_ROWS = 96
# The world's names in scripts pdftotext reads back: Latin with diacritics, Cyrillic, CJK.
UNICODE_NAMES = ["Zoë Ødegaard-Łukasiewicz", "Дмитрий Шостакович", "山田 太郎"]


def squeeze(text: str) -> str:
    """Text with every run of white space made one space: layout mode pads columns with spaces."""
    return " ".join(text.split())


def glyphs(text: str) -> str:
    """Text without white space, for names whose spacing pdftotext may change (CJK)."""
    return "".join(text.split())


def add_timesheet_rows(world) -> None:
    """Enough rows, over both teams and every name, that the report spans several pages."""
    for index in range(ADDED_ROWS):
        factories.make_timesheet_entry(
            world.employees[index % len(world.employees)],
            work_date=date(2026, 10, 1) + timedelta(days=index % 28),
            hours=Decimal(index % 37 + 1) / 4,
            note=f"added row {index}",
        )


def team_totals(workspace_id: int) -> list[tuple[str, int, Decimal]]:
    """Rows and SUM(hours) per team, computed in SQL: what each group's heading and subtotal must say."""
    table = TimesheetEntry.__table__
    return [
        tuple(row)
        for row in fresh(
            select(table.c.team_name, func.count(), func.sum(table.c.hours))
            .where(table.c.workspace_id == workspace_id)
            .group_by(table.c.team_name)
            .order_by(table.c.team_name)
        )
    ]


def first_rows(workspace_id: int, date_format: str, limit: int) -> list[list[str]]:
    """The report's first rows as printed: by team, then by id, the four columns formatted."""
    table = TimesheetEntry.__table__
    rows = fresh(
        select(*[table.c[name] for name in PRINTED])
        .where(table.c.workspace_id == workspace_id)
        .order_by(table.c.team_name, table.c.id)
        .limit(limit)
    )
    return [[str(entry_id), name, day.strftime(date_format), f"{hours:,.2f}"] for entry_id, name, day, hours in rows]


def fill_report_form(page) -> None:
    """Name, kind (htmx re-renders the layout), columns and widths, code column, descriptions, print."""
    page.get_by_role("navigation", name="Workspace").get_by_role("link", name="Reports").click()
    page.get_by_role("link", name="New report").click()
    page.locator('input[name="name"]').fill(REPORT_NAME)
    assert page.locator('select[name="source_query_id"] option:checked').text_content() == QUERY_NAME
    htmx_swap(page, lambda: page.locator('input[name="kind"][value="coded"]').check())
    for name in UNTICKED:
        page.locator(f'input[name="columns"][value="{name}"]').uncheck()
    ticked = page.locator('input[name="columns"]:checked')
    assert [ticked.nth(i).get_attribute("value") for i in range(ticked.count())] == PRINTED
    for name, width in WIDTHS.items():
        page.locator(f'input[name="width-{name}"]').fill(width)
    page.get_by_label("Code column").select_option("team_name")
    page.locator('textarea[name="code_descriptions"]').fill(
        "\n".join(f"{code} = {text}" for code, text in DESCRIPTIONS.items())
    )
    page.locator('input[name="title"]').fill(TITLE)
    page.locator('input[name="subtitle"]').fill(SUBTITLE)
    page.get_by_label("Page size").select_option("Letter")
    page.get_by_label("Orientation").select_option("landscape")


def check_preview(page, totals: list[tuple[str, int, Decimal]], rows: list[list[str]]) -> None:
    """The htmx preview shows the title block, the headings, the first group's heading and first rows."""
    htmx_swap(page, lambda: page.get_by_role("button", name="Preview", exact=True).click())
    preview = page.locator("#preview")
    assert preview.locator(".report-title").text_content() == TITLE
    assert preview.locator(".report-subtitle").text_content() == SUBTITLE
    assert "Letter, landscape" in preview.locator("p.hint").first.text_content()
    headings = preview.locator("table.report-table thead th")
    assert [headings.nth(i).text_content() for i in range(headings.count())] == HEADINGS
    team, count, _hours = totals[0]
    assert preview.locator("tr.group-heading").first.text_content() == f"{team} — {DESCRIPTIONS[team]} · {count} rows"
    shown = preview.locator("table.report-table tbody tr:not(.group-heading):not(.group-more):not(.subtotal)")
    assert shown.count() == len(rows)
    for index, row in enumerate(rows):
        cells = shown.nth(index).locator("td")
        assert [cells.nth(i).text_content() for i in range(cells.count())] == row, f"preview row {index + 1}"


def pdf_pages(path: Path) -> list[str]:
    """The PDF's text page by page, as `pdftotext -layout` reads it."""
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", "-layout", str(path), "-"], check=True, capture_output=True
    ).stdout.decode("utf-8")
    return [page for page in text.split("\f") if page.strip()]


def check_pdf(path: Path, totals: list[tuple[str, int, Decimal]]) -> None:
    """Letter landscape pages with the title block first, headers and page numbers on each, right totals."""
    assert [(round(p.mediabox.width), round(p.mediabox.height)) for p in PdfReader(path).pages] == [
        (PAGE_WIDTH, PAGE_HEIGHT)
    ] * len(PdfReader(path).pages)
    pages = pdf_pages(path)
    assert len(pages) >= 2, "the report should span several pages"
    assert glyphs(TITLE) in glyphs(pages[0]) and glyphs(SUBTITLE) in glyphs(pages[0])
    assert glyphs(TITLE) not in glyphs("".join(pages[1:])), "the title block belongs to the first page only"
    header = re.compile(r"\s+".join(map(re.escape, HEADINGS)))
    for number, page in enumerate(pages, start=1):
        assert header.search(page), f"no header row on page {number}"
        assert f"Page {number} of {len(pages)}" in page, f"no page number on page {number}"

    text = squeeze("\n".join(pages))
    for team, count, hours in totals:
        assert f"{team} — {DESCRIPTIONS[team]} · {count} rows" in text, f"no heading for {team}"
        assert f"Subtotal {team} · {count} rows {hours:,.2f}" in text, f"wrong subtotal for {team}"
    rows = sum(count for _, count, _ in totals)
    hours = sum(hours for _, _, hours in totals)
    assert f"Grand total · {rows} rows {hours:,.2f}" in text
    printed = glyphs(text)
    for name in UNICODE_NAMES:
        assert glyphs(name) in printed, name


@pytest.mark.browser
def test_admin_makes_a_coded_report_and_downloads_its_pdf_with_sql_subtotals(
    world, live_server, browser_page, progress_polls, browser_console_errors, start_worker, tmp_path
):
    """A coded report built and requested in the browser gives a PDF whose pages, headers and totals are right."""
    add_timesheet_rows(world)
    factories.make_query(world.workspace, world.admin, name=QUERY_NAME)
    workspace_id, date_format = world.workspace.id, world.workspace.date_format
    totals = team_totals(workspace_id)
    assert [team for team, _, _ in totals] == list(DESCRIPTIONS)
    page = browser_page

    sign_in(page, live_server, world.admin.email)
    fill_report_form(page)
    check_preview(page, totals, first_rows(workspace_id, date_format, 30))
    page.get_by_role("button", name="Save report").click()
    page.wait_for_url(re.compile(r"/reports/\d+$"))
    report = fresh(select(Report).where(Report.workspace_id == workspace_id)).scalar_one()
    assert (report.kind, report.code_column, report.code_descriptions, report.columns) == (
        "coded",
        "team_name",
        DESCRIPTIONS,
        [{"name": name, "width": int(WIDTHS[name]) if name in WIDTHS else None} for name in PRINTED],
    )
    assert (report.title, report.page_size, report.orientation) == (TITLE, "Letter", "landscape")

    assert page.get_by_label("PDF").is_checked()
    export = request_file(page, ExportFile.report_id == report.id)
    watch_file_succeed(page, export.id, REPORT_NAME, start_worker, EXPORT_TIMEOUT_MS)
    assert progress_polls, "the file page never polled its progress"

    export, path = download_file(page, export.id, tmp_path)
    assert export.row_count == sum(count for _, count, _ in totals)
    check_pdf(path, totals)

    page.get_by_role("link", name=REPORT_NAME).click()
    page.wait_for_url(re.compile(r"/reports/\d+$"))
    page.locator("#preview .report-title").wait_for()
    assert page.locator(".plain-list .status-succeeded").is_visible()
    page.screenshot(path=str(REPORT_PAGE_SCREENSHOT), full_page=True)
    assert browser_console_errors == []
