"""The export-file outbox (INV-01): moving admitted requests onto RQ, and again when RQ lost them.

Every dispatch first claims the outbox row with a conditional UPDATE on the dispatch count it
saw, and commits, and only then enqueues (`queue.claim_and_enqueue`). Two schedulers on two
machines therefore never both enqueue the same dispatch; an enqueue that fails after the claim
leaves a row that looks dispatched but has no job, which `redispatch_lost` finds and dispatches
again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from redis import Redis
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.worker import Worker
from sqlalchemy import select, update

from app.domain.errors import TransitionRefused
from app.extensions import db, execute_dml
from app.models import QueryExport, QueryExportRequest
from app.models.export_file import FileStatus
from app.models.types import utcnow
from app.services.queue import ClaimedJob, WorkPriority, claim_and_enqueue, redis_connection

EXPORT_JOB = "jobs.export_file.run"
# A job that has been dispatched this recently may still be on its way into Redis.
LOST_AFTER = timedelta(seconds=30)
# Statuses of a job that will still run, or is running, on a live worker.
_PENDING_JOB_STATUSES = {JobStatus.CREATED, JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED}


def job_id_for(export_id: int, dispatch_number: int) -> str:
    return f"export-file-{export_id}-{dispatch_number}"


def dispatch_pending(limit: int = 100) -> int:
    """Enqueue outbox rows never dispatched yet; returns how many this call enqueued."""
    pending = db.session.execute(
        select(QueryExportRequest.id, QueryExportRequest.export_id, QueryExportRequest.dispatch_count)
        .where(QueryExportRequest.dispatched_at.is_(None))
        .order_by(QueryExportRequest.id)
        .limit(limit)
    ).all()
    db.session.rollback()
    return sum(dispatch(row.id, row.export_id, row.dispatch_count) for row in pending)


def dispatch_admitted(export: QueryExport) -> bool:
    """Dispatch a file's outbox row right after its admission committed, so a small file need not
    wait for the periodic dispatcher's next turn.

    The claim keeps the row single: if the periodic dispatcher got there first this enqueues
    nothing. A failed enqueue (Redis down) is logged, never raised: the file stays admitted with
    its claim, and the periodic dispatcher's lost-job check dispatches it again.
    """
    return dispatch(export.outbox.id, export.id, export.outbox.dispatch_count)


def dispatch(request_id: int, export_id: int, seen_dispatch_count: int) -> bool:
    """Claim the outbox row at the dispatch count the caller saw, commit, then enqueue a new job.

    Returns False when another dispatcher claimed it first (or the enqueue failed; the claim
    stands and the lost-job check retries it).
    """
    number = seen_dispatch_count + 1
    description = f"export file {export_id} (dispatch {number})"
    job = ClaimedJob(EXPORT_JOB, export_id, job_id_for(export_id, number), description, _priority(export_id))
    return claim_and_enqueue(lambda: _claim(request_id, seen_dispatch_count, job.job_id), job)


def _priority(export_id: int) -> WorkPriority:
    """A person waits for the file they asked for; a schedule's file is made for its run."""
    schedule_id = db.session.scalar(select(QueryExport.schedule_id).where(QueryExport.id == export_id))
    return WorkPriority.INTERACTIVE if schedule_id is None else WorkPriority.SCHEDULED


def _claim(request_id: int, seen_dispatch_count: int, job_id: str) -> None:
    """The next dispatch of the row is `job_id`'s, from the dispatch count the dispatcher saw. Committed."""
    claimed = execute_dml(
        update(QueryExportRequest)
        .where(QueryExportRequest.id == request_id, QueryExportRequest.dispatch_count == seen_dispatch_count)
        .values(dispatch_count=seen_dispatch_count + 1, dispatched_at=utcnow(), job_id=job_id)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:
        db.session.rollback()
        raise TransitionRefused(f"export request {request_id} was dispatched already past {seen_dispatch_count}")
    db.session.commit()


def redispatch_lost(now: datetime | None = None) -> int:
    """Dispatch again every queued file whose job Redis no longer has, or that can no longer run.

    `now` is the clock the dispatch age is judged by; the new dispatch records the real time.
    """
    now = now or utcnow()
    candidates = db.session.execute(
        select(
            QueryExportRequest.id,
            QueryExportRequest.export_id,
            QueryExportRequest.dispatch_count,
            QueryExportRequest.job_id,
        )
        .join(QueryExport, QueryExport.id == QueryExportRequest.export_id)
        .where(QueryExport.status == FileStatus.QUEUED, QueryExportRequest.dispatched_at < now - LOST_AFTER)
        .order_by(QueryExportRequest.id)
    ).all()
    db.session.rollback()
    if not candidates:
        return 0
    connection = redis_connection()
    lost = [row for row in candidates if job_is_lost(connection, row.job_id)]
    return sum(dispatch(row.id, row.export_id, row.dispatch_count) for row in lost)


def job_is_lost(connection: Redis, job_id: str | None) -> bool:
    """True when the job will never run to its end: gone from Redis, failed, stopped, canceled,
    finished without settling its file, or started by a worker that no longer exists."""
    if job_id is None:
        return True
    try:
        job = Job.fetch(job_id, connection=connection)
    except NoSuchJobError:
        return True
    status = job.get_status(refresh=False)
    if status in _PENDING_JOB_STATUSES:
        return False
    if status == JobStatus.STARTED:
        # A worker's key expires soon after its last heartbeat: a dead worker's job stays "started".
        return not job.worker_name or not connection.exists(Worker.redis_worker_namespace_prefix + job.worker_name)
    return True
