"""A schedule's delivery in headless Chromium, from the form to the file a recipient downloads.

An admin creates a daily XLSX schedule of a saved query with three recipients (two people of the
workspace ticked in the list, one outside address), presses "Run now" and watches the run
history (htmx polling) until the run has succeeded and every recipient row is submitted. The run
is dispatched by a real `flask scheduler` process and made and mailed by a real `rq` worker
through the aiosmtpd server; the download link is taken from a message that arrived there,
opened in a browser context with no sign-in, and the file it downloads is compared cell by cell
with the database rows.
"""

from __future__ import annotations

import re
from datetime import datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

import openpyxl
import pytest
from playwright.sync_api import Error as PlaywrightError
from sqlalchemy import select

from app.domain.sources.catalog import get_dataset
from app.extensions import db
from app.models import ExportFile, TimesheetEntry
from app.models.schedule import RecipientDelivery, Schedule, ScheduleRun
from app.rendering.xlsx_cells import ooxml_text
from tests import factories
from tests.fixtures.browser import fresh, sign_in

SCHEDULE_NAME = "Daily hours “Zoë” <b>&amp;"
QUERY_NAME = "Hours with notes"
EXTERNAL_ADDRESS = "Auditor@Example.org"
WORKSPACE_ZONE = "Europe/Paris"
COLUMNS = ["id", "person_name", "work_date", "hours", "project", "approved", "note", "recorded_at"]
DATASET = get_dataset("timesheet_entries")
DOWNLOAD_LINK = re.compile(r"(https?://\S+/d/[A-Za-z0-9_.\-]+)")
# The worker and the scheduler start cold on a loaded 2-core machine.
RUN_TIMEOUT_MS = 60_000


def expected_rows(workspace_id: int) -> list[tuple]:
    """The saved query's rows straight from the table: the owner is an admin and sees every team."""
    table = TimesheetEntry.__table__
    statement = (
        select(*[table.c[name] for name in COLUMNS])
        .where(table.c.workspace_id == workspace_id)
        .order_by(table.c.id.asc())
    )
    return [tuple(row) for row in fresh(statement)]


def spreadsheet_value(value, column_type: str):
    """What openpyxl reads back from a cell holding `value`, with time stamps in the workspace's zone."""
    if column_type == "text":
        return ooxml_text(value)
    if column_type == "date":
        return datetime.combine(value, time())
    if column_type == "datetime":
        return value.astimezone(ZoneInfo(WORKSPACE_ZONE)).replace(tzinfo=None)
    return value


def check_workbook(path: Path, rows: list[tuple]) -> None:
    """The labels row, then every data cell equal to the database value, typed; no formulas."""
    sheet = openpyxl.load_workbook(path).active
    columns = [DATASET.column(name) for name in COLUMNS]
    read = list(sheet.iter_rows())
    assert [cell.value for cell in read[0]] == [
        f"{column.label} ({WORKSPACE_ZONE})" if column.type == "datetime" else column.label for column in columns
    ]
    assert len(read) == 1 + len(rows)
    for number, (cells, row) in enumerate(zip(read[1:], rows, strict=True), start=2):
        for cell, value, column in zip(cells, row, columns, strict=True):
            expected = spreadsheet_value(value, column.type)
            assert cell.data_type != "f", f"{cell.coordinate} is a formula"
            assert cell.value == expected, f"{cell.coordinate} ({column.name}, row {number})"
            assert type(cell.value) is type(expected) or (
                column.type == "decimal" and isinstance(cell.value, int | float)
            ), f"{cell.coordinate} ({column.name}) is {type(cell.value).__name__}"


def fill_schedule_form(page, query_id: int, people: list) -> None:
    page.get_by_role("navigation", name="Workspace").get_by_role("link", name="Schedules").click()
    page.get_by_role("link", name="New schedule").first.click()
    page.get_by_label("Name", exact=True).fill(SCHEDULE_NAME)
    page.get_by_label("Saved query or report").select_option(f"query:{query_id}")
    page.get_by_label("Excel (XLSX)").check()
    page.get_by_label("Heading row of a query file").select_option("labels")
    page.get_by_label("How often").select_option("daily")
    page.get_by_label(re.compile(r"^Time \(every day")).fill("06:45")
    # Nobody is ticked at first; the schedule goes to two colleagues, found by the search box.
    for person in people:
        page.get_by_label("Find people").fill(person.email)
        page.locator(f"input[name=people][value='{person.id}']").check()
    page.get_by_label("Find people").fill("")
    page.get_by_label("Email addresses").fill(EXTERNAL_ADDRESS)
    page.get_by_label("Custom message").fill("Hello team,\nhere is today's file.")


def recipient_rows(page, run_id: int) -> list[dict[str, str]]:
    """The run's recipient table as shown: one dict of heading → cell text per row."""
    table = page.locator(f"#run-{run_id} table", has=page.locator("caption", has_text="Recipients"))
    headings = table.locator("thead th").all_text_contents()
    rows = table.locator("tbody tr").all()
    return [dict(zip(headings, row.locator("td").all_text_contents(), strict=True)) for row in rows]


def watch_run_settle(page, run_id: int) -> list[dict[str, str]]:
    """The run history polls until the run has succeeded; its recipient rows as shown then."""
    page.locator(f"#run-{run_id} h3 .status-succeeded").wait_for(timeout=RUN_TIMEOUT_MS)
    return recipient_rows(page, run_id)


def download_from_link(browser, url: str, directory: Path) -> tuple[str, Path]:
    """Open the link in a new context (no cookies, nobody signed in) and save what it downloads."""
    context = browser.new_context(accept_downloads=True)
    try:
        page = context.new_page()
        with page.expect_download() as download_info:
            # The response is an attachment: Chromium turns the navigation into a download and
            # reports the navigation itself as aborted.
            try:
                page.goto(url)
            except PlaywrightError as error:
                assert "Download is starting" in str(error) or "net::ERR_ABORTED" in str(error), str(error)
        download = download_info.value
        assert download.failure() is None
        path = directory / download.suggested_filename
        download.save_as(path)
        return download.suggested_filename, path
    finally:
        context.close()


@pytest.mark.browser
def test_scheduled_file_reaches_three_recipients_and_its_mailed_link_downloads_the_database_rows(
    world, live_server, browser_page, browser_console_errors, smtp_server, start_worker, start_scheduler, tmp_path
):
    """Run now delivers one message per recipient; the mailed link downloads an XLSX equal to the rows."""
    world.workspace.time_zone = WORKSPACE_ZONE
    owner = factories.make_member(world.workspace, role="admin", grants=["schedules.external_recipients"]).person
    query = factories.make_query(world.workspace, owner, name=QUERY_NAME, columns=COLUMNS)
    db.session.commit()
    # Cold starts overlap the sign-in and the form.
    start_worker(MAIL_URL=f"smtp://{smtp_server.host}:{smtp_server.port}", PUBLIC_URL=live_server)
    start_scheduler()
    page = browser_page

    sign_in(page, live_server, owner.email)
    fill_schedule_form(page, query.id, [world.member, world.scoped])
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    schedule = fresh(select(Schedule)).scalar_one()
    assert (schedule.name, schedule.format, schedule.timetable) == (
        SCHEDULE_NAME,
        "xlsx",
        {"kind": "daily", "time": "06:45", "zone": WORKSPACE_ZONE},
    )
    assert {(r.person_id, r.email) for r in schedule.recipients} == {
        (world.member.id, None),
        (world.scoped.id, None),
        (None, EXTERNAL_ADDRESS),
    }

    page.get_by_role("button", name="Run now").click()
    page.get_by_text("A run was started.").wait_for()
    run = fresh(select(ScheduleRun)).scalar_one()
    shown = watch_run_settle(page, run.id)

    run = fresh(select(ScheduleRun).where(ScheduleRun.id == run.id)).scalar_one()
    export = fresh(select(ExportFile).where(ExportFile.id == run.export_id)).scalar_one()
    rows = expected_rows(world.workspace.id)
    assert set(factories.hostile_values()) <= {row[COLUMNS.index("note")] for row in rows}
    assert (run.status, run.row_count, export.schedule_id, export.row_count) == (
        "succeeded",
        len(rows),
        schedule.id,
        len(rows),
    )
    assert [len(message.recipients) for message in smtp_server.messages] == [1, 1, 1]
    assert {message.message["Subject"].split(":")[0] for message in smtp_server.messages} == {SCHEDULE_NAME}
    received = sorted(address.lower() for message in smtp_server.messages for address in message.recipients)
    assert received == sorted([world.member.email, world.scoped.email, EXTERNAL_ADDRESS.lower()])

    # Every recipient row says its one message was submitted, without the server's raw Message-ID.
    assert [row["Status"] for row in shown] == ["submitted"] * len(smtp_server.messages)
    assert "Submission id" not in shown[0]
    assert {row["Recipient"] for row in shown} == {world.member.name, world.scoped.name, EXTERNAL_ADDRESS}

    external = next(m for m in smtp_server.messages if m.recipients == [EXTERNAL_ADDRESS])
    link = DOWNLOAD_LINK.search(external.part("text/plain")).group(1)
    assert link.startswith(f"{live_server}/d/")
    assert f'href="{link}"' in external.part("text/html")
    file_name, path = download_from_link(page.context.browser, link, tmp_path)
    assert file_name == export.file_name
    check_workbook(path, rows)

    delivery = fresh(
        select(RecipientDelivery).where(RecipientDelivery.run_id == run.id, RecipientDelivery.email == EXTERNAL_ADDRESS)
    ).scalar_one()
    assert delivery.download_count == 1
    page.reload()
    downloads = {row["Recipient"]: row["Downloads"] for row in recipient_rows(page, run.id)}
    assert downloads == {world.member.name: "0", world.scoped.name: "0", EXTERNAL_ADDRESS: "1"}
    assert browser_console_errors == []
