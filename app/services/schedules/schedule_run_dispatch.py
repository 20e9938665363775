"""Moving schedule runs onto RQ, again when RQ lost them, and again when the worker holding one
died (the kind's spec is `app.services.work.kinds.RUNS`): claim, then enqueue, as every kind does.
What a run's job does is app/services/schedules/schedule_runs.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.schedules import schedule_run
from app.domain.timing.retry_policy import RetryPolicy
from app.extensions import db
from app.models.export_file import FailureCode
from app.models.schedule import ACTIVE_RUN_STATUSES, RunStatus, ScheduleRun
from app.models.types import utcnow
from app.services.schedules import schedule_delivery
from app.services.schedules.schedule_runs import attempts_failed_with, settle_schedule
from app.services.work import leases, work_kind
from app.services.work.queue import ClaimedJob, WorkPriority, claim_and_enqueue, enqueue_claimed

RUN_JOB = "jobs.schedule_run.run"
RUN_JOB_SLUG = "schedule-run"
# A run whose worker stopped is started again at once; the fifth stop fails it.
RETRIES = RetryPolicy(max_attempts=5)


def dispatch(run_id: int, seen_job_id: str | None) -> bool:
    """Claim the run's dispatch from the job id the caller saw, commit, then enqueue."""
    job = _run_job(run_id, work_kind.job_id(RUN_JOB_SLUG, run_id))
    return claim_and_enqueue(lambda: schedule_run.claim_dispatch(run_id, seen_job_id, job.job_id), job)


def dispatch_many(run_ids: Sequence[int]) -> int:
    """Dispatch freshly admitted runs (the ticker's batch): claims first, then one Redis pipeline."""
    claimed = schedule_run.claim_dispatches({run_id: work_kind.job_id(RUN_JOB_SLUG, run_id) for run_id in run_ids})
    return enqueue_claimed([_run_job(run_id, claimed_job_id) for run_id, claimed_job_id in claimed])


def _run_job(run_id: int, claimed_job_id: str) -> ClaimedJob:
    return ClaimedJob(RUN_JOB, run_id, claimed_job_id, f"schedule run {run_id}", WorkPriority.SCHEDULED)


def dispatch_queued(now: datetime | None = None, limit: int = 500) -> int:
    """Enqueue queued runs not dispatched yet: admitted by "Run now", or whose retry is due."""
    now = now or utcnow()
    rows = (
        db.session.execute(
            select(ScheduleRun.id)
            .where(
                ScheduleRun.status == RunStatus.QUEUED,
                ScheduleRun.dispatched_at.is_(None),
                (ScheduleRun.next_attempt_at.is_(None)) | (ScheduleRun.next_attempt_at <= now),
            )
            .order_by(ScheduleRun.id)
            .limit(limit)
        )
        .scalars()
        .all()
    )
    db.session.rollback()
    return dispatch_many(rows)


def lost(now: datetime) -> list[work_kind.Candidate]:
    """Queued runs dispatched longer than LOST_AFTER before `now`, for the engine's lost-job turn."""
    rows = db.session.execute(
        select(ScheduleRun.id, ScheduleRun.job_id).where(
            ScheduleRun.status == RunStatus.QUEUED, ScheduleRun.dispatched_at < now - work_kind.LOST_AFTER
        )
    ).all()
    db.session.rollback()
    return [work_kind.Candidate(row.id, row.job_id, partial(dispatch, row.id, row.job_id)) for row in rows]


def lapsed(now: datetime) -> list[work_kind.Candidate]:
    """Running runs whose holder's lease lapsed by `now`. What the retry policy counts is the
    run's stops: its attempts that ended with the worker gone, this one included (an attempt that
    waited for the mail server is the mail backoff's, not a stop)."""
    rows = db.session.execute(
        select(ScheduleRun.id, ScheduleRun.job_id, ScheduleRun.attempt_count, ScheduleRun.lease_holder).where(
            ScheduleRun.status == RunStatus.RUNNING,
            leases.lease_lapsed(ScheduleRun.lease_expires_at, now),
            ScheduleRun.dispatched_at < now - work_kind.LOST_AFTER,
        )
    ).all()
    db.session.rollback()
    return [
        work_kind.lapsed_candidate(
            row,
            partial(dispatch, row.id, row.job_id),
            attempts_used=attempts_failed_with(row.id, {schedule_run.WORKER_STOPPED}) + 1,
        )
        for row in rows
    ]


def give_up(candidate: work_kind.Candidate, now: datetime) -> bool:
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


def requeue(run_id: int, now: datetime) -> work_kind.Requeue:
    """A staff requeue of the run: refused once it settled, or while its holder is alive (a second
    attempt beside a live one would send its recipients' messages again)."""
    run = db.session.get(ScheduleRun, run_id)
    if run is None:
        raise work_kind.RequeueRefused(f"Schedule run {run_id} no longer exists.")
    if run.status not in ACTIVE_RUN_STATUSES:
        raise work_kind.RequeueRefused.finished(f"Schedule run {run_id}", run.status)
    if run.status == RunStatus.RUNNING:
        work_kind.refuse_while_held(f"Schedule run {run_id}", "running", run.lease_expires_at, now)
    seen_job_id = run.job_id
    return work_kind.Requeue(
        run.workspace_id, "schedule_run", f"Schedule run {run_id}", lambda: dispatch(run_id, seen_job_id)
    )
