"""Cancelling a running file in Chromium: a real worker is making it; the person presses "Cancel file" on the
file page, the page says it was cancelled and by whom, and the worker stops without storing anything."""

from __future__ import annotations

import pytest
from rq.job import Job

from app.models import TimesheetEntry
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.queue import redis_connection
from tests.fixtures.browser import sign_in
from tests.fixtures.workers import file_row, pending_uploads, wait_for

EXPORT_ROWS = 2000


@pytest.mark.browser
def test_person_cancels_a_running_file_from_its_page(
    export_scenario, isolated_storage, start_worker, hold_lock, live_server, browser_page, browser_console_errors
):
    export_scenario.add_timesheet_rows(EXPORT_ROWS)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    rows = hold_lock(f"LOCK TABLE {TimesheetEntry.__tablename__} IN ACCESS EXCLUSIVE MODE")
    start_worker(PROGRESS_INTERVAL="0")
    wait_for(rows.waiters, timeout=60, what="the worker's job to wait for its rows")
    page = browser_page
    sign_in(page, live_server, export_scenario.requester.email)
    page.goto(f"{live_server}/w/{export_scenario.workspace.id}/files/{export.id}")
    assert page.locator(f"#progress-{export.id} .status").text_content() == "running"

    page.get_by_role("button", name=f"Cancel file: {export.source_name}").click()

    page.get_by_text("The file was cancelled.").wait_for()
    assert page.locator(f"#progress-{export.id} .status").text_content() == "failed"
    assert page.get_by_text(f"Cancelled by {export_scenario.requester.name}.").is_visible()
    assert page.get_by_role("button", name=f"Cancel file: {export.source_name}").count() == 0
    rows.release()
    job = Job.fetch(file_row(export.id).outbox.job_id, connection=redis_connection())
    wait_for(lambda: job.get_status(refresh=True) == "finished", timeout=60, what="the worker to stop")
    assert job.return_value() == "superseded"
    assert file_row(export.id).failure_code == "cancelled"
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []
    assert browser_console_errors == []
