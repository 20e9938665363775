"""The staff queue health page in Chromium says what is known of a failed job's record, in plain
words: how long ago a running record's worker last renewed its lease (never that the worker is
alive: a killed worker's lease runs on until it lapses), and that a settled record has finished."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from app.domain.files import export_file
from app.extensions import db
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, work_queue
from tests import factories
from tests.fixtures.browser import sign_in
from tests.fixtures.workers import fail_job_as_a_worker_would

pytestmark = pytest.mark.browser


def _failed_job_of_a_file(export_scenario):
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    fail_job_as_a_worker_would(work_queue(WorkPriority.INTERACTIVE).get_job_ids()[0], "WorkHorseKilled: 9")
    return export


def _refusal_on_the_queue_page(page, live_server) -> str:
    staff = factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.view", "staff.execute"])
    sign_in(page, live_server, staff.email, lands_on=r"/staff/$")
    page.goto(f"{live_server}/staff/queues")
    return page.locator("#queues table.listing td span.hint").last.text_content() or ""


def test_a_running_files_refusal_gives_the_age_of_its_workers_last_lease_renewal(
    live_server, browser_page, export_scenario
):
    export = _failed_job_of_a_file(export_scenario)
    # The worker renewed its 30 s lease 10 s ago, then was killed: its lease has 20 s to run.
    export_file.start(export.id, holder="killed-worker", lease_expires_at=utcnow() + timedelta(seconds=20))
    db.session.commit()

    refusal = _refusal_on_the_queue_page(browser_page, live_server)

    assert re.match(
        rf"File {export.id} is being produced: its worker last renewed its lease \d+ s ago, so it was not "
        r"dispatched again\. If that worker has stopped, the lease lapses in \d+ s",
        refusal,
    ), refusal
    assert "alive" not in refusal


def test_a_settled_files_refusal_says_it_has_finished(live_server, browser_page, export_scenario):
    export = _failed_job_of_a_file(export_scenario)
    export_file.fail(export.id, export_file.start(export.id), export_file.FailureCode.TIMEOUT, "stopped after 600 s")
    db.session.commit()

    refusal = _refusal_on_the_queue_page(browser_page, live_server)

    assert refusal.startswith(f"File {export.id} has already finished (status: failed), so it never runs again.")
    assert "is already" not in refusal
