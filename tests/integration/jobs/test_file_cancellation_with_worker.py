"""Cancelling files that real rq workers are about to make or are making: nothing is stored, no upload is
left open, and the file stays cancelled."""

from __future__ import annotations

from rq.job import Job

from app.domain.people.access import current_context
from app.models import TimesheetEntry
from app.models.export_file import FailureCode, FileStatus
from app.services.files.file_cancellation import cancel_file
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.queue import redis_connection
from tests.fixtures.workers import file_row, pending_uploads, wait_for

EXPORT_ROWS = 3000
PREFIX = "exports"
PART_SIZE = 5 * 1024


def _cancel(export_scenario, export) -> None:
    access = current_context(export_scenario.workspace.id, export_scenario.requester.id)
    cancel_file(access, file_row(export.id))


def _job_of(export) -> Job:
    return Job.fetch(file_row(export.id).outbox.job_id, connection=redis_connection())


def _finished(job: Job) -> bool:
    return job.get_status(refresh=True) == "finished"


def _assert_cancelled(export) -> None:
    settled = file_row(export.id)
    assert (settled.status, settled.failure_code) == (FileStatus.FAILED, FailureCode.CANCELLED)


def test_queued_file_cancelled_before_a_worker_takes_it_is_never_made(export_scenario, isolated_storage, start_worker):
    export_scenario.add_timesheet_rows(20)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    _cancel(export_scenario, export)
    start_worker()

    job = _job_of(export)
    wait_for(lambda: _finished(job), timeout=60, what="the worker to acknowledge the cancelled file")
    assert job.return_value() == "already_settled"
    _assert_cancelled(export)
    assert file_row(export.id).attempt_count == 0
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []


def test_running_file_cancelled_stops_its_worker_which_aborts_the_upload(
    export_scenario, isolated_storage, start_worker, hold_lock
):
    """The worker has begun the upload and waits for the rows; after the cancel its next progress write is
    refused, and it aborts: no object, no staging folder left."""
    export_scenario.add_timesheet_rows(EXPORT_ROWS)
    export = export_scenario.request_file("xlsx")
    assert dispatch_pending(FILES) == 1
    rows = hold_lock(f"LOCK TABLE {TimesheetEntry.__tablename__} IN ACCESS EXCLUSIVE MODE")
    start_worker(PROGRESS_INTERVAL="0")
    wait_for(rows.waiters, timeout=60, what="the worker's job to wait for its rows")
    assert file_row(export.id).status == FileStatus.RUNNING
    assert len(pending_uploads(isolated_storage)) == 1

    _cancel(export_scenario, export)
    rows.release()
    job = _job_of(export)
    wait_for(lambda: _finished(job), timeout=60, what="the worker to stop making the file")

    assert job.return_value() == "superseded"
    _assert_cancelled(export)
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []


def test_running_file_cancelled_leaves_no_multipart_upload_in_s3(
    export_scenario, storage_on_s3, s3_client, start_worker, hold_lock
):
    """Through moto's S3: parts were being sent when the file was cancelled; the upload is aborted."""
    _, bucket = storage_on_s3
    export_scenario.add_timesheet_rows(EXPORT_ROWS)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    rows = hold_lock(f"LOCK TABLE {TimesheetEntry.__tablename__} IN ACCESS EXCLUSIVE MODE")
    start_worker(PROGRESS_INTERVAL="0")
    wait_for(rows.waiters, timeout=60, what="the worker's job to wait for its rows")
    assert len(s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])) == 1

    _cancel(export_scenario, export)
    rows.release()
    job = _job_of(export)
    wait_for(lambda: _finished(job), timeout=60, what="the worker to stop making the file")

    assert job.return_value() == "superseded"
    _assert_cancelled(export)
    assert s3_client.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/files/").get("KeyCount") == 0
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
