"""A report PDF's job killed while its rendering processes work, as the out-of-memory killer would."""

from __future__ import annotations

import os
import signal
from datetime import timedelta
from pathlib import Path

from flask import current_app
from sqlalchemy import func, select

from app.extensions import db
from app.models import TimesheetEntry
from app.models.export_file import FileStatus
from app.models.types import utcnow
from app.services.outbox import LOST_AFTER, dispatch_pending
from app.services.watchdog import redeliver_stalled
from tests.fixtures.workers import file_row, is_alive, parent_of, pending_uploads, wait_for

#: Enough rows for several 400-row chunks, so that the body renders in rendering processes.
PDF_ROWS = 2_400
RENDERING_PROGRAM = b"app.rendering.pdf_processes"


def _rendering_processes(worker) -> list[int]:
    found = []
    for pid in worker.descendants():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # ended while we looked
        if RENDERING_PROGRAM in command:
            found.append(pid)
    return found


def test_a_killed_pdf_job_leaves_no_rendering_process_and_completes_when_redelivered(
    kit, isolated_storage, start_worker, hold_lock
):
    """SIGKILL of the job alone mid-PDF: its rendering processes exit, and the redelivered file succeeds."""
    kit.add_rows(PDF_ROWS)
    export = kit.request(kit.report(kind="table"), "pdf")
    # Every rendered chunk's progress is written at once, so the job stops at the first write it cannot make.
    worker = start_worker(REPORT_PDF_WORKERS="2", PROGRESS_INTERVAL="0")
    assert dispatch_pending() == 1

    rendering = wait_for(lambda: _rendering_processes(worker), timeout=90, what="the rendering processes")
    # With the file's row locked the job cannot record a chunk or settle: it is still mid-render when killed.
    file_locked = hold_lock("SELECT id FROM query_exports WHERE id = :id FOR UPDATE", id=export.id)
    wait_for(file_locked.waiters, timeout=90, what="the job to wait to record a rendered chunk")
    assert all(is_alive(pid) for pid in rendering)
    job_process = parent_of(rendering[0])
    os.kill(job_process, signal.SIGKILL)
    file_locked.release()
    # Their input closes with the job; each finishes the chunk in hand and exits.
    wait_for(lambda: not any(is_alive(pid) for pid in rendering), timeout=60, what="the rendering processes to exit")
    assert file_row(export.id).status == FileStatus.RUNNING

    lease_lapsed_at = utcnow() + timedelta(seconds=current_app.config["SETTINGS"].lease_seconds + 1) + LOST_AFTER
    assert redeliver_stalled(lease_lapsed_at) == 1
    wait_for(lambda: file_row(export.id).is_settled, timeout=180, what="the redelivered file to settle")

    produced = file_row(export.id)
    assert produced.status == FileStatus.SUCCEEDED, produced.failure_detail
    in_workspace = select(func.count()).where(TimesheetEntry.workspace_id == kit.world.workspace.id)
    assert (produced.attempt_count, produced.row_count) == (2, db.session.scalar(in_workspace))
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert pending_uploads(isolated_storage) == []
