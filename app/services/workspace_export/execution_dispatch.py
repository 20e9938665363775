"""Moving admitted workspace exports onto RQ, and again when RQ lost them (as schedule runs do).

Every dispatch first claims the execution with the job id it saw (`export_execution.claim_dispatch`,
a guarded UPDATE) and commits, and only then enqueues (`queue.claim_and_enqueue`): two dispatchers
on two machines never both enqueue the same dispatch. An enqueue that fails after the claim leaves
an execution that looks dispatched but has no job; the engine's lost-job turn finds it (`lost`)
and dispatches it again. The kind's spec is `app.services.work.kinds.EXECUTIONS`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import select

from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ACTIVE_EXECUTION_STATUSES, ExecutionStatus, ExportExecution
from app.services.work.queue import ClaimedJob, WorkPriority, claim_and_enqueue
from app.services.work.work_kind import LOST_AFTER, Candidate, Requeue, RequeueRefused, job_id, refuse_while_held

EXECUTION_JOB = "jobs.package_execution.run"
EXECUTION_JOB_SLUG = "package-execution"


def dispatch(execution_id: int, seen_job_id: str | None) -> bool:
    """Claim the execution's dispatch from the job id the caller saw, commit, then enqueue.

    False when another dispatcher claimed it first, when it is no longer queued or running, or
    when the enqueue failed (the claim stands; the lost-job check dispatches it again).
    """
    job = ClaimedJob(
        EXECUTION_JOB,
        execution_id,
        job_id(EXECUTION_JOB_SLUG, execution_id),
        f"workspace export {execution_id}",
        WorkPriority.BULK,
    )
    return claim_and_enqueue(lambda: export_execution.claim_dispatch(execution_id, seen_job_id, job.job_id), job)


def dispatch_queued(limit: int = 100) -> int:
    """Enqueue queued executions never dispatched (their admission's own dispatch failed)."""
    rows = db.session.scalars(
        select(ExportExecution.id)
        .where(ExportExecution.status == ExecutionStatus.QUEUED, ExportExecution.job_id.is_(None))
        .order_by(ExportExecution.id)
        .limit(limit)
    ).all()
    db.session.rollback()
    return sum(dispatch(execution_id, None) for execution_id in rows)


def lost(now: datetime) -> list[Candidate]:
    """Queued executions dispatched longer than LOST_AFTER before `now`, for the engine's lost-job turn."""
    rows = db.session.execute(
        select(ExportExecution.id, ExportExecution.job_id).where(
            ExportExecution.status == ExecutionStatus.QUEUED,
            ExportExecution.job_id.is_not(None),
            ExportExecution.dispatched_at < now - LOST_AFTER,
        )
    ).all()
    db.session.rollback()
    return [Candidate(row.id, row.job_id, partial(dispatch, row.id, row.job_id)) for row in rows]


def requeue(execution_id: int, now: datetime) -> Requeue:
    """A staff requeue of the execution: refused once it settled, or while its holder is alive (a
    second attempt beside a live one would find it held, and could only wait)."""
    execution = db.session.get(ExportExecution, execution_id)
    if execution is None:
        raise RequeueRefused(f"Workspace export {execution_id} no longer exists.")
    label = f"Workspace export {execution_id}"
    if execution.status not in ACTIVE_EXECUTION_STATUSES:
        raise RequeueRefused.finished(label, execution.status)
    if execution.status == ExecutionStatus.RUNNING:
        refuse_while_held(label, "running", execution.lease_expires_at, now)
    seen_job_id = execution.job_id
    return Requeue(
        execution.workspace_id,
        "execution",
        label,
        lambda: dispatch(execution_id, seen_job_id),
    )
