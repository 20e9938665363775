"""The workspace-export watchdog: a running execution whose worker died is dispatched again.
The work engine runs it as the executions' `redeliver_lapsed` turn (app/services/work/kinds.py).

As for export files (app/services/watchdog.py), the database decides. A running execution is
abandoned when the lease its attempt keeps renewing has lapsed (app/services/leases.py): its
holder died. A live attempt keeps renewing its lease, so it is never judged abandoned however
long one step takes (a count inside the snapshot, a large volume, a slow delivery's copy); a
hung one is ended by the job timeout.

An abandoned execution gets a new job through its own dispatch
(app/services/execution_dispatch.py). The new attempt takes the execution over only because the
lease lapsed (`export_execution.start_attempt`), removes what earlier attempts left unpublished,
and goes on (app/services/package_production.py): from the start, or from its delivery when an
earlier attempt had already made the package available. The dead attempt, should it wake, finds
every update refused and changes nothing.

An execution abandoned MAX_ATTEMPTS times is given up: failed `stalled` (fenced on the attempt
the watchdog saw), the unpublished leftovers of its attempts removed, and the EXECUTION_FAILED
notice sent, as for every failure. The failure is the platform's, so it does not count against
the workspace's allowance (app/services/execution_admission.py).
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import or_, select

from app.domain import export_execution
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models.types import utcnow
from app.models.workspace_export import ExecutionStatus, ExportExecution, ExportPackage
from app.services import execution_dispatch, export_notices
from app.services.leases import lease_lapsed
from app.services.package_cleanup import remove_leftovers_of_settled
from app.services.queue import redis_connection
from app.services.work.core import LOST_AFTER, dispatch_is_waiting

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3


def redeliver_abandoned_executions(now: datetime | None = None) -> int:
    """Dispatch again running executions whose holder's lease lapsed, or give up those out of
    attempts. Returns how many were handled. `now` is the clock leases are judged by."""
    now = now or utcnow()
    abandoned = db.session.execute(
        select(
            ExportExecution.id,
            ExportExecution.workspace_id,
            ExportExecution.attempt_count,
            ExportExecution.lease_holder,
            ExportExecution.job_id,
        )
        .where(
            ExportExecution.status == ExecutionStatus.RUNNING,
            lease_lapsed(ExportExecution.lease_expires_at, now),
            # A dispatch this recent may still be on its way into Redis.
            or_(ExportExecution.dispatched_at.is_(None), ExportExecution.dispatched_at < now - LOST_AFTER),
        )
        .order_by(ExportExecution.id)
    ).all()
    db.session.rollback()
    if not abandoned:
        return 0
    connection = redis_connection()
    handled = 0
    for row in abandoned:
        if dispatch_is_waiting(connection, row.job_id, now):
            continue  # the redelivery already made is about to start the next attempt
        if row.attempt_count >= MAX_ATTEMPTS:
            handled += _give_up(row.id, row.workspace_id, row.attempt_count)
            continue
        log.warning(
            "workspace export %s: its holder %s stopped renewing its lease at attempt %s; dispatching it again",
            row.id,
            row.lease_holder,
            row.attempt_count,
        )
        handled += execution_dispatch.dispatch(row.id, row.job_id)
    return handled


def _give_up(execution_id: int, workspace_id: int, attempts: int) -> bool:
    published = db.session.scalar(select(ExportPackage.id).where(ExportPackage.execution_id == execution_id))
    db.session.rollback()
    kept = (
        "Its package had been made available and is kept: its page shows it and its deliveries."
        if published is not None
        else "Nothing of it was kept."
    )
    detail = (
        f"The export was started {attempts} times and each time the worker producing it stopped (it was killed "
        f"or its machine went away), so it was given up. {kept} The failure was ours: it does not count against "
        "the workspace's export allowance, so you can export again."
    )
    try:
        export_execution.settle_stalled(execution_id, attempts, detail)
    except TransitionRefused:
        return False  # it moved on (a new attempt started, or it settled) since it was read
    log.warning("workspace export %s given up after %s abandoned attempts", execution_id, attempts)
    remove_leftovers_of_settled(workspace_id, execution_id, attempts)
    export_notices.notify_execution_failed(execution_id, workspace_id)
    return True
