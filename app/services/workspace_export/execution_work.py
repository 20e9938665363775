"""Workspace-export executions as a kind of the work engine: where their records and claims are,
and what the engine cannot know of them, how an execution whose workers kept dying is given up.
`app.services.work.kinds` registers it.

As for export files (app/services/files/file_work.py), the database decides. A running execution
is abandoned when the lease its attempt keeps renewing has lapsed (app/services/work/leases.py):
its holder died. A live attempt keeps renewing its lease, so it is never judged abandoned however
long one step takes (a count inside the snapshot, a large volume, a slow delivery's copy); a
hung one is ended by the job timeout.

An abandoned execution gets a new job. The new attempt takes the execution over only because the
lease lapsed (`export_execution.start_attempt`), removes what earlier attempts left unpublished,
and goes on (app/services/workspace_export/package_production.py): from the start, or from its
delivery when an earlier attempt had already made the package available. The dead attempt,
should it wake, finds every update refused and changes nothing.

An execution abandoned as often as its retry policy allows is given up: failed `stalled` (fenced
on the attempt the engine saw), the unpublished leftovers of its attempts removed, and the
EXECUTION_FAILED notice sent, as for every failure. The failure is the platform's, so it does
not count against the workspace's allowance (app/services/workspace_export/execution_admission.py).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from app.domain.errors import TransitionRefused
from app.domain.timing.retry_policy import RESTART_A_WORKSPACE_EXPORT
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ACTIVE_EXECUTION_STATUSES, ExecutionStatus, ExportExecution
from app.models.export_package import ExportPackage
from app.services.work.queue import WorkPriority
from app.services.work.work_kind import Candidate, WorkKind
from app.services.work.work_rows import WorkRows
from app.services.workspace_export import export_notices
from app.services.workspace_export.package_cleanup import remove_leftovers_of_settled


def _give_up(candidate: Candidate, now: datetime) -> bool:
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


EXECUTIONS = WorkKind(
    name="execution",
    slug="package-execution",
    priority=WorkPriority.BULK,
    job_function="jobs.package_execution.run",
    # An execution whose worker stopped is started again at once, up to three attempts in all.
    retries=RESTART_A_WORKSPACE_EXPORT,
    rows=WorkRows.leased(
        ExportExecution,
        active=ACTIVE_EXECUTION_STATUSES,
        running=ExecutionStatus.RUNNING,
        # Admitted: its admission dispatched it, or the engine does when that dispatch failed.
        waiting=lambda now: ExportExecution.status == ExecutionStatus.QUEUED,
    ),
    label="Workspace export",
    subject_type="execution",
    # A second attempt beside a live one would find it held, and could only wait.
    held_doing="running",
    give_up=_give_up,
)
