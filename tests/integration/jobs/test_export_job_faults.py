"""Faults on the way from outbox to stored file: dead workers, an emptied Redis, storage refusing writes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask import current_app
from redis import Redis
from rq.job import Job

from app.domain.files import export_file
from app.models import ExportFile, TimesheetEntry
from app.models.export_file import FailureCode, FileStatus
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redeliver_lapsed, redispatch_lost
from app.services.work.queue import WorkPriority, redis_connection, work_queue
from app.services.work.work_kind import LOST_AFTER
from tests.fixtures.workers import file_row, let_the_lease_lapse, pending_uploads, wait_for

EXPORT_ROWS = 50


def _settled(export_id: int) -> bool:
    return file_row(export_id).is_settled


def _lease_lapsed_at():
    """A watchdog clock far enough ahead that any lease taken or renewed until now has lapsed."""
    return utcnow() + timedelta(seconds=current_app.config["SETTINGS"].lease_seconds + 1) + LOST_AFTER


def _hold_the_rows(hold_lock):
    """Lock the rows' table: a job that has started its attempt and opened its upload waits there to read them."""
    return hold_lock(f"LOCK TABLE {TimesheetEntry.__tablename__} IN ACCESS EXCLUSIVE MODE")


def test_worker_killed_mid_export_is_redelivered_and_ends_with_one_stored_object(
    export_scenario, isolated_storage, start_worker, hold_lock
):
    """SIGKILL of a worker mid-file: the watchdog redelivers, a new worker restarts into the same key and succeeds."""
    export_scenario.add_timesheet_rows(EXPORT_ROWS)
    export = export_scenario.request_file("xlsx")
    assert dispatch_pending(FILES) == 1
    rows = _hold_the_rows(hold_lock)
    first = start_worker()
    wait_for(rows.waiters, timeout=60, what="the first worker's job to wait for its rows")
    first.kill()
    rows.release()
    assert file_row(export.id).status == FileStatus.RUNNING
    assert len(pending_uploads(isolated_storage)) == 1  # the dead attempt's upload, never completed

    let_the_lease_lapse(ExportFile, export.id)
    assert redeliver_lapsed(_lease_lapsed_at()) == 1
    start_worker()
    wait_for(lambda: _settled(export.id), timeout=60, what="the redelivered file to settle")

    produced = file_row(export.id)
    assert produced.status == FileStatus.SUCCEEDED, produced.failure_detail
    assert produced.attempt_count == 2
    assert produced.row_count == EXPORT_ROWS
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert isolated_storage.size(produced.storage_key) == produced.size_bytes
    assert pending_uploads(isolated_storage) == []


def test_file_settled_while_a_worker_produces_it_stays_as_settled(
    export_scenario, isolated_storage, start_worker, hold_lock
):
    """A producing worker whose file was failed meanwhile stops, aborts its upload and leaves the row alone."""
    export_scenario.add_timesheet_rows(EXPORT_ROWS)
    export = export_scenario.request_file("xlsx")
    assert dispatch_pending(FILES) == 1
    rows = _hold_the_rows(hold_lock)
    start_worker(PROGRESS_INTERVAL="0")
    wait_for(rows.waiters, timeout=60, what="the worker's job to wait for its rows")
    assert len(pending_uploads(isolated_storage)) == 1

    export_file.fail(export.id, 1, FailureCode.TIMEOUT, "Given up by the watchdog.")
    rows.release()
    job = Job.fetch(file_row(export.id).outbox.job_id, connection=redis_connection())
    wait_for(lambda: job.get_status() == "finished", timeout=60, what="the worker to stop producing")

    assert job.return_value() == "superseded"
    settled = file_row(export.id)
    assert (settled.status, settled.failure_code, settled.failure_detail) == (
        FileStatus.FAILED,
        FailureCode.TIMEOUT,
        "Given up by the watchdog.",
    )
    assert isolated_storage.list_keys("files/") == []
    assert pending_uploads(isolated_storage) == []


def test_file_completes_after_redis_lost_its_dispatched_job(export_scenario, isolated_storage, start_worker):
    """Redis emptied after dispatch: the lost-job check dispatches the file again and a worker completes it."""
    export_scenario.add_timesheet_rows(20)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    Redis.from_url(current_app.config["SETTINGS"].redis_url).flushdb()

    assert redispatch_lost(utcnow() + timedelta(seconds=31)) == 1
    outbox = file_row(export.id).outbox
    assert outbox.dispatch_count == 2
    assert work_queue(WorkPriority.INTERACTIVE).get_job_ids() == [outbox.job_id]
    start_worker()
    wait_for(lambda: _settled(export.id), what="the file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    assert isolated_storage.list_keys("files/") == [produced.storage_key]


def test_storage_folder_refusing_the_object_fails_the_file_with_storage_error(
    export_scenario, isolated_storage, start_worker
):
    """Storage that takes the parts but cannot publish the object: failed/storage_error, upload aborted."""
    storage = isolated_storage
    root = storage.root
    (root / "files").write_text("a regular file where the files folder should be")
    export_scenario.add_timesheet_rows(20)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    start_worker()
    wait_for(lambda: _settled(export.id), what="the file to settle")

    failed = file_row(export.id)
    assert failed.status == "failed"
    assert failed.failure_code == "storage_error"
    assert failed.failure_detail.startswith("The file could not be stored")
    assert f"file {export.id}" in failed.failure_detail
    assert failed.storage_key not in failed.failure_detail and str(root) not in failed.failure_detail
    assert not storage.exists(failed.storage_key)
    assert pending_uploads(storage) == []


@pytest.mark.environment(STORAGE_URL="s3://no-such-bucket/exports")
def test_missing_s3_bucket_fails_the_file_with_storage_error(export_scenario, storage_on_s3, start_worker):
    """An S3 bucket that does not exist: failed/storage_error; S3's reason goes to the log, not the detail."""
    export_scenario.add_timesheet_rows(5)
    export = export_scenario.request_file("csv")
    assert dispatch_pending(FILES) == 1
    worker = start_worker()
    wait_for(lambda: _settled(export.id), what="the file to settle")

    failed = file_row(export.id)
    assert failed.failure_code == "storage_error"
    assert failed.failure_detail.startswith("The file could not be stored")
    assert "no-such-bucket" not in failed.failure_detail
    assert f"export file {export.id}: storage refused the upload" in worker.output()
    assert "NoSuchBucket" in worker.output()
