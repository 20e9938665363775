"""Live updates never take a keyboard user's place: a control that has focus keeps it while the
page polls around it (the execution page, the Files list, a schedule's run history, the staff
queue page), and what a person typed stays typed. When an update removes the focused control (a
file's "Cancel file" once it settled or was cancelled, "Cancel this export" once the export
started), focus goes to the page's status line, which says what happened."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from app.domain.files import export_file
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, work_queue
from tests import factories
from tests.fixtures.browser import sign_in
from tests.fixtures.workers import fail_job_as_a_worker_would

POLLS = 3
# The focused element, as a person's screen reader would name it.
FOCUSED = "() => (document.activeElement.getAttribute('aria-label') || document.activeElement.textContent).trim()"


def wait_for_polls(page, count: int) -> None:
    """Wait until htmx has swapped in `count` more answers."""
    settled = page.evaluate("window.__htmxSettled")
    page.wait_for_function("n => window.__htmxSettled >= n", arg=settled + count, timeout=30_000)


@pytest.mark.browser
def test_cancel_this_export_keeps_focus_across_polls(world, live_server, browser_page, browser_console_errors):
    execution = factories.make_execution(world.workspace, world.admin)
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/executions/{execution.id}")
    page.get_by_role("button", name="Cancel this export").focus()

    wait_for_polls(page, POLLS)

    assert page.evaluate(FOCUSED) == "Cancel this export"
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_files_cancel_button_keeps_focus_across_polls(
    world, live_server, browser_page, progress_polls, browser_console_errors
):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    factories.make_export(query, world.member)
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files")
    page.get_by_role("button", name="Cancel file: Hours").focus()
    polled = len(progress_polls)

    wait_for_polls(page, POLLS)

    assert len(progress_polls) >= polled + POLLS
    assert page.evaluate(FOCUSED) == "Cancel file: Hours"
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_link_in_the_run_history_keeps_focus_across_polls(world, live_server, browser_page, browser_console_errors):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    schedule = factories.make_schedule(query, world.member, name="Morning hours")
    export = factories.make_export(query, world.member)
    factories.make_run(schedule, export, status="running")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}")
    page.locator("#runs").get_by_role("link", name=export.file_name).focus()

    wait_for_polls(page, POLLS)

    assert page.evaluate(FOCUSED) == export.file_name
    assert browser_console_errors == []


@pytest.mark.browser
def test_an_older_run_a_person_opened_stays_open_across_polls(world, live_server, browser_page, browser_console_errors):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    schedule = factories.make_schedule(query, world.member, name="Morning hours")
    older = [factories.make_run(schedule) for _ in range(4)]
    for run in older:
        factories.make_delivery(run, world.member)
    factories.make_run(schedule, factories.make_export(query, world.member), status="running")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}")
    details = page.locator(f"#run-{older[0].id} details")
    assert details.evaluate("d => d.open") is False
    page.locator(f"#run-{older[0].id}-more").focus()
    page.keyboard.press("Enter")
    assert details.evaluate("d => d.open") is True

    wait_for_polls(page, POLLS)

    assert details.evaluate("d => d.open") is True
    assert page.evaluate("document.activeElement.id") == f"run-{older[0].id}-more"
    assert browser_console_errors == []


@pytest.mark.browser
def test_a_reason_being_typed_on_the_queue_page_survives_its_polls(
    world, live_server, browser_page, browser_console_errors
):
    world.admin.is_staff, world.admin.staff_permissions = True, ["staff.view", "staff.execute"]
    factories.make_export(factories.make_query(world.workspace, world.admin, name="Hours"), world.admin)
    assert dispatch_pending(FILES) == 1
    job_id = work_queue(WorkPriority.INTERACTIVE).get_job_ids()[0]
    fail_job_as_a_worker_would(job_id, "WorkHorseKilled: 9")
    page = browser_page
    sign_in(page, live_server, world.admin.email, lands_on=r"/$")
    page.goto(f"{live_server}/staff/queues")
    reason = page.get_by_label("Reason (kept in the audit log)")
    reason.focus()
    page.keyboard.type("Worker restarted after the")

    wait_for_polls(page, 2)

    assert reason.input_value() == "Worker restarted after the"
    assert page.evaluate("document.activeElement.id") == f"reason-requeue-{job_id}"
    failed_jobs = page.get_by_role("region", name=re.compile("^Failed jobs of queue "))
    failed_jobs.focus()

    wait_for_polls(page, 2)

    assert page.evaluate(FOCUSED) == failed_jobs.get_attribute("aria-label")
    assert browser_console_errors == []


def queued_file_page(world, live_server, page) -> int:
    """A queued file's page open in the browser, signed in as its requester; returns the file's id."""
    query = factories.make_query(world.workspace, world.member, name="Hours")
    export = factories.make_export(query, world.member)
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files/{export.id}")
    return export.id


def status_line_has_focus_saying(page, text: str) -> None:
    page.locator("#status-line", has_text=text).wait_for(timeout=30_000)
    page.wait_for_function("() => document.activeElement.id === 'status-line'")


@pytest.mark.browser
def test_focus_goes_to_the_status_line_when_a_file_settles_under_its_cancel_button(
    world, live_server, browser_page, browser_console_errors
):
    page = browser_page
    export_id = queued_file_page(world, live_server, page)
    page.get_by_role("button", name="Cancel file: Hours").focus()

    export_file.succeed(export_id, export_file.start(export_id), size_bytes=15, row_count=1, retention_days=30)
    db.session.commit()

    status_line_has_focus_saying(page, "The file is ready to download.")
    assert browser_console_errors == []


@pytest.mark.browser
def test_enter_on_cancel_file_leaves_focus_on_the_status_line_saying_it_was_cancelled(
    world, live_server, browser_page, browser_console_errors
):
    page = browser_page
    queued_file_page(world, live_server, page)
    page.evaluate("window.__stillThisPage = true")
    page.get_by_role("button", name="Cancel file: Hours").focus()

    page.keyboard.press("Enter")

    status_line_has_focus_saying(page, "The file was cancelled.")
    assert page.get_by_text(f"Cancelled by {world.member.name}.").is_visible()
    assert page.evaluate("window.__stillThisPage === true")
    assert browser_console_errors == []


@pytest.mark.browser
def test_focus_goes_to_the_status_line_when_the_export_starts_under_its_cancel_button(
    world, live_server, browser_page, browser_console_errors
):
    execution = factories.make_execution(world.workspace, world.admin)
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/export/executions/{execution.id}")
    page.get_by_role("button", name="Cancel this export").focus()

    export_execution.start_attempt(execution.id, "worker-1", utcnow() + timedelta(minutes=5))
    db.session.commit()

    status_line_has_focus_saying(page, "The export is running")
    assert browser_console_errors == []
