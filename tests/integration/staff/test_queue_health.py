"""The queue health page: queue length and oldest age, real workers, and failed jobs by record."""

from __future__ import annotations

from app.domain.files import export_file
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, work_queue
from app.services.work.work_kind import LOST_AFTER
from app.services.workspace_export.execution_work import EXECUTIONS
from app.services.workspace_export.notice_work import NOTICES
from tests import factories
from tests.fixtures.routes import HTMX
from tests.fixtures.workers import fail_job_as_a_worker_would, let_the_heartbeat_run_out, wait_for, worker_name


def test_a_real_worker_shows_with_its_state_and_heartbeat(client, auth, staff, rq_worker):
    auth.login(staff.email)
    page = wait_for(
        lambda: (text := client.get("/staff/queues").text) and "<td>idle</td>" in text and text,
        timeout=30,
        what="the worker to register and wait for work",
    )
    assert "No worker listens" not in page
    assert "exports-" in page


def test_a_killed_worker_is_not_shown_once_its_heartbeat_ran_out(client, auth, staff, rq_worker):
    auth.login(staff.email)
    wait_for(lambda: worker_name(rq_worker) in client.get("/staff/queues").text, timeout=30, what="the worker")

    rq_worker.kill()
    let_the_heartbeat_run_out(rq_worker)

    page = client.get("/staff/queues").text
    assert worker_name(rq_worker) not in page
    assert "No worker listens on this queue" in page


def test_without_workers_the_page_warns_that_nothing_will_run(client, auth, staff, export_scenario):
    export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    auth.login(staff.email)
    page = client.get("/staff/queues").text
    assert "No worker listens on this queue" in page
    assert "<dt>Waiting</dt><dd>1</dd>" in page


def test_the_htmx_refresh_gets_the_fragment_only(client, auth, staff):
    auth.login(staff.email)
    fragment = client.get("/staff/queues/live", headers=HTMX).text
    assert "<html" not in fragment
    assert "Queue “" in fragment


def test_a_failed_job_shows_its_record_and_error_type_but_not_its_traceback(client, auth, staff, export_scenario):
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    fail_job_as_a_worker_would(
        work_queue(WorkPriority.INTERACTIVE).get_job_ids()[0],
        'Traceback (most recent call last):\n  File "x.py"\nValueError: SELECT secret FROM t',
    )
    auth.login(staff.email)
    page = client.get("/staff/queues").text
    assert f"/staff/files/{export.id}" in page
    assert "<code>ValueError</code>" in page
    assert "SELECT secret" not in page


def test_a_failed_job_of_a_workspace_export_links_to_its_record(client, auth, staff, world):
    execution = factories.make_execution(world.workspace)
    assert dispatch_pending(EXECUTIONS) == 1
    fail_job_as_a_worker_would(
        work_queue(WorkPriority.BULK).get_job_ids()[0], "Traceback (most recent call last):\nWorkHorseKilled: 9"
    )
    auth.login(staff.email)

    page = client.get("/staff/queues").text

    assert f'href="/staff/executions/{execution.id}">workspace export #{execution.id}</a>' in page


def test_a_failed_job_of_an_export_notice_names_its_notice_and_offers_dispatch_again(client, auth, staff, world):
    package = factories.make_package(factories.make_execution(world.workspace))
    notice = factories.make_package_ready_notice(package, world.admin, created_at=utcnow() - 2 * LOST_AFTER)
    assert dispatch_pending(NOTICES, utcnow()) == 1
    fail_job_as_a_worker_would(work_queue(WorkPriority.BULK).get_job_ids()[0], "WorkHorseKilled: 9")
    auth.login(staff.email)

    page = client.get("/staff/queues").text

    assert f"export notice #{notice.id}" in page
    assert '<button type="submit" class="button">Dispatch again</button>' in page


def test_a_failed_job_of_a_record_still_waiting_offers_dispatch_again(client, auth, staff, export_scenario):
    export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    fail_job_as_a_worker_would(work_queue(WorkPriority.INTERACTIVE).get_job_ids()[0], "WorkHorseKilled: 9")
    auth.login(staff.email)

    page = client.get("/staff/queues").text

    assert '<button type="submit" class="button">Dispatch again</button>' in page


def test_a_failed_job_of_a_settled_record_says_why_it_cannot_be_dispatched_again(client, auth, staff, export_scenario):
    """The file failed for good after its job did: the kind's requeue would refuse, so no button, the reason instead."""
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    fail_job_as_a_worker_would(work_queue(WorkPriority.INTERACTIVE).get_job_ids()[0], "WorkHorseKilled: 9")
    export_file.fail(export.id, export_file.start(export.id), export_file.FailureCode.TIMEOUT, "stopped after 600 s")
    auth.login(staff.email)

    page = client.get("/staff/queues").text

    assert f"/staff/files/{export.id}" in page
    assert "Dispatch again" not in page
    assert f"File {export.id} has already finished (status: failed), so it never runs again." in page
