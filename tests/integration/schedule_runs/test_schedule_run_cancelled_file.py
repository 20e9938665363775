"""A schedule run whose file a person cancelled fails with `cancelled`, without retry and without a new
file, and ends the schedule's failure streak instead of extending it."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from app.domain.people.access import current_context
from app.domain.schedules import schedule_lifecycle
from app.extensions import db
from app.models import ExportFile
from app.models.export_file import FailureCode
from app.models.schedule import RunTrigger, Schedule, ScheduleRun
from app.models.types import utcnow
from app.services.files.file_cancellation import cancel_file
from app.services.schedules.run_work import RUNS
from app.services.schedules.schedule_admission import admit_run
from app.services.schedules.schedule_runs import process_run
from app.services.work.claims import dispatch_pending
from tests import factories
from tests.fixtures.workers import a_query_waits_for_the_timesheet_lock, pending_uploads, timesheet_locked, wait_for


def run_row(run_id: int) -> ScheduleRun:
    db.session.rollback()
    return db.session.get(ScheduleRun, run_id, populate_existing=True)


def _files() -> int:
    return db.session.scalar(select(func.count()).select_from(ExportFile))


def _cancelled_file_for(run_scenario, schedule: Schedule, run: ScheduleRun) -> None:
    export = factories.make_export(
        run_scenario.query,
        run_scenario.owner,
        status="failed",
        failure_code=FailureCode.CANCELLED,
        failure_detail="Cancelled by the owner.",
        cancelled_by_id=run_scenario.owner.id,
        schedule_id=schedule.id,
    )
    db.session.get(ScheduleRun, run.id).export_id = export.id
    db.session.commit()


def test_run_whose_file_is_cancelled_while_a_worker_makes_it_fails_without_retry(
    run_scenario, isolated_storage, start_worker
):
    """The owner cancels the file while the worker waits for its rows: the run fails with `cancelled` at
    its first attempt, nothing is stored and no mail is due."""
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    assert dispatch_pending(RUNS) == 1
    with timesheet_locked():
        start_worker()
        wait_for(a_query_waits_for_the_timesheet_lock, timeout=60, what="the run's file to wait for its rows")
        export = db.session.get(ExportFile, run_row(run.id).export_id)
        cancel_file(current_context(run_scenario.workspace.id, run_scenario.owner.id), export)

    settled = wait_for(lambda: (r := run_row(run.id)).status == "failed" and r, timeout=60, what="the run to fail")
    assert (settled.failure_code, settled.attempt_count) == (FailureCode.CANCELLED, 1)
    assert f"Cancelled by {run_scenario.owner.name}." in settled.failure_detail
    assert _files() == 1
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []


def test_run_retried_after_its_file_was_cancelled_fails_and_admits_no_new_file(run_scenario, isolated_storage):
    """A later attempt of a run whose file was cancelled (its worker died first) does not make the file again."""
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    _cancelled_file_for(run_scenario, schedule, run)

    assert process_run(run.id) == FailureCode.CANCELLED

    settled = run_row(run.id)
    assert (settled.status, settled.failure_code) == ("failed", FailureCode.CANCELLED)
    assert _files() == 1


def _admit_at(schedule: Schedule, hours_ago: int) -> ScheduleRun:
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=(utcnow() - timedelta(hours=hours_ago)).replace(minute=0, second=0, microsecond=0),
        trigger=RunTrigger.TIMETABLE,
    )
    assert run is not None
    return run


def test_a_cancelled_run_ends_the_failure_streak_so_the_next_failure_does_not_pause(run_scenario):
    """Two failed runs, a run whose file the owner cancelled, one more failed run: the streak counts
    failed runs in a row, the cancellation ended the row, so the schedule stays active at 1."""
    definition = {**run_scenario.query.definition(), "columns": ["no_such_column"]}
    schedule = run_scenario.make_schedule(query_definition=definition)
    limit = schedule_lifecycle.FAILURE_STREAK_LIMIT
    for hours_ago in range(limit + 1, 2, -1):
        assert process_run(_admit_at(schedule, hours_ago).id) == FailureCode.INVALID_REQUEST
    cancelled = _admit_at(schedule, 2)
    _cancelled_file_for(run_scenario, schedule, cancelled)

    assert process_run(cancelled.id) == FailureCode.CANCELLED
    assert _schedule(schedule.id).failure_streak == 0
    assert process_run(_admit_at(schedule, 1).id) == FailureCode.INVALID_REQUEST

    settled = _schedule(schedule.id)
    assert (settled.status, settled.pause_reason, settled.failure_streak) == ("active", None, 1)


def _schedule(schedule_id: int) -> Schedule:
    db.session.rollback()
    return db.session.get(Schedule, schedule_id, populate_existing=True)
