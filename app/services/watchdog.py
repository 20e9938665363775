"""The files' watchdog: running files whose worker died are dispatched again (DESIGN §6, §9).
The work engine runs it as the files' `redeliver_lapsed` turn (app/services/work/kinds.py).

RQ does not redeliver the job of a killed worker (it ends up failed, much later), so the
database decides. A running file is stalled when the lease its attempt keeps renewing has
lapsed (app/services/leases.py): its holder died. A slow but live attempt keeps renewing and is
never judged stalled, however long one step takes; a hung one is ended by the job timeout.
A stalled file gets a new job, which restarts it into the same key. A file that stalls again
and again is failed with `timeout` so that nothing loops forever.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select

from app.domain import export_file
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models import QueryExport, QueryExportRequest
from app.models.export_file import FailureCode, FileStatus
from app.models.types import utcnow
from app.services.leases import lease_lapsed
from app.services.outbox import dispatch
from app.services.queue import redis_connection
from app.services.work.core import LOST_AFTER, dispatch_is_waiting

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5


def redeliver_stalled(now: datetime | None = None) -> int:
    """Dispatch again running files whose holder's lease lapsed, or fail those out of attempts.

    Returns how many were handled. `now` is the clock leases are judged by; what is recorded
    carries the real time.
    """
    now = now or utcnow()
    stalled = db.session.execute(
        select(
            QueryExport.id,
            QueryExport.attempt_count,
            QueryExport.lease_holder,
            QueryExportRequest.id.label("request_id"),
            QueryExportRequest.dispatch_count,
            QueryExportRequest.job_id,
        )
        .join(QueryExportRequest, QueryExportRequest.export_id == QueryExport.id)
        .where(
            QueryExport.status == FileStatus.RUNNING,
            lease_lapsed(QueryExport.lease_expires_at, now),
            # A dispatch this recent may still be on its way into Redis.
            QueryExportRequest.dispatched_at < now - LOST_AFTER,
        )
        .order_by(QueryExport.id)
    ).all()
    db.session.rollback()
    if not stalled:
        return 0

    connection = redis_connection()
    handled = 0
    for row in stalled:
        if dispatch_is_waiting(connection, row.job_id, now):
            continue  # the redelivery already made is about to start the file
        if row.attempt_count >= MAX_ATTEMPTS:
            handled += _give_up(row.id, row.attempt_count)
        else:
            log.warning(
                "export file %s: its holder %s stopped renewing its lease; dispatching it again",
                row.id,
                row.lease_holder,
            )
            handled += dispatch(row.request_id, row.id, row.dispatch_count)
    return handled


def _give_up(export_id: int, attempts: int) -> bool:
    detail = (
        f"The file was started {attempts} times and each time the worker producing it stopped "
        "(it was killed or its machine went away), so it was given up."
    )
    try:
        export_file.fail(export_id, attempts, FailureCode.TIMEOUT, detail)
    except TransitionRefused:
        return False
    log.warning("export file %s failed after %s abandoned attempts", export_id, attempts)
    return True
