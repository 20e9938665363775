"""The files' watchdog: running files whose worker died are dispatched again (DESIGN §6, §9).
The work engine's lapsed-lease turn runs it through the files' spec (app/services/work/kinds.py).

RQ does not redeliver the job of a killed worker (it ends up failed, much later), so the
database decides. A running file is stalled when the lease its attempt keeps renewing has
lapsed (app/services/work/leases.py): its holder died. A slow but live attempt keeps renewing and is
never judged stalled, however long one step takes; a hung one is ended by the job timeout.
A stalled file gets a new job, which restarts it into the same key. A file that stalls again
and again is failed with `timeout` so that nothing loops forever.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.files import export_file
from app.domain.timing.retry_policy import RetryPolicy
from app.extensions import db
from app.models import ExportFile, ExportFileRequest
from app.models.export_file import FailureCode, FileStatus
from app.services.files.outbox import dispatch
from app.services.work.leases import lease_lapsed
from app.services.work.work_kind import LOST_AFTER, Candidate, lapsed_candidate

# A file whose worker stopped is started again at once, up to five attempts in all.
RETRIES = RetryPolicy(max_attempts=5)


def lapsed(now: datetime) -> list[Candidate]:
    """Running files whose holder's lease lapsed by `now` (the clock leases are judged by)."""
    rows = db.session.execute(
        select(
            ExportFile.id,
            ExportFile.attempt_count,
            ExportFile.lease_holder,
            ExportFileRequest.id.label("request_id"),
            ExportFileRequest.dispatch_count,
            ExportFileRequest.job_id,
        )
        .join(ExportFileRequest, ExportFileRequest.export_id == ExportFile.id)
        .where(
            ExportFile.status == FileStatus.RUNNING,
            lease_lapsed(ExportFile.lease_expires_at, now),
            # A dispatch this recent may still be on its way into Redis.
            ExportFileRequest.dispatched_at < now - LOST_AFTER,
        )
        .order_by(ExportFile.id)
    ).all()
    db.session.rollback()
    return [lapsed_candidate(row, partial(dispatch, row.request_id, row.id, row.dispatch_count)) for row in rows]


def give_up(candidate: Candidate, now: datetime) -> bool:
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
