"""The whole query-to-spreadsheet path in headless Chromium, as a person uses it.

Sign in, build a saved query in the Queries builder (htmx), preview it, save it, request an
XLSX, watch the file page poll its progress until it succeeds, download it and compare every
cell with the database rows. The server is the real app over HTTP with CSRF protection on; the
file is made by a real RQ worker after a real scheduler dispatches it.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest
from sqlalchemy import select

from app.domain.sources.catalog import get_dataset
from app.models import ExportFile, SavedQuery, TimesheetEntry
from app.rendering.cells import format_cell
from app.rendering.dates import WorkspaceDates
from app.rendering.xlsx_cells import ooxml_text
from tests import factories
from tests.fixtures.browser import download_file, fresh, htmx_swap, request_file, sign_in, watch_file_succeed

FILES_PAGE_SCREENSHOT = Path("/tmp/rhythm-browser-files-page.png")
EXPORT_TIMEOUT_MS = 60_000
QUERY_NAME = "Hours with notes"
DATASET = get_dataset("timesheet_entries")
# Ticked in the dataset's order; then "Note" is moved up one place, before "Approved".
TICKED = ["id", "person_name", "work_date", "hours", "project", "approved", "note", "recorded_at"]
EXPECTED_COLUMNS = ["id", "person_name", "work_date", "hours", "project", "note", "approved", "recorded_at"]
# The filter keeps every hostile row (7.50 hours) and drops the two short entries added here.
MIN_HOURS = "4"
SHORT_ENTRY_HOURS = Decimal("2.25")


def expected_rows(workspace_id: int) -> list[tuple]:
    """The saved query's rows, read straight from the table: the admin sees every team."""
    table = TimesheetEntry.__table__
    return [
        tuple(row)
        for row in fresh(
            select(*[table.c[name] for name in EXPECTED_COLUMNS])
            .where(table.c.workspace_id == workspace_id, table.c.hours >= Decimal(MIN_HOURS))
            .order_by(table.c.person_name.desc(), table.c.id.asc())
        )
    ]


def spreadsheet_value(value, column_type: str):
    """What openpyxl should read back from a cell holding `value` of this catalog type."""
    if column_type == "text":
        return ooxml_text(value)  # exact text; openpyxl leaves OOXML's _xHHHH_ escapes as they are
    if column_type == "date":
        return datetime.combine(value, time())  # openpyxl reads date-formatted serials as datetimes
    if column_type == "datetime":
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def as_html_text(text: str) -> str:
    """Text as the browser's DOM holds it: HTML parsing turns CR and CRLF into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def build_and_save_query(page) -> None:
    """Use every part of the builder the export depends on, then save."""
    page.get_by_role("navigation", name="Workspace").get_by_role("link", name="Queries").click()
    page.get_by_role("link", name="New query").click()
    page.get_by_label("Name", exact=True).fill(QUERY_NAME)
    htmx_swap(page, lambda: page.locator('select[name="dataset"]').select_option("timesheet_entries"))
    for name in TICKED:
        htmx_swap(page, lambda name=name: page.locator(f'input[name="columns"][value="{name}"]').click())
        assert page.locator(f'input[name="columns"][value="{name}"]').is_checked()
    htmx_swap(page, lambda: page.get_by_role("button", name="Move Note up").click())
    chosen = page.locator("ol.column-list li.chosen input[name='columns']")
    assert [chosen.nth(i).get_attribute("value") for i in range(chosen.count())] == EXPECTED_COLUMNS

    htmx_swap(page, lambda: page.get_by_role("button", name="Add a filter").click())
    htmx_swap(page, lambda: page.locator('select[name="filters-0-column"]').select_option("hours"))
    htmx_swap(page, lambda: page.locator('select[name="filters-0-op"]').select_option("ge"))
    page.locator('input[name="filters-0-value"]').fill(MIN_HOURS)
    page.locator('select[name="sort-0-column"]').select_option("person_name")
    page.locator('select[name="sort-0-direction"]').select_option("desc")


def preview_text(value, column_type: str) -> str:
    """A preview cell: dates as the workspace writes them (its defaults here), the rest as the CSV export."""
    dates = WorkspaceDates()
    if column_type == "date":
        return dates.date_text(value)
    if column_type == "datetime":
        return dates.datetime_text(value)
    return format_cell(value, column_type)


def check_preview(page, rows: list[tuple]) -> None:
    """The htmx preview shows the rows as the CSV export writes each cell, headed by the labels, with
    dates in the workspace's format and the total row count."""
    htmx_swap(page, lambda: page.get_by_role("button", name="Preview", exact=True).click())
    preview = page.locator("#preview table.preview")
    headings = preview.locator("thead th")
    assert [headings.nth(i).text_content() for i in range(headings.count())] == [
        DATASET.column(name).label for name in EXPECTED_COLUMNS
    ]
    shown = preview.locator("tbody tr")
    assert shown.count() == len(rows)
    types = [DATASET.column(name).type for name in EXPECTED_COLUMNS]
    for index, row in enumerate(rows):
        cells = shown.nth(index).locator("td")
        assert [cells.nth(i).text_content() for i in range(cells.count())] == [
            as_html_text(preview_text(value, column_type)) for value, column_type in zip(row, types, strict=True)
        ], f"preview row {index + 1}"
    assert page.locator("#preview").get_by_text(f"{len(rows)} rows in all").is_visible()


def check_workbook(path: Path, rows: list[tuple]) -> None:
    """Labels, then descriptions, then every data cell equal to the database value, typed."""
    sheet = openpyxl.load_workbook(path).active
    columns = [DATASET.column(name) for name in EXPECTED_COLUMNS]
    assert sheet.max_column == len(columns)
    assert sheet.max_row == 2 + len(rows)
    read = list(sheet.iter_rows())
    # The workspace's time zone (UTC here) is named in the time stamp column's heading.
    assert [cell.value for cell in read[0]] == [
        f"{column.label} (UTC)" if column.type == "datetime" else column.label for column in columns
    ]
    assert [cell.value for cell in read[1]] == [column.description for column in columns]
    for number, (cells, row) in enumerate(zip(read[2:], rows, strict=True), start=3):
        for cell, value, column in zip(cells, row, columns, strict=True):
            expected = spreadsheet_value(value, column.type)
            assert cell.data_type != "f", f"{cell.coordinate} is a formula"
            assert cell.value == expected, f"{cell.coordinate} ({column.name}, row {number})"
            assert type(cell.value) is type(expected) or (
                column.type == "decimal" and isinstance(cell.value, int | float)
            ), f"{cell.coordinate} ({column.name}) is {type(cell.value).__name__}"


@pytest.mark.browser
def test_admin_builds_a_query_and_downloads_an_xlsx_equal_to_the_database_rows(
    world, live_server, browser_page, progress_polls, browser_console_errors, start_worker, tmp_path
):
    """A query built and exported in the browser gives an XLSX whose every cell equals the database row."""
    for day in (date(2026, 10, 30), date(2026, 10, 31)):
        factories.make_timesheet_entry(world.employees[0], hours=SHORT_ENTRY_HOURS, work_date=day, note="short")
    page = browser_page

    sign_in(page, live_server, world.admin.email)
    build_and_save_query(page)
    rows = expected_rows(world.workspace.id)
    assert set(factories.hostile_values()) <= {row[EXPECTED_COLUMNS.index("note")] for row in rows}
    assert SHORT_ENTRY_HOURS not in {row[EXPECTED_COLUMNS.index("hours")] for row in rows}
    check_preview(page, rows)

    page.get_by_role("button", name="Save query", exact=True).click()
    page.wait_for_url(re.compile(r"/queries/\d+$"))
    saved = fresh(select(SavedQuery).where(SavedQuery.workspace_id == world.workspace.id)).scalar_one()
    assert (saved.name, saved.columns, saved.filters, saved.sort) == (
        QUERY_NAME,
        EXPECTED_COLUMNS,
        [{"column": "hours", "op": "ge", "value": MIN_HOURS}],
        [{"column": "person_name", "direction": "desc"}],
    )

    page.get_by_label("Excel (XLSX)").check()
    page.get_by_label("Heading row").select_option("labels")
    page.get_by_label("Add a row of column descriptions under the headings").check()
    export = request_file(page, ExportFile.source_query_id == saved.id)
    watch_file_succeed(page, export.id, QUERY_NAME, start_worker, EXPORT_TIMEOUT_MS)
    assert progress_polls, "the file page never polled its progress"

    export, path = download_file(page, export.id, tmp_path)
    assert export.row_count == len(rows)
    check_workbook(path, rows)

    page.get_by_role("navigation", name="Workspace").get_by_role("link", name="Files").click()
    page.locator(f"#progress-{export.id} .status-succeeded").wait_for()
    page.screenshot(path=str(FILES_PAGE_SCREENSHOT), full_page=True)
    assert browser_console_errors == []
