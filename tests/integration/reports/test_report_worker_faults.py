"""A report PDF's job killed while it runs, as the out-of-memory killer would."""

from __future__ import annotations

import os
import signal
from datetime import timedelta
from pathlib import Path

from flask import current_app
from sqlalchemy import func, select

from app.extensions import db
from app.models import ExportFile, TimesheetEntry
from app.models.export_file import FileStatus
from app.models.types import utcnow
from app.services.files.file_work import FILES
from app.services.work.claims import dispatch_pending
from app.services.work.engine import redeliver_lapsed
from app.services.work.work_kind import LOST_AFTER
from tests.fixtures.workers import file_row, is_alive, let_the_lease_lapse, pending_uploads, wait_for

#: More than one 200-row block of the PDF table, so the job records progress while it lays out.
PDF_ROWS = 600


def _job_process(worker) -> int | None:
    """The worker's work-horse: the descendant that leads a process group of its own."""
    for pid in worker.descendants():
        try:
            after_name = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended while we looked
        if int(after_name[2]) == pid:
            return pid
    return None


def test_a_pdf_job_killed_while_running_completes_when_redelivered(kit, isolated_storage, start_worker, hold_lock):
    """SIGKILL of the job while it waits to record progress on its file's row, which the test holds
    locked (so the point is known): the redelivered file succeeds with every row and one stored object."""
    kit.add_rows(PDF_ROWS)
    export = kit.request(kit.report(kind="table"), "pdf")
    worker = start_worker(PROGRESS_INTERVAL="0")
    assert dispatch_pending(FILES) == 1

    wait_for(lambda: file_row(export.id).status == FileStatus.RUNNING, timeout=120, what="the file to start")
    file_locked = hold_lock("SELECT id FROM query_exports WHERE id = :id FOR UPDATE", id=export.id)
    wait_for(file_locked.waiters, timeout=90, what="the job to wait to record its progress")
    job = wait_for(lambda: _job_process(worker), timeout=30, what="the job process")
    os.kill(job, signal.SIGKILL)
    file_locked.release()
    wait_for(lambda: not is_alive(job), timeout=30, what="the job process to end")
    assert file_row(export.id).status == FileStatus.RUNNING

    let_the_lease_lapse(ExportFile, export.id)
    lease_lapsed_at = utcnow() + timedelta(seconds=current_app.config["SETTINGS"].lease_seconds + 1) + LOST_AFTER
    assert redeliver_lapsed(lease_lapsed_at) == 1
    wait_for(lambda: file_row(export.id).is_settled, timeout=180, what="the redelivered file to settle")

    produced = file_row(export.id)
    assert produced.status == FileStatus.SUCCEEDED, produced.failure_detail
    in_workspace = select(func.count()).where(TimesheetEntry.workspace_id == kit.world.workspace.id)
    assert (produced.attempt_count, produced.row_count) == (2, db.session.scalar(in_workspace))
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert pending_uploads(isolated_storage) == []
