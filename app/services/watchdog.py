"""The watchdog: running files whose worker died are dispatched again (DESIGN §6, §9).

RQ does not redeliver the job of a killed worker (it ends up failed, much later), so the
database decides: a running file whose heartbeat (its last progress write) is older than
STALL_SECONDS gets a new job, which restarts it into the same key. A file that stalls again and
again is failed with `timeout` so that nothing loops forever.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import select

from app.domain import export_file
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models import QueryExport, QueryExportRequest
from app.models.export_file import FailureCode, FileStatus
from app.models.types import utcnow
from app.services.outbox import dispatch

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5


def redeliver_stalled(now: datetime | None = None) -> int:
    """Dispatch stalled running files again, or fail those out of attempts; returns how many were handled.

    `now` is the clock stalls are judged by; what is recorded carries the real time.
    """
    now = now or utcnow()
    stalled_before = now - timedelta(seconds=current_app.config["SETTINGS"].stall_seconds)
    stalled = db.session.execute(
        select(
            QueryExport.id,
            QueryExport.attempt_count,
            QueryExportRequest.id.label("request_id"),
            QueryExportRequest.dispatch_count,
        )
        .join(QueryExportRequest, QueryExportRequest.export_id == QueryExport.id)
        .where(
            QueryExport.status == FileStatus.RUNNING,
            QueryExport.heartbeat_at < stalled_before,
            # A redelivery gets a whole stall period to start before it is judged lost in turn.
            QueryExportRequest.dispatched_at < stalled_before,
        )
        .order_by(QueryExport.id)
    ).all()
    db.session.rollback()

    handled = 0
    for row in stalled:
        if row.attempt_count >= MAX_ATTEMPTS:
            handled += _give_up(row.id, row.attempt_count)
        else:
            log.warning("export file %s stopped making progress; dispatching it again", row.id)
            handled += dispatch(row.request_id, row.id, row.dispatch_count)
    return handled


def _give_up(export_id: int, attempts: int) -> bool:
    detail = (
        f"The file was started {attempts} times and each attempt stopped making progress "
        "(its worker stopped or was too slow), so it was given up."
    )
    try:
        export_file.fail(export_id, attempts, FailureCode.TIMEOUT, detail)
    except TransitionRefused:
        return False
    log.warning("export file %s failed after %s stalled attempts", export_id, attempts)
    return True
