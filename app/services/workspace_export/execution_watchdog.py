"""The workspace-export watchdog: a running execution whose worker died is dispatched again.
The work engine's lapsed-lease turn runs it through the executions' spec (app/services/work/kinds.py).

As for export files (app/services/files/watchdog.py), the database decides. A running execution is
abandoned when the lease its attempt keeps renewing has lapsed (app/services/work/leases.py): its
holder died. A live attempt keeps renewing its lease, so it is never judged abandoned however
long one step takes (a count inside the snapshot, a large volume, a slow delivery's copy); a
hung one is ended by the job timeout.

An abandoned execution gets a new job through its own dispatch
(app/services/workspace_export/execution_dispatch.py). The new attempt takes the execution over only because the
lease lapsed (`export_execution.start_attempt`), removes what earlier attempts left unpublished,
and goes on (app/services/workspace_export/package_production.py): from the start, or from its delivery when an
earlier attempt had already made the package available. The dead attempt, should it wake, finds
every update refused and changes nothing.

An execution abandoned `RETRIES.max_attempts` times is given up: failed `stalled` (fenced on the attempt
the watchdog saw), the unpublished leftovers of its attempts removed, and the EXECUTION_FAILED
notice sent, as for every failure. The failure is the platform's, so it does not count against
the workspace's allowance (app/services/workspace_export/execution_admission.py).
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import or_, select

from app.domain.errors import TransitionRefused
from app.domain.timing.retry_policy import RetryPolicy
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ExecutionStatus, ExportExecution
from app.models.export_package import ExportPackage
from app.services.work.leases import lease_lapsed
from app.services.work.work_kind import LOST_AFTER, Candidate, lapsed_candidate
from app.services.workspace_export import execution_dispatch, export_notices
from app.services.workspace_export.package_cleanup import remove_leftovers_of_settled

# An execution whose worker stopped is started again at once, up to three attempts in all.
RETRIES = RetryPolicy(max_attempts=3)


def lapsed(now: datetime) -> list[Candidate]:
    """Running executions whose holder's lease lapsed by `now` (the clock leases are judged by)."""
    rows = db.session.execute(
        select(ExportExecution.id, ExportExecution.attempt_count, ExportExecution.lease_holder, ExportExecution.job_id)
        .where(
            ExportExecution.status == ExecutionStatus.RUNNING,
            lease_lapsed(ExportExecution.lease_expires_at, now),
            # A dispatch this recent may still be on its way into Redis.
            or_(ExportExecution.dispatched_at.is_(None), ExportExecution.dispatched_at < now - LOST_AFTER),
        )
        .order_by(ExportExecution.id)
    ).all()
    db.session.rollback()
    return [lapsed_candidate(row, partial(execution_dispatch.dispatch, row.id, row.job_id)) for row in rows]


def give_up(candidate: Candidate, now: datetime) -> bool:
    """Fail the execution `stalled`, fenced on the attempt whose holder stopped, remove what its
    attempts left unpublished and tell the administrators."""
    execution_id, attempts = candidate.record_id, candidate.attempt
    workspace_id = db.session.scalar(select(ExportExecution.workspace_id).where(ExportExecution.id == execution_id))
    published = db.session.scalar(select(ExportPackage.id).where(ExportPackage.execution_id == execution_id))
    db.session.rollback()
    if workspace_id is None:
        return False
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
    remove_leftovers_of_settled(workspace_id, execution_id, attempts)
    export_notices.notify_execution_failed(execution_id, workspace_id)
    return True
