"""The watchdog: running files whose holder's lease lapsed get a new job; endless stalls end as timeout."""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import current_app
from rq.job import Job
from rq.worker import Worker

from app.domain.files import export_file
from app.models.types import utcnow
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redeliver_lapsed
from app.services.work.kinds import FILES
from app.services.work.queue import WorkPriority, redis_connection, work_queue
from app.services.work.work_kind import LOST_AFTER
from tests.fixtures.workers import file_row

DEAD_WORKER = "exports-gone-4242"


def _lease() -> timedelta:
    return timedelta(seconds=current_app.config["SETTINGS"].lease_seconds)


def _after_the_lease_lapsed() -> datetime:
    """A watchdog clock past the lease taken now and past the dispatch's time in flight."""
    return utcnow() + _lease() + LOST_AFTER + timedelta(seconds=1)


def _taken_by_a_worker(export_id: int, worker_name: str = DEAD_WORKER) -> None:
    """Move the file's job from the queue into "started by `worker_name`", as an RQ worker taking it does."""
    connection = redis_connection()
    job = Job.fetch(file_row(export_id).outbox.job_id, connection=connection)
    work_queue(WorkPriority.INTERACTIVE).remove(job)
    with connection.pipeline() as pipeline:
        job.prepare_for_execution(worker_name, pipeline)
        pipeline.execute()


def _running_file(scenario):
    """A file whose job a worker took and started, holding a lease from now."""
    export = scenario.request_file("csv")
    dispatch_pending(FILES)
    _taken_by_a_worker(export.id)
    started_at = utcnow()
    export_file.start(export.id, now=started_at, holder=DEAD_WORKER, lease_expires_at=started_at + _lease())
    return export


def test_running_file_whose_lease_lapsed_is_dispatched_again(export_scenario):
    """A running file whose holder stopped renewing its lease gets a new job under a new id."""
    export = _running_file(export_scenario)
    first_job_id = file_row(export.id).outbox.job_id

    assert redeliver_lapsed(_after_the_lease_lapsed()) == 1

    outbox = file_row(export.id).outbox
    assert outbox.dispatch_count == 2 and outbox.job_id != first_job_id
    assert outbox.job_id in work_queue(WorkPriority.INTERACTIVE).get_job_ids()
    assert file_row(export.id).status == "running"


def test_running_file_with_a_renewed_lease_is_left_alone_however_old_its_progress(export_scenario):
    """A holder renewing its lease keeps the file, though it wrote no progress for longer than a lease."""
    export = _running_file(export_scenario)
    judged_at = _after_the_lease_lapsed()

    export_file.renew_lease(export.id, file_row(export.id).attempt_count, judged_at + timedelta(seconds=1))

    assert file_row(export.id).heartbeat_at < judged_at - _lease()
    assert redeliver_lapsed(judged_at) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_redelivery_waiting_in_the_queue_is_not_dispatched_twice(export_scenario):
    """While the new job waits for a worker, later watchdog turns leave the file to it."""
    export = _running_file(export_scenario)
    assert redeliver_lapsed(_after_the_lease_lapsed()) == 1

    assert redeliver_lapsed(_after_the_lease_lapsed() + timedelta(minutes=10)) == 0

    assert file_row(export.id).outbox.dispatch_count == 2
    assert work_queue(WorkPriority.INTERACTIVE).get_job_ids() == [file_row(export.id).outbox.job_id]


def _registered(worker_name: str) -> None:
    """The worker's key in Redis, as a live RQ worker keeps it."""
    redis_connection().hset(Worker.redis_worker_namespace_prefix + worker_name, "state", "busy")


def test_job_just_taken_by_another_live_worker_is_left_to_start_the_file(export_scenario):
    """A job a live worker took is not redelivered, though the file's lease lapsed: it will start the file."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)
    export_file.start(export.id)  # an attempt that left no lease: the file has no live holder
    _taken_by_a_worker(export.id, "exports-starting-1")
    _registered("exports-starting-1")

    assert redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_job_taken_by_a_worker_since_gone_is_redelivered(export_scenario):
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)
    export_file.start(export.id)
    _taken_by_a_worker(export.id, "exports-gone-1")

    assert redeliver_lapsed(utcnow() + LOST_AFTER + timedelta(seconds=1)) == 1
    assert file_row(export.id).outbox.dispatch_count == 2


def test_the_lapsed_holders_own_job_is_redelivered_whatever_time_its_worker_stamped_on_it(export_scenario):
    """RQ stamps a job's start with its worker's clock, which may run minutes ahead: the job that
    started the file and stopped renewing its lease is not a redelivery on its way."""
    export = _running_file(export_scenario)
    _registered(DEAD_WORKER)
    connection = redis_connection()
    job = Job.fetch(file_row(export.id).outbox.job_id, connection=connection)
    job.started_at = utcnow() + timedelta(minutes=5)
    job.save()

    assert redeliver_lapsed(_after_the_lease_lapsed()) == 1
    assert file_row(export.id).outbox.dispatch_count == 2


def test_queued_file_is_not_the_watchdogs_business(export_scenario):
    """Queued files are the lost-job check's concern; the watchdog judges running files only."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)

    assert redeliver_lapsed(_after_the_lease_lapsed()) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_file_abandoned_on_every_attempt_fails_with_timeout(export_scenario):
    """After the policy's last abandoned attempts the file is failed with timeout instead of looping forever."""
    export = _running_file(export_scenario)
    for _ in range(FILES.retries.max_attempts - 1):
        # Each redelivered attempt starts the file again once the one before it lapsed.
        export_file.start(export.id, now=_after_the_lease_lapsed())
    assert file_row(export.id).attempt_count == FILES.retries.max_attempts

    assert redeliver_lapsed(_after_the_lease_lapsed()) == 1

    failed = file_row(export.id)
    assert (failed.status, failed.failure_code) == ("failed", "timeout")
    assert f"started {FILES.retries.max_attempts} times" in failed.failure_detail
    assert failed.outbox.dispatch_count == 1
