"""What every kind of background work shares (docs/architecture.md "The work engine").

The database row, not Redis, is the truth about work to do. A dispatcher claims the row with a
guarded UPDATE naming the new job's id, commits, then enqueues (app/services/work/queue.py). The
checks here tell, from Redis, whether a claimed row's job will still run (`job_is_lost`, for
queued rows) or is about to start the row itself (`dispatch_is_waiting`, for running rows whose
lease lapsed); each kind's own SQL selects the candidate rows and its own guarded transitions
settle them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from redis import Redis
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.worker import Worker

from app.domain.errors import Conflict
from app.domain.timing.retry_policy import RetryPolicy
from app.domain.values.durations import duration_label
from app.services.work.leases import lease_seconds
from app.services.work.queue import WorkPriority

# A job dispatched this recently may still be on its way into Redis: no check judges it lost.
LOST_AFTER = timedelta(seconds=30)
# Statuses of a job that will still run: it waits on a queue or in a registry.
_WAITING_JOB_STATUSES = {JobStatus.CREATED, JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED}


def job_id(slug: str, record_id: int) -> str:
    """The id of a new job for the record: its kind's slug, its id, and a token of its own, so
    that every dispatch of one record is a different job (a failed job stays inspectable beside
    its redelivery)."""
    return f"{slug}-{record_id}-{uuid.uuid4().hex[:8]}"


def _claimed_job(connection: Redis, claimed_job_id: str | None) -> tuple[Job, JobStatus | None] | None:
    """The claimed job and its status, or None when no job was claimed or Redis no longer has it."""
    if claimed_job_id is None:
        return None
    try:
        job = Job.fetch(claimed_job_id, connection=connection)
    except NoSuchJobError:
        return None
    return job, job.get_status(refresh=False)


def job_is_lost(connection: Redis, claimed_job_id: str | None) -> bool:
    """True when the job will never run to its end: gone from Redis, failed, stopped, canceled,
    finished without settling its record, or started by a worker that no longer exists."""
    found = _claimed_job(connection, claimed_job_id)
    if found is None:
        return True
    job, status = found
    if status in _WAITING_JOB_STATUSES:
        return False
    if status == JobStatus.STARTED:
        # A worker's key expires soon after its last heartbeat: a dead worker's job stays "started".
        return not job.worker_name or not connection.exists(Worker.redis_worker_namespace_prefix + job.worker_name)
    return True


def dispatch_is_waiting(connection: Redis, claimed_job_id: str | None, holder: str | None) -> bool:
    """True while the row's latest job is queued, or was taken by a live worker other than the
    row's lapsed holder and has not started the row yet.

    Such a job will start the row itself (and take the lease); dispatching again would only
    queue a second attempt behind it. The job taken by the holder itself is the attempt whose
    lease lapsed, not a redelivery on its way. No time in Redis is read: RQ stamps a job with its
    worker's own clock, which may run minutes ahead or behind.
    """
    found = _claimed_job(connection, claimed_job_id)
    if found is None:
        return False
    job, status = found
    if status in _WAITING_JOB_STATUSES:
        return True
    if status == JobStatus.STARTED and job.worker_name and job.worker_name != holder:
        # A worker's key expires soon after its last heartbeat: a dead worker's job starts nothing.
        return bool(connection.exists(Worker.redis_worker_namespace_prefix + job.worker_name))
    return False


def holder_is_alive(lease_expires_at: datetime | None, now: datetime) -> bool:
    """Whether a running record's holder renewed its lease recently enough to still own it (the
    Python side of `app.models.types.lease_lapsed`)."""
    return lease_expires_at is not None and lease_expires_at >= now


class RequeueRefused(Conflict):
    """The record cannot be dispatched again now; the message says why, for the staff member."""

    @classmethod
    def finished(cls, label: str, status: str, afterwards: str = "") -> RequeueRefused:
        """Refused for a settled record: "File 21 has already finished (status: succeeded) …"."""
        return cls(f"{label} has already finished (status: {status}), so it never runs again.{afterwards}")


def refuse_while_held(label: str, doing: str, lease_expires_at: datetime | None, now: datetime) -> None:
    """RequeueRefused while a running record's lease has not lapsed, saying what is known: when its
    worker last renewed the lease, not that the worker is alive (a killed worker's lease runs on
    until it lapses)."""
    if lease_expires_at is None or not holder_is_alive(lease_expires_at, now):
        return
    renewed_ago = round((now - (lease_expires_at - timedelta(seconds=lease_seconds()))).total_seconds())
    lapses_in = round((lease_expires_at - now).total_seconds())
    raise RequeueRefused(
        f"{label} is {doing}: its worker last renewed its lease {duration_label(max(0, renewed_ago))} ago, so "
        f"it was not dispatched again. If that worker has stopped, the lease lapses in {duration_label(lapses_in)} "
        "and the watchdog dispatches it again then."
    )


@dataclass(frozen=True)
class Requeue:
    """A record staff may dispatch again: its workspace and audit subject, the name it goes by in
    a sentence ("File 12"), and its dispatch (claim, then enqueue; False when refused or not
    enqueued). The caller records the audit event before `dispatch`, whose claim commits both."""

    workspace_id: int
    subject_type: str
    label: str
    dispatch: Callable[[], bool]


# A periodic turn of one kind's own: enqueues what is due by `now`, returns how many records it enqueued.
Turn = Callable[[datetime], int]


@dataclass(frozen=True)
class Candidate:
    """A record a turn of the engine may dispatch again, as its kind's query read it.

    `job_id` is the job its last dispatch claimed (the engine asks Redis about it); `dispatch`
    claims the next dispatch from what was read, then enqueues (False when another dispatcher
    moved first). For a running record whose holder's lease lapsed, `attempt` is the holder's
    attempt (every transition the engine asks for is fenced on it), `attempts_used` what the
    kind's retry policy counts, and `holder` the lease holder, for the log.
    """

    record_id: int
    job_id: str | None
    dispatch: Callable[[], bool]
    attempt: int = 0
    attempts_used: int = 0
    holder: str | None = None


class LapsedRow(Protocol):
    """What a kind's `lapsed` query reads of a running record whose holder's lease lapsed."""

    id: int
    job_id: str | None
    attempt_count: int
    lease_holder: str | None


def lapsed_candidate(row: LapsedRow, dispatch: Callable[[], bool], attempts_used: int | None = None) -> Candidate:
    """The candidate for a lapsed record: fenced on its holder's attempt, whose policy counts its
    attempts so far unless the kind counts them otherwise (`attempts_used`)."""
    return Candidate(
        row.id,
        row.job_id,
        dispatch,
        attempt=row.attempt_count,
        attempts_used=row.attempt_count if attempts_used is None else attempts_used,
        holder=row.lease_holder,
    )


@dataclass(frozen=True)
class WorkKind:
    """What one kind of background record declares; the engine (engine.py) does the rest.

    Declared as data: `job_function` takes the record's id; `slug` starts its job ids
    (`job_id`); `priority` is the queue its jobs go on (a kind may name a more urgent one for a
    given record); `retries` is how often a record whose holder stopped is started again, and
    after what delay, before it is given up. The lease is one setting shared by every kind
    (`Settings.lease_seconds`): a live holder renews it, whatever its step's length.

    Declared as the kind's own SQL and guarded transitions: `dispatch_pending` enqueues rows
    never dispatched (or whose retry is due); `lost` lists queued rows dispatched longer than
    LOST_AFTER ago, and `lapsed` running rows whose holder's lease lapsed (the engine decides,
    from Redis and `retries`, which to dispatch again); `give_up` settles a lapsed record out of
    attempts, fenced on its attempt; `retry_later` records a lapsed attempt as failed with its
    next attempt due at the given time, for a kind whose `retries` has a backoff (without one,
    the engine dispatches the record again at once). `requeue` checks the kind's refusal rules
    for a staff requeue (a settled record, a running one whose holder is alive) and raises
    RequeueRefused, or says how to dispatch it.
    """

    name: str
    slug: str
    priority: WorkPriority
    job_function: str
    retries: RetryPolicy
    dispatch_pending: Turn
    lost: Callable[[datetime], Sequence[Candidate]]
    lapsed: Callable[[datetime], Sequence[Candidate]]
    give_up: Callable[[Candidate, datetime], bool]
    requeue: Callable[[int, datetime], Requeue]
    retry_later: Callable[[Candidate, datetime, datetime], bool] | None = None

    def __post_init__(self) -> None:
        if self.retries.backoff and self.retry_later is None:
            raise ValueError(f"work kind {self.name} has a backoff but no way to wait for it (retry_later)")
