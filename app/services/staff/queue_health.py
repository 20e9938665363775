"""What the staff's queue health page shows: each RQ queue with its length and oldest waiting
job, the workers (state, current job, last heartbeat), and the started, failed and scheduled
registries. Failed jobs are named by the record they work on (the work engine knows each job
function's kind, app/services/work/), so staff can requeue them through the product's own
dispatch (app/services/staff/staff_actions.py), never by editing Redis. A failed job is offered for
requeue only when its kind's requeue would accept the record now; otherwise the page says why not
(the record settled, its worker is alive, it is not the product's)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from rq import Queue
from rq.job import Job
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from app.services.work.engine import record_of
from app.services.work.queue import live_workers, work_queues
from app.services.work.requeue import requeue_of
from app.services.work.work_kind import RequeueRefused, WorkKind

FAILED_JOBS_SHOWN = 50


@dataclass(frozen=True)
class WorkerView:
    name: str
    state: str
    current_job: str | None
    last_heartbeat: datetime | None


@dataclass(frozen=True)
class FailedJobView:
    id: str
    description: str | None
    record_kind: str | None
    record_id: int | None
    ended_at: datetime | None
    error_type: str | None
    # Why its record cannot be dispatched again now; None when staff may requeue it.
    requeue_refused: str | None


@dataclass(frozen=True)
class QueueView:
    name: str
    length: int
    oldest_age_seconds: float | None
    workers: list[WorkerView]
    started: int
    scheduled: int
    failed: int
    failed_jobs: list[FailedJobView]


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _error_type(job: Job) -> str | None:
    """The exception's type only: its message and traceback may hold SQL and parameters (the log has them)."""
    result = job.latest_result()
    text = (result.exc_string if result is not None else None) or ""
    last = text.strip().splitlines()[-1] if text.strip() else ""
    return last.split(":", 1)[0][:100] or None


def _requeue_refusal(kind: WorkKind | None, record_id: int | None, now: datetime) -> str | None:
    """Why a staff requeue of the job's record would be refused now (the kind's own rules), or None.
    The kind's requeue only reads the record and says how it would dispatch it: nothing is dispatched here."""
    if kind is None or record_id is None:
        return "Not a job of the product's records, so it cannot be dispatched again."
    try:
        requeue_of(kind, record_id, now)
    except RequeueRefused as refused:
        return str(refused)
    return None


def queue_view(queue: Queue, now: datetime | None = None) -> QueueView:
    now = now or datetime.now(UTC)
    first = queue.get_job_ids(0, 1)
    oldest_job = queue.fetch_job(first[0]) if first else None
    enqueued_at = _aware(oldest_job.enqueued_at) if oldest_job is not None else None
    workers = [
        WorkerView(
            name=worker.name,
            state=getattr(worker.get_state(), "value", str(worker.get_state())),
            current_job=worker.get_current_job_id(),
            last_heartbeat=_aware(worker.last_heartbeat),
        )
        for worker in sorted(live_workers(queue), key=lambda w: w.name)
    ]
    failed_registry = FailedJobRegistry(queue=queue)
    failed_ids = failed_registry.get_job_ids(0, FAILED_JOBS_SHOWN - 1)
    failed_jobs = []
    for job in Job.fetch_many(failed_ids, connection=queue.connection):
        if job is None:
            continue
        kind, record_id = record_of(job)
        failed_jobs.append(
            FailedJobView(
                job.id,
                job.description or job.func_name,
                kind.name if kind is not None else None,
                record_id,
                _aware(job.ended_at),
                _error_type(job),
                _requeue_refusal(kind, record_id, now),
            )
        )
    return QueueView(
        name=queue.name,
        length=queue.count,
        oldest_age_seconds=(now - enqueued_at).total_seconds() if enqueued_at else None,
        workers=workers,
        started=StartedJobRegistry(queue=queue).count,
        scheduled=ScheduledJobRegistry(queue=queue).count,
        failed=failed_registry.count,
        failed_jobs=failed_jobs,
    )


def all_queues() -> list[QueueView]:
    return [queue_view(queue) for queue in work_queues()]
