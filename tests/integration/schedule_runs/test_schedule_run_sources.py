"""Schedule runs and their sources: report schedules (the report changed, the report deleted),
storage refusing for a while (the run retries with a new file), a lost job dispatched again, an
address of a workspace member that needs no external-recipients grant."""

from __future__ import annotations

from datetime import timedelta

from rq.job import Job
from sqlalchemy import select, update

from app.extensions import db
from app.models import ExportFile, Report
from app.models.schedule import RecipientDelivery, Schedule, ScheduleRun
from app.models.types import utcnow
from app.services.schedules.run_work import RUNS
from app.services.schedules.schedule_runs import process_run
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redispatch_lost
from app.services.work.queue import redis_connection
from app.services.work.work_kind import LOST_AFTER

REPORT_COLUMNS = [{"name": "id", "width": 10}, {"name": "person_name", "width": 35}, {"name": "note", "width": None}]


def reloaded(model, row_id):
    db.session.rollback()
    return db.session.get(model, row_id, populate_existing=True)


def make_report(run_scenario, **overrides) -> Report:
    values = {
        "workspace_id": run_scenario.workspace.id,
        "owner_id": run_scenario.owner.id,
        "name": "Ward hours",
        "kind": "table",
        "source_query_id": run_scenario.query.id,
        "columns": REPORT_COLUMNS,
        "code_column": None,
        "code_descriptions": {},
        "summary": {},
        "title": "Hours — Северный корпус",
        "subtitle": "",
        "page_size": "A4",
        "orientation": "portrait",
        "show_filters": True,
        "show_generated_at": True,
    }
    report = Report(**{**values, **overrides})
    db.session.add(report)
    db.session.commit()
    return report


def report_schedule(run_scenario, report: Report, version_seen: int) -> Schedule:
    return run_scenario.make_schedule(
        kind="report",
        format="pdf",
        source_query_id=None,
        query_definition=None,
        query_version=None,
        report_id=report.id,
        report_version_seen=version_seen,
    )


def test_report_schedule_produces_a_pdf_and_notes_that_the_report_changed(
    run_scenario, mail_to_smtp_server, smtp_server
):
    report = make_report(run_scenario, version=3)
    schedule = report_schedule(run_scenario, report, version_seen=2)
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "succeeded"

    settled = reloaded(ScheduleRun, run.id)
    export = db.session.get(ExportFile, settled.export_id)
    assert (export.kind, export.format, export.report_id) == ("report", "pdf", report.id)
    assert export.schedule_id == schedule.id
    assert settled.source_changed is True
    assert len(smtp_server.messages) == 1


def test_report_schedule_whose_report_was_deleted_fails_and_pauses_with_source_removed(
    run_scenario, mail_to_smtp_server, smtp_server
):
    report = make_report(run_scenario)
    schedule = report_schedule(run_scenario, report, version_seen=1)
    db.session.delete(report)
    db.session.commit()
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "source_missing"

    settled = reloaded(ScheduleRun, run.id)
    assert (settled.status, settled.failure_code, settled.attempt_count) == ("failed", "source_missing", 1)
    paused = reloaded(Schedule, schedule.id)
    assert (paused.status, paused.pause_reason) == ("paused", "source_removed")
    assert smtp_server.messages == []


def test_storage_refusing_for_a_while_retries_the_run_with_a_new_file(
    run_scenario, mail_to_smtp_server, smtp_server, isolated_storage
):
    blocker = isolated_storage.root / "files"
    blocker.write_text("a regular file where the files folder should be")
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "retry_later"
    first_file = reloaded(ScheduleRun, run.id).export_id
    assert db.session.get(ExportFile, first_file).failure_code == "storage_error"
    blocker.unlink()
    assert process_run(run.id, now=utcnow() + timedelta(hours=1)) == "succeeded"

    settled = reloaded(ScheduleRun, run.id)
    assert settled.export_id != first_file
    assert db.session.get(ExportFile, settled.export_id).status == "succeeded"
    assert [(a.outcome, a.error_code) for a in settled.attempts] == [("failed", "storage_error"), ("succeeded", None)]
    assert len(smtp_server.messages) == 1


def test_queued_run_whose_job_redis_lost_is_dispatched_again(run_scenario):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    assert dispatch_pending(RUNS) == 1
    first_job = reloaded(ScheduleRun, run.id).job_id
    redis_connection().flushdb()

    assert redispatch_lost(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1

    again = reloaded(ScheduleRun, run.id)
    assert again.job_id != first_job
    assert Job.fetch(again.job_id, connection=redis_connection()).args == (run.id,)


def test_address_of_a_workspace_member_needs_no_external_recipients_grant(
    run_scenario, mail_to_smtp_server, smtp_server
):
    run_scenario.owner_membership.grants = []
    db.session.commit()
    schedule = run_scenario.make_schedule(recipients=(run_scenario.colleague.email.upper(),))
    run = run_scenario.admit(schedule)

    process_run(run.id)

    [row] = db.session.scalars(select(RecipientDelivery).where(RecipientDelivery.run_id == run.id)).all()
    assert row.status == "submitted"


def test_run_already_settled_is_acknowledged_without_a_new_attempt(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    process_run(run.id)
    db.session.execute(update(ScheduleRun).where(ScheduleRun.id == run.id).values(job_id=None))
    db.session.commit()

    assert process_run(run.id) == "already_settled"
    assert reloaded(ScheduleRun, run.id).attempt_count == 1
    assert len(smtp_server.messages) == 1


def test_snapshot_that_can_no_longer_be_run_fails_the_run_with_a_reason(run_scenario, mail_to_smtp_server, smtp_server):
    broken = {**run_scenario.query.definition(), "columns": ["id", "no_such_column"]}
    schedule = run_scenario.make_schedule(recipients=("colleague",), query_definition=broken)
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "invalid_request"

    settled = reloaded(ScheduleRun, run.id)
    assert (settled.status, settled.failure_code, settled.attempt_count) == ("failed", "invalid_request", 1)
    assert settled.failure_detail.startswith("The schedule's source can no longer be run")
    assert reloaded(Schedule, schedule.id).failure_streak == 1
    assert smtp_server.messages == []
