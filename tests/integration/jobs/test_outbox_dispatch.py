"""The outbox dispatcher: claims in the database first, one RQ job per claim, lost jobs dispatched again."""

from __future__ import annotations

from datetime import timedelta

from flask import current_app
from redis import Redis
from rq import Queue
from rq.job import Job

from app.domain.files import export_file
from app.extensions import db
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch, dispatch_pending
from app.services.work.engine import redispatch_lost
from app.services.work.queue import WorkPriority, redis_connection, work_queue
from tests.fixtures.workers import file_row


def _queued_job_ids() -> list[str]:
    return work_queue(WorkPriority.INTERACTIVE).get_job_ids()


def _flush_redis() -> None:
    Redis.from_url(current_app.config["SETTINGS"].redis_url).flushdb()


def test_dispatching_twice_enqueues_a_file_once(export_scenario):
    """A second dispatch pass finds nothing left to dispatch and enqueues nothing more."""
    export = export_scenario.request_file("csv")

    assert dispatch_pending(FILES) == 1
    assert dispatch_pending(FILES) == 0

    outbox = file_row(export.id).outbox
    assert _queued_job_ids() == [outbox.job_id]
    assert outbox.dispatch_count == 1
    assert outbox.job_id.startswith(f"export-file-{export.id}-")
    assert outbox.dispatched_at is not None


def test_dispatched_job_runs_the_export_entry_point_with_the_configured_timeout(export_scenario):
    """The enqueued job calls jobs.export_file.run with the file id and the export job timeout."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)

    job = Job.fetch(file_row(export.id).outbox.job_id, connection=redis_connection())
    assert (job.func_name, job.args) == (FILES.job_function, (export.id,))
    assert job.timeout == current_app.config["SETTINGS"].export_job_timeout
    assert job.origin == current_app.config["SETTINGS"].export_queue  # the interactive queue


def test_claim_on_a_job_id_already_taken_enqueues_nothing(export_scenario):
    """Two dispatchers that saw the same row: the second claim fails in the database and enqueues nothing."""
    export = export_scenario.request_file("csv")

    assert dispatch(FILES, export.id, None) is True
    assert dispatch(FILES, export.id, None) is False

    assert _queued_job_ids() == [file_row(export.id).outbox.job_id]
    assert file_row(export.id).outbox.dispatch_count == 1


def test_a_file_cancelled_before_its_dispatch_is_never_claimed(export_scenario):
    """The engine's one claim guards on the record's state for files too: a settled file's outbox
    row stays unclaimed and no job is enqueued for it."""
    export = export_scenario.request_file("csv")
    export_file.cancel(export.id, export.requester_id, "Cancelled before it started.")
    db.session.commit()

    assert dispatch_pending(FILES) == 0
    assert dispatch(FILES, export.id, None) is False

    assert _queued_job_ids() == []
    assert (file_row(export.id).outbox.job_id, file_row(export.id).outbox.dispatch_count) == (None, 0)


def test_job_still_in_redis_is_not_dispatched_again(export_scenario):
    """The lost-job check leaves alone a queued file whose job Redis still holds."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)

    assert redispatch_lost(utcnow() + timedelta(hours=1)) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_recent_dispatch_is_not_judged_lost(export_scenario):
    """A job dispatched seconds ago may still be on its way: no second dispatch yet, even if Redis lacks it."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)
    _flush_redis()

    assert redispatch_lost(utcnow()) == 0
    assert file_row(export.id).outbox.dispatch_count == 1


def test_queued_file_is_dispatched_again_however_often_its_job_is_lost(export_scenario):
    """A file queued for days whose jobs keep vanishing is never given up: each check dispatches it again."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)
    days_later = utcnow() + timedelta(days=2)

    for expected_count in (2, 3):
        _flush_redis()
        assert redispatch_lost(days_later) == 1
        assert file_row(export.id).outbox.dispatch_count == expected_count

    assert file_row(export.id).status == "queued"
    assert _queued_job_ids() == [file_row(export.id).outbox.job_id]


def test_job_rq_marked_failed_is_dispatched_again(export_scenario):
    """A job RQ failed (as it does after its worker vanished) counts as lost while the file is still queued."""
    export = export_scenario.request_file("csv")
    dispatch_pending(FILES)
    queue: Queue = work_queue(WorkPriority.INTERACTIVE)
    failed_job_id = file_row(export.id).outbox.job_id
    job = queue.fetch_job(failed_job_id)
    queue.remove(job)
    job.set_status("failed")

    assert redispatch_lost(utcnow() + timedelta(minutes=1)) == 1
    redispatched = file_row(export.id).outbox
    assert redispatched.dispatch_count == 2
    assert _queued_job_ids() == [redispatched.job_id] != [failed_job_id]
