"""A report PDF's job killed while it runs, as the out-of-memory killer would."""

from __future__ import annotations

import os
import signal
from datetime import timedelta
from pathlib import Path

from flask import current_app
from sqlalchemy import func, select

from app.extensions import db
from app.models import TimesheetEntry
from app.models.types import utcnow
from app.services.outbox import dispatch_pending
from app.services.watchdog import redeliver_stalled
from tests.fixtures.workers import file_row, is_alive, pending_uploads, wait_for

#: Enough rows that the job runs for a few seconds after it is caught.
PDF_ROWS = 5_000


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


def test_a_pdf_job_killed_while_running_completes_when_redelivered(kit, isolated_storage, start_worker):
    """SIGKILL of the job while its file is running (caught and frozen with SIGSTOP first, so the
    point is known): the redelivered file succeeds with every row and one stored object."""
    kit.add_rows(PDF_ROWS)
    export = kit.request(kit.report(kind="table"), "pdf")
    worker = start_worker()
    assert dispatch_pending() == 1

    def running_job() -> int | None:
        return _job_process(worker) if file_row(export.id).status == "running" else None

    job = wait_for(running_job, timeout=120, interval=0.02, what="the job producing the file")
    os.kill(job, signal.SIGSTOP)
    assert file_row(export.id).status == "running"
    os.kill(job, signal.SIGKILL)
    wait_for(lambda: not is_alive(job), timeout=30, what="the job process to end")
    assert file_row(export.id).status == "running"

    stall_judged_at = utcnow() + timedelta(seconds=current_app.config["SETTINGS"].stall_seconds + 1)
    assert redeliver_stalled(stall_judged_at) == 1
    wait_for(lambda: file_row(export.id).is_settled, timeout=180, what="the redelivered file to settle")

    produced = file_row(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    in_workspace = select(func.count()).where(TimesheetEntry.workspace_id == kit.world.workspace.id)
    assert (produced.attempt_count, produced.row_count) == (2, db.session.scalar(in_workspace))
    assert isolated_storage.list_keys("files/") == [produced.storage_key]
    assert pending_uploads(isolated_storage) == []
