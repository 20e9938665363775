"""The export-file outbox (INV-01): moving admitted requests onto RQ, and again when RQ lost them.

Every dispatch first claims the outbox row with a conditional UPDATE on the dispatch count it
saw, and commits, and only then enqueues (`queue.claim_and_enqueue`). Two schedulers on two
machines therefore never both enqueue the same dispatch; an enqueue that fails after the claim
leaves a row that looks dispatched but has no job, which the engine's lost-job turn finds (`lost`)
and dispatches again. The kind's spec is `app.services.work.kinds.FILES`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import select, update

from app.domain.errors import TransitionRefused
from app.extensions import db, execute_dml
from app.models import ExportFile, ExportFileRequest
from app.models.export_file import ACTIVE_FILE_STATUSES, FileStatus
from app.models.types import database_now
from app.services.work.queue import ClaimedJob, WorkPriority, claim_and_enqueue
from app.services.work.work_kind import LOST_AFTER, Candidate, Requeue, RequeueRefused, job_id, refuse_while_held

EXPORT_JOB = "jobs.export_file.run"
EXPORT_JOB_SLUG = "export-file"


def dispatch_pending(limit: int = 100) -> int:
    """Enqueue outbox rows never dispatched yet; returns how many this call enqueued."""
    pending = db.session.execute(
        select(ExportFileRequest.id, ExportFileRequest.export_id, ExportFileRequest.dispatch_count)
        .where(ExportFileRequest.dispatched_at.is_(None))
        .order_by(ExportFileRequest.id)
        .limit(limit)
    ).all()
    db.session.rollback()
    return sum(dispatch(row.id, row.export_id, row.dispatch_count) for row in pending)


def dispatch_admitted(export: ExportFile) -> bool:
    """Dispatch a file's outbox row right after its admission committed, so a small file need not
    wait for the periodic dispatcher's next turn.

    The claim keeps the row single: if the periodic dispatcher got there first this enqueues
    nothing. A failed enqueue (Redis down) is logged, never raised: the file stays admitted with
    its claim, and the periodic dispatcher's lost-job check dispatches it again.
    """
    return dispatch(export.outbox.id, export.id, export.outbox.dispatch_count)


def dispatch(request_id: int, export_id: int, seen_dispatch_count: int) -> bool:
    """Claim the outbox row at the dispatch count the caller saw, commit, then enqueue a new job.

    Returns False when another dispatcher claimed it first (or the enqueue failed; the claim
    stands and the lost-job check retries it).
    """
    number = seen_dispatch_count + 1
    description = f"export file {export_id} (dispatch {number})"
    job = ClaimedJob(EXPORT_JOB, export_id, job_id(EXPORT_JOB_SLUG, export_id), description, _priority(export_id))
    return claim_and_enqueue(lambda: _claim(request_id, seen_dispatch_count, job.job_id), job)


def _priority(export_id: int) -> WorkPriority:
    """A person waits for the file they asked for; a schedule's file is made for its run."""
    schedule_id = db.session.scalar(select(ExportFile.schedule_id).where(ExportFile.id == export_id))
    return WorkPriority.INTERACTIVE if schedule_id is None else WorkPriority.SCHEDULED


def _claim(request_id: int, seen_dispatch_count: int, job_id: str) -> None:
    """The next dispatch of the row is `job_id`'s, from the dispatch count the dispatcher saw. Committed."""
    claimed = execute_dml(
        update(ExportFileRequest)
        .where(ExportFileRequest.id == request_id, ExportFileRequest.dispatch_count == seen_dispatch_count)
        .values(dispatch_count=seen_dispatch_count + 1, dispatched_at=database_now(), job_id=job_id)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:
        db.session.rollback()
        raise TransitionRefused(f"export request {request_id} was dispatched already past {seen_dispatch_count}")
    db.session.commit()


def lost(now: datetime) -> list[Candidate]:
    """Queued files dispatched longer than LOST_AFTER before `now`: the engine dispatches again
    those whose job Redis no longer has, or that can no longer run."""
    rows = db.session.execute(
        select(
            ExportFileRequest.id,
            ExportFileRequest.export_id,
            ExportFileRequest.dispatch_count,
            ExportFileRequest.job_id,
        )
        .join(ExportFile, ExportFile.id == ExportFileRequest.export_id)
        .where(ExportFile.status == FileStatus.QUEUED, ExportFileRequest.dispatched_at < now - LOST_AFTER)
        .order_by(ExportFileRequest.id)
    ).all()
    db.session.rollback()
    return [
        Candidate(row.export_id, row.job_id, partial(dispatch, row.id, row.export_id, row.dispatch_count))
        for row in rows
    ]


def requeue(export_id: int, now: datetime) -> Requeue:
    """A staff requeue of the file: refused once it settled, or while its holder is alive."""
    export = db.session.get(ExportFile, export_id)
    if export is None:
        raise RequeueRefused(f"File {export_id} no longer exists.")
    if export.status not in ACTIVE_FILE_STATUSES:
        raise RequeueRefused.finished(f"File {export_id}", export.status, " Its requester can request a new one.")
    if export.status == FileStatus.RUNNING:
        refuse_while_held(f"File {export_id}", "being produced", export.lease_expires_at, now)
    request_id, seen_dispatch_count = export.outbox.id, export.outbox.dispatch_count
    return Requeue(
        export.workspace_id, "file", f"File {export_id}", lambda: dispatch(request_id, export_id, seen_dispatch_count)
    )
