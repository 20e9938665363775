"""Admitting workspace exports: one queued or running per workspace (INV-09), live non-sandbox
workspaces only (INV-10), the allowance per rolling 30 days, audited with the admission (INV-11)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select, text

from app.domain.errors import TransitionRefused
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models import AuditEvent
from app.models.export_execution import ExecutionFailure, ExecutionTrigger, ExportExecution
from app.models.types import utcnow
from app.services.work.queue import WorkPriority, work_queue
from app.services.workspace_export import execution_admission
from app.services.workspace_export.execution_admission import AdmissionRefused, admit, allowance, cancel
from tests import factories
from tests.fixtures.workers import wait_for
from tests.integration.packages.failure_codes import FAILED_BY_THE_SETTINGS, FAILED_ON_OUR_SIDE
from tests.integration.packages.threads import in_thread


def _executions() -> list[ExportExecution]:
    db.session.rollback()
    return list(db.session.scalars(select(ExportExecution).order_by(ExportExecution.id)))


def _audit(action: str) -> list[AuditEvent]:
    return list(db.session.scalars(select(AuditEvent).where(AuditEvent.action == action)))


def test_export_now_admits_a_queued_execution_with_a_copy_of_the_settings(export_world):
    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    export_world.settings.retention_days = 30
    db.session.commit()
    stored = db.session.get(ExportExecution, execution.id, populate_existing=True)
    assert stored.status == "queued" and stored.trigger == "manual"
    assert stored.requested_by_id == export_world.admin.id
    assert stored.settings_snapshot == {
        "datasets": ["teams", "people", "shifts", "time_off_requests", "timesheet_entries"],
        "format": "csv",
        "volume_size_bytes": 256 * 1024 * 1024,
        "retention_days": 7,
        "notify_person_ids": [],
        "settings_version": 1,
    }
    assert (stored.allowance_used, stored.allowance_limit) == (1, export_world.workspace.export_allowance)


def test_admission_is_audited_with_the_execution(export_world):
    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    [event] = _audit("export.execution_admitted")
    assert (event.subject_type, event.subject_id, event.actor_id) == (
        "export_execution",
        execution.id,
        export_world.admin.id,
    )
    assert event.details["allowance_used"] == 1


def test_admission_dispatches_the_execution_job_at_once(app, export_world):
    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    stored = db.session.get(ExportExecution, execution.id, populate_existing=True)
    job = work_queue(WorkPriority.BULK).fetch_job(stored.job_id)
    assert job is not None and job.func_name == "jobs.package_execution.run" and job.args == (execution.id,)
    assert stored.dispatched_at is not None


def test_a_second_export_while_one_is_queued_is_refused_with_a_link_to_it(export_world):
    first = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    with pytest.raises(AdmissionRefused) as refusal:
        admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    assert refusal.value.running_execution_id == first.id
    assert "already queued or running" in str(refusal.value)
    assert len(_executions()) == 1


def test_two_admissions_at_once_give_one_execution(app, export_world, hold_lock):
    workspace_id, admin_id = export_world.workspace.id, export_world.admin.id
    lock = hold_lock("LOCK TABLE data_export_executions IN ACCESS EXCLUSIVE MODE")

    def export_now():
        from app.models import Person

        return admit(workspace_id, db.session.get(Person, admin_id), ExecutionTrigger.MANUAL).id

    threads = [in_thread(app, export_now) for _ in range(2)]
    # Both wait behind the lock, having checked nothing yet; released, they race.
    wait_for(lambda: lock.waiters() == 2, what="both admissions to wait for the executions table")
    lock.release()
    for thread, _ in threads:
        thread.join(30)

    outcomes = [outcome for _, outcome in threads]
    admitted = [o.value for o in outcomes if o.error is None]
    refused = [o.error for o in outcomes if o.error is not None]
    assert len(admitted) == 1 and len(refused) == 1
    assert isinstance(refused[0], AdmissionRefused) and refused[0].running_execution_id == admitted[0]
    assert [e.id for e in _executions()] == admitted


def test_the_unique_index_refuses_an_admission_its_check_could_not_see(app, export_world):
    """An admission whose insert is not committed yet is invisible to the second one's check: the
    partial unique index makes the second wait, then refuses it with the first one's id."""
    workspace_id, admin_id = export_world.workspace.id, export_world.admin.id
    first = db.engine.connect()
    first.execute(
        text(
            "INSERT INTO data_export_executions (workspace_id, trigger, cutoff_at, settings_snapshot,"
            " allowance_used, allowance_limit, status, attempt_count, datasets_count, rows_written,"
            " bytes_written, volumes_count, created_at)"
            " VALUES (:ws, 'manual', now(), '{}', 1, 10, 'queued', 0, 0, 0, 0, 0, now())"
        ),
        {"ws": workspace_id},
    )

    def export_now():
        from app.models import Person

        return admit(workspace_id, db.session.get(Person, admin_id), ExecutionTrigger.MANUAL)

    thread, outcome = in_thread(app, export_now)
    first_pid = first.execute(text("SELECT pg_backend_pid()")).scalar_one()
    wait_for(
        lambda: db.session.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND CAST(:pid AS integer) = ANY(pg_blocking_pids(pid))"
            ),
            {"pid": first_pid},
        ),
        what="the second admission to wait on the unique index",
    )
    first.commit()
    first.close()
    thread.join(30)

    [execution] = _executions()
    assert isinstance(outcome.error, AdmissionRefused)
    assert outcome.error.running_execution_id == execution.id


def test_the_allowance_refuses_an_export_beyond_the_plan_and_says_when_one_frees(export_world):
    export_world.workspace.export_allowance = 2
    db.session.commit()
    oldest = utcnow() - timedelta(days=29)
    factories.make_execution(export_world.workspace, export_world.admin, status="succeeded", created_at=oldest)
    factories.make_execution(
        export_world.workspace,
        export_world.admin,
        status="failed",
        failure_code="volume_too_small",
        created_at=utcnow() - timedelta(days=3),
    )

    with pytest.raises(AdmissionRefused) as refusal:
        admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    message = str(refusal.value)
    assert "used all 2 exports" in message and "failed on our side, don't count" in message
    assert (oldest + timedelta(days=30)).strftime("%Y-%m-%d") in message
    assert refusal.value.running_execution_id is None


def test_cancelled_and_older_executions_do_not_count_against_the_allowance(export_world):
    export_world.workspace.export_allowance = 1
    db.session.commit()
    factories.make_execution(export_world.workspace, export_world.admin, status="cancelled")
    factories.make_execution(
        export_world.workspace, export_world.admin, status="succeeded", created_at=utcnow() - timedelta(days=31)
    )

    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    assert execution.allowance_used == 1
    assert allowance(export_world.workspace.id).left == 0


def test_every_failure_code_is_either_ours_or_the_customers():
    assert sorted(FAILED_ON_OUR_SIDE + FAILED_BY_THE_SETTINGS) == sorted(ExecutionFailure)


@pytest.mark.parametrize("code", FAILED_ON_OUR_SIDE)
def test_an_execution_that_failed_on_our_side_does_not_count_against_the_allowance(export_world, code):
    export_world.workspace.export_allowance = 1
    db.session.commit()
    factories.make_execution(export_world.workspace, export_world.admin, status="failed", failure_code=code)

    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    assert execution.allowance_used == 1


@pytest.mark.parametrize("code", FAILED_BY_THE_SETTINGS)
def test_an_execution_its_settings_failed_counts_against_the_allowance(export_world, code):
    export_world.workspace.export_allowance = 1
    db.session.commit()
    factories.make_execution(export_world.workspace, export_world.admin, status="failed", failure_code=code)

    with pytest.raises(AdmissionRefused, match="used all 1 exports"):
        admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "suspended"}, "live workspace outside sandbox mode"),
        ({"status": "closed"}, "live workspace outside sandbox mode"),
        ({"sandbox": True}, "live workspace outside sandbox mode"),
    ],
)
def test_only_a_live_workspace_outside_sandbox_mode_may_export(export_world, change, message):
    for name, value in change.items():
        setattr(export_world.workspace, name, value)
    db.session.commit()

    with pytest.raises(AdmissionRefused, match=message):
        admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)
    assert _executions() == []


def test_a_workspace_without_settings_is_refused(world):
    with pytest.raises(AdmissionRefused, match="not set up yet"):
        admit(world.workspace.id, world.admin, ExecutionTrigger.MANUAL)


def test_settings_suspended_by_staff_refuse_with_their_reason(export_world):
    export_world.settings.status = "suspended"
    export_world.settings.suspended_reason = "Unpaid invoice <b>#42</b> “Zoë”"
    db.session.commit()

    with pytest.raises(AdmissionRefused) as refusal:
        admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)
    assert str(refusal.value) == "Workspace export is suspended by Rhythm staff: Unpaid invoice <b>#42</b> “Zoë”"


def test_paused_settings_refuse_the_cadence_and_allow_export_now(export_world):
    export_world.settings.status = "paused"
    db.session.commit()

    with pytest.raises(AdmissionRefused, match="cadence is paused"):
        admit(export_world.workspace.id, None, ExecutionTrigger.CADENCE, cadence_key="daily:2026-12-01")
    assert admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL).status == "queued"


def test_settings_without_a_dataset_are_refused(export_world):
    export_world.settings.datasets = []
    db.session.commit()

    with pytest.raises(AdmissionRefused, match="no dataset"):
        admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)


def test_a_queued_execution_is_cancelled_and_audited(export_world):
    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    cancel(export_world.workspace.id, execution.id, export_world.admin)

    stored = db.session.get(ExportExecution, execution.id, populate_existing=True)
    assert stored.status == "cancelled" and stored.cancelled_by_id == export_world.admin.id
    [event] = _audit("export.execution_cancelled")
    assert event.subject_id == execution.id and event.actor_id == export_world.admin.id
    assert allowance(export_world.workspace.id).used == 0


def test_a_running_execution_cannot_be_cancelled(export_world):
    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)
    export_execution.start_attempt(execution.id, "worker-1", utcnow() + timedelta(minutes=1))

    with pytest.raises(TransitionRefused, match="Only a queued export can be cancelled"):
        cancel(export_world.workspace.id, execution.id, export_world.admin)
    assert db.session.get(ExportExecution, execution.id, populate_existing=True).status == "running"
    assert _audit("export.execution_cancelled") == []


def test_another_workspaces_execution_cannot_be_cancelled(export_world):
    execution = admit(export_world.workspace.id, export_world.admin, ExecutionTrigger.MANUAL)

    with pytest.raises(TransitionRefused):
        cancel(export_world.other_workspace.id, execution.id, export_world.other_admin)
    assert db.session.get(ExportExecution, execution.id, populate_existing=True).status == "queued"


def test_allowance_counts_the_rolling_window_and_names_when_the_oldest_frees(export_world):
    admitted_at = utcnow() - timedelta(days=10)
    factories.make_execution(export_world.workspace, export_world.admin, status="succeeded", created_at=admitted_at)

    used = execution_admission.allowance(export_world.workspace.id)

    assert (used.used, used.limit, used.left) == (1, 10, 9)
    assert used.next_frees_at == admitted_at + timedelta(days=30)
    assert db.session.scalar(select(func.count(ExportExecution.id))) == 1


def test_allowance_reads_as_used_limit_and_when_the_next_frees(export_world):
    used, limit, next_frees_at = allowance(export_world.workspace.id)

    assert (used, limit, next_frees_at) == (0, 10, None)
