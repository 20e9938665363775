"""What every kind of background work shares (docs/architecture.md "The work engine").

The database row, not Redis, is the truth about work to do. A dispatcher claims the row with a
guarded UPDATE naming the new job's id, commits, then enqueues (app/services/work/queue.py). The
checks here tell, from Redis, whether a claimed row's job will still run (`job_is_lost`, for
queued rows) or is about to start the row itself (`dispatch_is_waiting`, for running rows whose
lease lapsed); the engine selects the candidate rows from each kind's declaration (`WorkKind`),
and the kind's own guarded transitions settle those it gives up.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from redis import Redis
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from app.domain.errors import Conflict
from app.domain.timing.retry_policy import RetryPolicy
from app.domain.values.durations import duration_label
from app.services.work.leases import lease_seconds
from app.services.work.queue import WorkPriority, worker_is_live
from app.services.work.work_rows import WorkRows

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
        return not worker_is_live(connection, job.worker_name)
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
    if status == JobStatus.STARTED and job.worker_name != holder:
        return worker_is_live(connection, job.worker_name)
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


@dataclass(frozen=True)
class Candidate:
    """A record a turn of the engine may dispatch again, as app/services/work/candidates.py read it.

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


@dataclass(frozen=True)
class WorkKind:
    """What one kind of background record declares; the engine does the rest: its claim and
    dispatches (claims.py), its lost and lapsed records (candidates.py), its turns (engine.py)
    and its staff requeue (requeue.py).

    `rows` says where its records and their claims are (work_rows.py). `job_function` takes the
    record's id; `slug` starts its job ids (`job_id`); `priority` is the queue its jobs go on,
    unless `priority_of` names one for a given record; `retries` is how often a record whose
    holder stopped is started again, and after what delay, before it is given up (the lease is
    one setting shared by every kind, `Settings.lease_seconds`). `label` names a record in a
    sentence ("File 12"), `subject_type` in the audit log.

    What differs by kind, as its own guarded transitions: `give_up` settles a lapsed record out
    of attempts, fenced on its attempt; `retry_later` records a lapsed attempt as failed with its
    next attempt due at the given time, for a kind whose `retries` has a backoff (without one, the
    engine dispatches the record again at once); `attempts_used(record_id, attempt)` is what
    `retries` counts when not the attempt number. A staff requeue is refused as requeue.py says,
    with `held_doing` saying what a held record is doing and `finished_afterwards` what a person
    may do once it settled; `before_requeue(record, now)` refuses more (RequeueRefused), or
    returns a transition to make before the dispatch (then claimed afresh).
    """

    name: str
    slug: str
    priority: WorkPriority
    job_function: str
    retries: RetryPolicy
    rows: WorkRows
    label: str
    subject_type: str
    held_doing: str
    give_up: Callable[[Candidate, datetime], bool]
    retry_later: Callable[[Candidate, datetime, datetime], bool] | None = None
    priority_of: Callable[[int], WorkPriority] | None = None
    attempts_used: Callable[[int, int], int] | None = None
    finished_afterwards: str = ""
    before_requeue: Callable[[Any, datetime], Callable[[], None] | None] | None = None

    def __post_init__(self) -> None:
        if self.retries.backoff and self.retry_later is None:
            raise ValueError(f"work kind {self.name} has a backoff but no way to wait for it (retry_later)")
