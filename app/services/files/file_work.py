"""Export files as a kind of the work engine (DESIGN §6, §9): where their records and claims are,
and what the engine cannot know of them, the queue a file's job goes on and how a file whose
workers kept dying is given up. `app.services.work.kinds` registers it.

A file's claims stay on its outbox row (INV-01), committed with the file at its admission: the
engine claims the row (app/services/work/claims.py) and enqueues. RQ does not redeliver the
job of a killed worker (it ends up failed, much later), so the database decides: a running file
whose lease lapsed (app/services/work/leases.py) lost its holder and gets a new job, which
restarts it into the same key; a slow but live attempt keeps renewing and is never judged
stalled, however long one step takes (a hung one is ended by the job timeout). A file that
stalls again and again is failed with `timeout` so that nothing loops forever.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.files import export_file
from app.domain.timing.retry_policy import RESTART_A_FILE_OR_RUN
from app.extensions import db
from app.models import ExportFile, ExportFileRequest
from app.models.export_file import ACTIVE_FILE_STATUSES, FailureCode, FileStatus
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import Candidate, WorkKind
from app.services.work.work_rows import WorkRows


def _priority(export_id: int) -> WorkPriority:
    """A person waits for the file they asked for; a schedule's file is made for its run."""
    schedule_id = db.session.scalar(select(ExportFile.schedule_id).where(ExportFile.id == export_id))
    return WorkPriority.INTERACTIVE if schedule_id is None else WorkPriority.SCHEDULED


def _give_up(candidate: Candidate, now: datetime) -> bool:
    """Fail the file with `timeout`, fenced on the attempt whose holder stopped."""
    detail = (
        f"The file was started {candidate.attempt} times and each time the worker producing it stopped "
        "(it was killed or its machine went away), so it was given up."
    )
    try:
        export_file.fail(candidate.record_id, candidate.attempt, FailureCode.TIMEOUT, detail)
    except TransitionRefused:
        return False
    return True


FILES = WorkKind(
    name="file",
    slug="export-file",
    priority=WorkPriority.INTERACTIVE,
    priority_of=_priority,
    job_function="jobs.export_file.run",
    # A file whose worker stopped is started again at once, up to five attempts in all.
    retries=RESTART_A_FILE_OR_RUN,
    rows=WorkRows.leased(
        ExportFile,
        active=ACTIVE_FILE_STATUSES,
        running=FileStatus.RUNNING,
        waiting=lambda now: ExportFile.status == FileStatus.QUEUED,
        claims=ExportFileRequest,
        record_key=ExportFileRequest.export_id,
        dispatch_count=ExportFileRequest.dispatch_count,
    ),
    label="File",
    subject_type="file",
    held_doing="being produced",
    finished_afterwards=" Its requester can request a new one.",
    give_up=_give_up,
)
