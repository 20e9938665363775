"""Schedule runs as a kind of the work engine: where their records and claims are, and what the
engine cannot know of them, how a run's stops are counted and how a run whose workers kept
dying is given up. `app.services.work.kinds` registers it; what a run's job does is
app/services/schedules/schedule_runs.py."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_

from app.domain.errors import TransitionRefused
from app.domain.schedules import schedule_run
from app.domain.timing.retry_policy import RESTART_A_FILE_OR_RUN
from app.extensions import db
from app.models.export_file import FailureCode
from app.models.schedule import ACTIVE_RUN_STATUSES, RunStatus, ScheduleRun
from app.services.schedules import schedule_delivery
from app.services.schedules.schedule_runs import attempts_failed_with, settle_schedule
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import Candidate, WorkKind
from app.services.work.work_rows import WorkRows


def _stops(run_id: int, attempt: int) -> int:
    """What the retry policy counts of a run whose holder's lease lapsed: its attempts that ended
    with the worker gone, this one included (an attempt that waited for the mail server is the
    mail backoff's, not a stop)."""
    return attempts_failed_with(run_id, {schedule_run.WORKER_STOPPED}) + 1


def _give_up(candidate: Candidate, now: datetime) -> bool:
    """Fail the run with `timeout`, fenced on the attempt whose holder stopped; its unsent
    recipient rows are failed with it."""
    run_id, attempt = candidate.record_id, candidate.attempt
    try:
        run = db.session.get_one(ScheduleRun, run_id)
        schedule_id, workspace_id = run.schedule_id, run.workspace_id
        schedule_run.fail(
            run_id,
            attempt,
            FailureCode.TIMEOUT,
            f"The run's worker stopped {candidate.attempts_used} times before it could finish, so it was given up.",
        )
        settle_schedule(schedule_id, workspace_id, failed=True)
        db.session.commit()
    except TransitionRefused:
        return False
    schedule_delivery.fail_pending(run_id, attempt, "The run was given up before this message was sent.")
    return True


RUNS = WorkKind(
    name="run",
    slug="schedule-run",
    priority=WorkPriority.SCHEDULED,
    job_function="jobs.schedule_run.run",
    # A run whose worker stopped is started again at once; the fifth stop fails it.
    retries=RESTART_A_FILE_OR_RUN,
    attempts_used=_stops,
    rows=WorkRows.leased(
        ScheduleRun,
        active=ACTIVE_RUN_STATUSES,
        running=RunStatus.RUNNING,
        # Admitted by the ticker or "Run now", or waiting for a retry whose delay has passed.
        waiting=lambda now: (
            (ScheduleRun.status == RunStatus.QUEUED)
            & or_(ScheduleRun.next_attempt_at.is_(None), ScheduleRun.next_attempt_at <= now)
        ),
    ),
    label="Schedule run",
    subject_type="schedule_run",
    # A second attempt beside a live one would send its recipients' messages again.
    held_doing="running",
    give_up=_give_up,
)
