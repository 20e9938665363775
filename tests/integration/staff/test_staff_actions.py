"""Staff actions: each changes what it says, is audited in the same transaction with its reason,
and is refused with a clear message when the record's state does not allow it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rq.registry import FailedJobRegistry
from sqlalchemy import func, select

from app.domain.errors import AccessDenied
from app.domain.workspace_export import export_execution, export_notice, package_delivery_lifecycle
from app.extensions import db
from app.models import AuditEvent, ExportDelivery, ExportExecution, ExportNotice, ExportPackage, ExportSettings
from app.models.schedule import RunTrigger, ScheduleRun
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.schedules.run_work import RUNS
from app.services.schedules.schedule_admission import admit_run
from app.services.staff import staff_actions
from app.services.work import engine
from app.services.work.claims import dispatch_pending
from app.services.work.queue import WorkPriority, work_queue
from app.services.workspace_export.delivery_work import DELIVERIES
from app.services.workspace_export.execution_work import EXECUTIONS
from app.services.workspace_export.notice_work import NOTICES
from app.services.workspace_export.package_keys import package_prefix
from tests import factories
from tests.fixtures.workers import fail_job_as_a_worker_would


def audit_actions() -> list[tuple[str, str | None]]:
    db.session.rollback()
    return [(event.action, event.reason) for event in db.session.scalars(select(AuditEvent).order_by(AuditEvent.id))]


def settings_of(workspace) -> ExportSettings | None:
    db.session.rollback()
    return db.session.scalar(select(ExportSettings).where(ExportSettings.workspace_id == workspace.id))


def test_suspending_a_workspace_export_records_the_reason_and_audits_it(client, auth, world, staff):
    factories.make_export_settings(world.workspace)
    auth.login(staff.email)
    response = client.post(
        f"/staff/workspaces/{world.workspace.id}/export/suspend",
        data={"reason": "Unpaid invoice 2026-11"},
        follow_redirects=True,
    )
    assert "The workspace&#39;s export is suspended." in response.text
    settings = settings_of(world.workspace)
    assert (settings.status, settings.suspended_reason) == ("suspended", "Unpaid invoice 2026-11")
    assert audit_actions() == [("export.suspended", "Unpaid invoice 2026-11")]


def test_a_workspace_without_settings_is_suspended_too(client, auth, world, staff):
    auth.login(staff.email)
    client.post(f"/staff/workspaces/{world.workspace.id}/export/suspend", data={"reason": "Fraud check"})
    assert settings_of(world.workspace).status == "suspended"


def test_suspending_twice_is_refused_and_audited_once(client, auth, world, staff):
    factories.make_export_settings(world.workspace, status="suspended", suspended_reason="First")
    auth.login(staff.email)
    response = client.post(
        f"/staff/workspaces/{world.workspace.id}/export/suspend", data={"reason": "Second"}, follow_redirects=True
    )
    assert "already suspended" in response.text
    assert settings_of(world.workspace).suspended_reason == "First"
    assert audit_actions() == []


@pytest.mark.parametrize("reason", ["", "   ", "x" * 1001])
def test_an_action_without_a_usable_reason_changes_nothing(client, auth, world, staff, reason):
    factories.make_export_settings(world.workspace)
    auth.login(staff.email)
    response = client.post(
        f"/staff/workspaces/{world.workspace.id}/export/suspend", data={"reason": reason}, follow_redirects=True
    )
    assert response.status_code == 200
    assert "reason" in response.text.lower()
    assert settings_of(world.workspace).status == "active"
    assert audit_actions() == []


def test_a_reason_as_long_as_every_staff_action_takes_is_kept_whole(client, auth, world, staff):
    factories.make_export_settings(world.workspace)
    auth.login(staff.email)
    page = client.get(f"/staff/workspaces/{world.workspace.id}").text

    client.post(f"/staff/workspaces/{world.workspace.id}/export/suspend", data={"reason": "r" * 1000})

    assert 'maxlength="1000"' in page
    assert settings_of(world.workspace).suspended_reason == "r" * 1000
    assert audit_actions() == [("export.suspended", "r" * 1000)]


def test_resuming_makes_the_export_active_again(client, auth, world, staff):
    factories.make_export_settings(world.workspace, status="suspended", suspended_reason="Checked")
    auth.login(staff.email)
    client.post(f"/staff/workspaces/{world.workspace.id}/export/resume", data={"reason": "Invoice paid"})
    settings = settings_of(world.workspace)
    assert (settings.status, settings.suspended_reason) == ("active", None)
    assert audit_actions() == [("export.resumed", "Invoice paid")]


def test_resuming_what_is_not_suspended_is_refused(client, auth, world, staff):
    factories.make_export_settings(world.workspace)
    auth.login(staff.email)
    response = client.post(
        f"/staff/workspaces/{world.workspace.id}/export/resume", data={"reason": "Oops"}, follow_redirects=True
    )
    assert "not suspended" in response.text
    assert audit_actions() == []


def test_staff_with_view_only_cannot_suspend(client, auth, world, viewer):
    factories.make_export_settings(world.workspace)
    auth.login(viewer.email)
    response = client.post(f"/staff/workspaces/{world.workspace.id}/export/suspend", data={"reason": "No"})
    assert response.status_code == 403
    assert "staff.execute" in response.text
    assert settings_of(world.workspace).status == "active"


@pytest.mark.parametrize("who", ["viewer", "admin"])
@pytest.mark.parametrize("action", ["suspend", "resume", "stop", "delete", "requeue"])
def test_every_staff_action_refuses_a_person_without_the_execute_permission(world, viewer, who, action):
    """The service checks it too, not only the route: a job or the command line could call it."""
    person = viewer if who == "viewer" else world.admin
    suspended = {"status": "suspended", "suspended_reason": "Checked"} if action == "resume" else {}
    factories.make_export_settings(world.workspace, **suspended)
    package = factories.make_package(factories.make_execution(world.workspace))
    execution = factories.make_execution(world.workspace, status="running", attempt_count=1)
    calls = {
        "suspend": lambda: staff_actions.suspend_export(world.workspace, person, "Unpaid invoice"),
        "resume": lambda: staff_actions.resume_export(world.workspace, person, "Invoice paid"),
        "stop": lambda: staff_actions.stop_execution(execution, 1, person, "Worker host lost"),
        "delete": lambda: staff_actions.delete_package(package, person, "Customer asked"),
        "requeue": lambda: staff_actions.requeue_failed_job("any-job", person, "Try again"),
    }

    with pytest.raises(AccessDenied, match="staff.execute"):
        calls[action]()

    assert settings_of(world.workspace).status == ("suspended" if action == "resume" else "active")
    assert execution_row(execution.id).status == "running"
    assert db.session.get(ExportPackage, package.id, populate_existing=True).status == "available"
    assert audit_actions() == []


def execution_row(execution_id: int) -> ExportExecution:
    db.session.rollback()
    return db.session.get(ExportExecution, execution_id)


def test_a_stuck_execution_is_marked_failed_at_the_attempt_staff_saw(client, auth, world, staff):
    execution = factories.make_execution(world.workspace, status="running", attempt_count=2)
    auth.login(staff.email)
    client.post(f"/staff/executions/{execution.id}/stop", data={"attempt": "2", "reason": "Worker host lost"})
    stopped = execution_row(execution.id)
    assert (stopped.status, stopped.failure_code) == ("failed", "stopped_by_staff")
    assert "Worker host lost" in stopped.failure_detail
    assert stopped.events[-1].kind == "error"
    assert audit_actions() == [("export.execution_stopped", "Worker host lost")]


def test_marking_an_execution_failed_tells_its_administrators_as_every_failure_does(client, auth, world, staff):
    execution = factories.make_execution(world.workspace, status="running", attempt_count=1)
    auth.login(staff.email)
    client.post(f"/staff/executions/{execution.id}/stop", data={"attempt": "1", "reason": "Worker host lost"})
    db.session.rollback()
    notices = db.session.execute(
        select(ExportNotice.kind, ExportNotice.person_id).where(
            ExportNotice.subject_type == "execution", ExportNotice.subject_id == execution.id
        )
    ).all()
    assert notices == [("execution_failed", world.admin.id)]


def test_marking_an_execution_failed_removes_what_its_dead_attempt_left_in_storage(
    client, auth, world, staff, isolated_storage
):
    execution = factories.make_execution(world.workspace, status="running", attempt_count=1)
    leftover = package_prefix(world.workspace.id, execution.id, 1) + "teams/teams-00001.csv.zip"
    isolated_storage.put_bytes(leftover, b"half a volume")
    auth.login(staff.email)
    client.post(f"/staff/executions/{execution.id}/stop", data={"attempt": "1", "reason": "Worker host lost"})
    assert isolated_storage.list_keys("packages/") == []


def test_an_execution_that_moved_on_since_the_page_was_shown_is_left_alone(client, auth, world, staff):
    execution = factories.make_execution(world.workspace, status="running", attempt_count=3)
    auth.login(staff.email)
    response = client.post(
        f"/staff/executions/{execution.id}/stop", data={"attempt": "2", "reason": "Stuck"}, follow_redirects=True
    )
    assert "moved on" in response.text
    assert execution_row(execution.id).status == "running"
    assert audit_actions() == []


def test_a_finished_execution_cannot_be_marked_failed(client, auth, world, staff):
    execution = factories.make_execution(world.workspace, status="succeeded", attempt_count=1)
    auth.login(staff.email)
    client.post(f"/staff/executions/{execution.id}/stop", data={"attempt": "1", "reason": "Stuck"})
    assert execution_row(execution.id).status == "succeeded"
    assert audit_actions() == []


def failed_job_for(export) -> str:
    """The file's job as RQ keeps it after its work-horse died: in the failed registry."""
    fail_job_as_a_worker_would(export.outbox.job_id, "Traceback (most recent call last):\nWorkHorseKilled: 9")
    return export.outbox.job_id


def test_a_failed_job_of_a_queued_file_is_requeued_through_the_outbox(client, auth, export_scenario, staff):
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    db.session.refresh(export.outbox)
    job_id = failed_job_for(export)
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Horse was OOM-killed"}, follow_redirects=True
    )

    assert f"File {export.id} was dispatched again." in response.text
    db.session.rollback()
    db.session.refresh(export.outbox)
    assert export.outbox.dispatch_count == 2
    assert work_queue(WorkPriority.INTERACTIVE).fetch_job(export.outbox.job_id) is not None
    assert job_id not in FailedJobRegistry(queue=work_queue(WorkPriority.INTERACTIVE)).get_job_ids()
    assert audit_actions() == [("job.requeued", "Horse was OOM-killed")]


def test_a_failed_job_of_a_settled_file_is_not_requeued(client, auth, export_scenario, staff):
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    db.session.refresh(export.outbox)
    job_id = failed_job_for(export)
    export.status, export.failure_code = "failed", "internal"
    db.session.commit()
    auth.login(staff.email)

    response = client.post("/staff/queues/requeue", data={"job_id": job_id, "reason": "Try"}, follow_redirects=True)

    assert "has already finished (status: failed)" in response.text
    assert job_id in FailedJobRegistry(queue=work_queue(WorkPriority.INTERACTIVE)).get_job_ids()
    assert db.session.scalar(select(func.count()).select_from(AuditEvent)) == 0


def test_requeueing_an_unknown_job_says_so(client, auth, world, staff):
    auth.login(staff.email)
    response = client.post(
        "/staff/queues/requeue", data={"job_id": "no-such-job", "reason": "Try"}, follow_redirects=True
    )
    assert "no longer among the failed jobs" in response.text


@pytest.mark.parametrize("attempt", ["²", str(2**31), str(2**63), "9" * 23, "9" * 5000, "٢"])
def test_stop_with_an_attempt_the_page_never_showed_says_the_page_was_out_of_date(client, auth, world, staff, attempt):
    execution = factories.make_execution(world.workspace, status="running", attempt_count=2)
    auth.login(staff.email)
    response = client.post(
        f"/staff/executions/{execution.id}/stop",
        data={"attempt": attempt, "reason": "Stuck"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert "The page was out of date" in response.text
    assert execution_row(execution.id).status == "running"
    assert audit_actions() == []


def test_stop_with_a_nul_in_the_reason_is_refused_with_a_sentence(client, auth, world, staff):
    execution = factories.make_execution(world.workspace, status="running", attempt_count=2)
    auth.login(staff.email)
    response = client.post(
        f"/staff/executions/{execution.id}/stop",
        data={"attempt": "2", "reason": "Stuck\x00"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert "cannot be saved" in response.text
    assert execution_row(execution.id).status == "running"
    assert audit_actions() == []


def test_suspend_with_a_nul_in_the_reason_is_refused_with_a_sentence(client, auth, world, staff):
    factories.make_export_settings(world.workspace)
    auth.login(staff.email)
    response = client.post(
        f"/staff/workspaces/{world.workspace.id}/export/suspend",
        data={"reason": "Unpaid\x00invoice"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert "cannot be saved" in response.text
    assert settings_of(world.workspace).status == "active"
    assert audit_actions() == []


def running_run_with_a_failed_job(world, lease_expires_at) -> ScheduleRun:
    """A schedule run whose job RQ counts as failed while the database has it running under a
    lease (a job redelivered beside a live attempt, a worker frozen past its lease)."""
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    run = admit_run(
        schedule_id=schedule.id, workspace_id=world.workspace.id, occurrence_at=utcnow(), trigger=RunTrigger.MANUAL
    )
    assert dispatch_pending(RUNS) == 1
    db.session.refresh(run)
    run.status, run.attempt_count, run.lease_holder, run.lease_expires_at = "running", 1, "w1", lease_expires_at
    db.session.commit()
    fail_job_as_a_worker_would(run.job_id, "Traceback (most recent call last):\nJobTimeoutException: 180")
    return run


def test_requeueing_a_running_schedule_run_with_a_live_lease_is_refused(client, auth, world, staff):
    run = running_run_with_a_failed_job(world, utcnow() + timedelta(minutes=5))
    job_id = run.job_id
    auth.login(staff.email)

    response = client.post("/staff/queues/requeue", data={"job_id": job_id, "reason": "Stuck?"}, follow_redirects=True)

    assert f"Schedule run {run.id} is running: its worker last renewed its lease" in response.text
    db.session.rollback()
    assert db.session.get(ScheduleRun, run.id, populate_existing=True).job_id == job_id
    assert job_id in FailedJobRegistry(queue=work_queue(WorkPriority.SCHEDULED)).get_job_ids()
    assert audit_actions() == []


def test_requeueing_a_running_schedule_run_whose_lease_lapsed_dispatches_it(client, auth, world, staff):
    run = running_run_with_a_failed_job(world, utcnow() - timedelta(seconds=1))
    job_id = run.job_id
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Worker gone"}, follow_redirects=True
    )

    assert f"Schedule run {run.id} was dispatched again." in response.text
    db.session.rollback()
    assert db.session.get(ScheduleRun, run.id, populate_existing=True).job_id != job_id
    assert audit_actions() == [("job.requeued", "Worker gone")]


def test_a_failed_job_of_a_queued_workspace_export_is_requeued_through_its_dispatch(client, auth, world, staff):
    execution = factories.make_execution(world.workspace)
    assert dispatch_pending(EXECUTIONS) == 1
    job_id = execution_row(execution.id).job_id
    fail_job_as_a_worker_would(job_id, "Traceback (most recent call last):\nWorkHorseKilled: 9")
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Horse was OOM-killed"}, follow_redirects=True
    )

    assert f"Workspace export {execution.id} was dispatched again." in response.text
    requeued = execution_row(execution.id)
    assert requeued.job_id != job_id
    assert requeued.job_id in work_queue(WorkPriority.BULK).get_job_ids()
    assert job_id not in FailedJobRegistry(queue=work_queue(WorkPriority.BULK)).get_job_ids()
    assert audit_actions() == [("job.requeued", "Horse was OOM-killed")]


def delivery_whose_worker_died(world) -> tuple[ExportDelivery, str]:
    """A package delivery whose worker died mid-copy: its job failed in RQ, and the watchdog failed
    its attempt as transient, retried only after the backoff."""
    package = factories.make_package(factories.make_execution(world.workspace))
    delivery = factories.make_package_delivery(
        package, factories.make_destination(world.workspace), created_at=utcnow() - timedelta(minutes=5)
    )
    assert dispatch_pending(DELIVERIES, utcnow()) == 1
    db.session.refresh(delivery)
    job_id = delivery.job_id
    package_delivery_lifecycle.start(delivery.id, "dead-worker", utcnow() - timedelta(seconds=1))
    fail_job_as_a_worker_would(job_id, "Traceback (most recent call last):\nWorkHorseKilled: 9")
    assert engine.redeliver_lapsed(utcnow()) == 1
    return delivery, job_id


def test_a_failed_job_of_a_package_delivery_is_requeued_at_once_rather_than_after_its_backoff(
    client, auth, world, staff
):
    delivery, job_id = delivery_whose_worker_died(world)
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Destination fixed"}, follow_redirects=True
    )

    assert f"Package delivery {delivery.id} was dispatched again." in response.text
    db.session.rollback()
    requeued = db.session.get_one(ExportDelivery, delivery.id, populate_existing=True)
    assert requeued.status == "failed" and requeued.next_attempt_at <= utcnow()
    assert requeued.job_id in work_queue(WorkPriority.BULK).get_job_ids()
    assert job_id not in FailedJobRegistry(queue=work_queue(WorkPriority.BULK)).get_job_ids()
    assert audit_actions() == [("job.requeued", "Destination fixed")]


def test_requeueing_a_package_delivery_that_is_copying_with_a_live_lease_is_refused(client, auth, world, staff):
    delivery, job_id = delivery_whose_worker_died(world)
    package_delivery_lifecycle.retry_now(delivery.id, 1)
    db.session.commit()
    package_delivery_lifecycle.start(delivery.id, "live-worker", utcnow() + timedelta(minutes=5))
    auth.login(staff.email)

    response = client.post("/staff/queues/requeue", data={"job_id": job_id, "reason": "Stuck?"}, follow_redirects=True)

    assert f"Package delivery {delivery.id} is copying: its worker last renewed its lease" in response.text
    assert set(work_queue(WorkPriority.BULK).get_job_ids()) <= {job_id}  # no new dispatch
    assert job_id in FailedJobRegistry(queue=work_queue(WorkPriority.BULK)).get_job_ids()
    assert audit_actions() == []


def test_requeueing_a_running_workspace_export_with_a_live_lease_is_refused(client, auth, world, staff):
    execution = factories.make_execution(world.workspace)
    assert dispatch_pending(EXECUTIONS) == 1
    job_id = execution_row(execution.id).job_id
    export_execution.start_attempt(execution.id, "live-worker", utcnow() + timedelta(minutes=5))
    db.session.commit()
    fail_job_as_a_worker_would(job_id, "Traceback (most recent call last):\nJobTimeoutException: 180")
    auth.login(staff.email)

    response = client.post("/staff/queues/requeue", data={"job_id": job_id, "reason": "Stuck?"}, follow_redirects=True)

    assert f"Workspace export {execution.id} is running: its worker last renewed its lease" in response.text
    assert execution_row(execution.id).job_id == job_id
    assert job_id in FailedJobRegistry(queue=work_queue(WorkPriority.BULK)).get_job_ids()
    assert audit_actions() == []


def notice_left_unsent_with_a_failed_job(world) -> tuple[ExportNotice, str]:
    """An export notice its process left unsent, dispatched by the engine, whose job RQ failed."""
    package = factories.make_package(factories.make_execution(world.workspace))
    notice = factories.make_package_ready_notice(package, world.admin, created_at=utcnow() - timedelta(minutes=5))
    assert dispatch_pending(NOTICES, utcnow()) == 1
    db.session.refresh(notice)
    fail_job_as_a_worker_would(notice.job_id, "Traceback (most recent call last):\nWorkHorseKilled: 9")
    return notice, notice.job_id


def test_a_failed_job_of_an_export_notice_is_requeued_through_its_dispatch(client, auth, world, staff):
    notice, job_id = notice_left_unsent_with_a_failed_job(world)
    auth.login(staff.email)

    response = client.post(
        "/staff/queues/requeue", data={"job_id": job_id, "reason": "Horse was OOM-killed"}, follow_redirects=True
    )

    assert f"Export notice {notice.id} was dispatched again." in response.text
    db.session.rollback()
    requeued = db.session.get_one(ExportNotice, notice.id, populate_existing=True)
    assert requeued.job_id != job_id
    assert requeued.job_id in work_queue(WorkPriority.BULK).get_job_ids()
    assert job_id not in FailedJobRegistry(queue=work_queue(WorkPriority.BULK)).get_job_ids()
    assert audit_actions() == [("job.requeued", "Horse was OOM-killed")]


def test_requeueing_an_export_notice_waiting_for_its_retry_says_when_it_is_dispatched(client, auth, world, staff):
    notice, job_id = notice_left_unsent_with_a_failed_job(world)
    export_notice.start(notice.id, "dead-worker", utcnow() - timedelta(seconds=1))
    assert engine.redeliver_lapsed(utcnow()) == 1
    auth.login(staff.email)

    response = client.post("/staff/queues/requeue", data={"job_id": job_id, "reason": "Stuck?"}, follow_redirects=True)

    assert f"Export notice {notice.id} waits for the mail server: its next try is due at" in response.text
    assert job_id in FailedJobRegistry(queue=work_queue(WorkPriority.BULK)).get_job_ids()
    assert audit_actions() == []
