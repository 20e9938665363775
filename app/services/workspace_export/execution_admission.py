"""Admitting workspace exports (DESIGN section 8, INV-09, INV-10, INV-11) and cancelling them.

Admission checks, in this order: the workspace is live and not a sandbox (INV-10); its export
settings exist and are not suspended by staff (paused settings refuse only the cadence); the
settings name at least one dataset; the plan's allowance of executions per rolling 30 days is
not used up (cancelled executions don't count, nor executions the platform failed). Then the
queued execution is inserted with a copy of the settings and its audit event, in one
transaction. The partial unique index allowing one queued or running execution per workspace is
what refuses a second one (INV-09): the check before the insert only gives the friendlier
message, the index decides when two arrive at once.
The committed execution is dispatched at once; the periodic dispatcher is the safety net.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError

from app.domain.errors import Conflict, TransitionRefused
from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models import Person, Workspace
from app.models.export_execution import (
    ACTIVE_EXECUTION_STATUSES,
    PLATFORM_FAILURE_CODES,
    ExecutionStatus,
    ExecutionTrigger,
    ExportExecution,
)
from app.models.export_settings import ExportSettings, SettingsStatus
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.work import claims
from app.services.workspace_export.execution_work import EXECUTIONS
from app.services.workspace_export.export_settings import snapshot

log = logging.getLogger(__name__)

ALLOWANCE_WINDOW = timedelta(days=30)


class AdmissionRefused(Conflict):
    """An export that cannot be admitted now; the message says why, for the person who asked.

    `running_execution_id` names the workspace's queued or running execution when that is the reason.
    """

    def __init__(self, message: str, running_execution_id: int | None = None):
        super().__init__(message)
        self.running_execution_id = running_execution_id


class Allowance(NamedTuple):
    """(used, limit, next_frees_at): the allowance as the overview shows it."""

    used: int
    limit: int
    # When the oldest execution counted leaves the rolling window (None when none is counted).
    next_frees_at: datetime | None

    @property
    def left(self) -> int:
        return max(self.limit - self.used, 0)


def allowance(workspace_id: int, now: datetime | None = None) -> Allowance:
    """Executions admitted in the rolling 30 days against the plan's allowance. Cancelled ones
    don't count, nor those that failed on our side (PLATFORM_FAILURE_CODES, the one
    classification of every failure code, which the execution page's wording follows too)."""
    now = now or utcnow()
    limit = db.session.scalar(select(Workspace.export_allowance).where(Workspace.id == workspace_id)) or 0
    used, oldest = db.session.execute(
        select(func.count(ExportExecution.id), func.min(ExportExecution.created_at)).where(
            ExportExecution.workspace_id == workspace_id,
            ExportExecution.status != ExecutionStatus.CANCELLED,
            or_(
                ExportExecution.status != ExecutionStatus.FAILED,
                ExportExecution.failure_code.not_in(PLATFORM_FAILURE_CODES),
            ),
            ExportExecution.created_at > now - ALLOWANCE_WINDOW,
        )
    ).one()
    return Allowance(used=used, limit=limit, next_frees_at=oldest + ALLOWANCE_WINDOW if oldest else None)


def active_execution_id(workspace_id: int) -> int | None:
    """The workspace's queued or running execution, if it has one."""
    return db.session.scalar(
        select(ExportExecution.id).where(
            ExportExecution.workspace_id == workspace_id, ExportExecution.status.in_(ACTIVE_EXECUTION_STATUSES)
        )
    )


def admit(
    workspace_id: int,
    person: Person | None,
    trigger: ExecutionTrigger | str,
    cadence_key: str | None = None,
) -> ExportExecution:
    """Admit, audit and commit a queued execution now, then dispatch it. AdmissionRefused otherwise.

    `person` is who pressed Export now; None for the cadence.
    """
    execution = admit_uncommitted(workspace_id, person, trigger, cadence_key)
    db.session.commit()
    claims.dispatch(EXECUTIONS, execution.id, None)
    return execution


def admit_uncommitted(
    workspace_id: int,
    person: Person | None,
    trigger: ExecutionTrigger | str,
    cadence_key: str | None = None,
    now: datetime | None = None,
) -> ExportExecution:
    """The admission inside the caller's transaction (the cadence commits it with its own step):
    checked, inserted and audited, not committed. AdmissionRefused otherwise; when the insert
    itself was refused by a unique index, the caller's transaction has been rolled back."""
    now = now or utcnow()
    trigger = ExecutionTrigger(trigger)
    settings = _admissible_settings(workspace_id, trigger)
    used = allowance(workspace_id, now)
    running = active_execution_id(workspace_id)
    if running is not None:
        raise _running_refusal(running)
    if used.used >= used.limit:
        raise AdmissionRefused(_allowance_message(used))
    try:
        execution = export_execution.admit(
            workspace_id=workspace_id,
            trigger=trigger,
            requested_by_id=person.id if person is not None else None,
            settings_snapshot=snapshot(settings),
            allowance_used=used.used + 1,
            allowance_limit=used.limit,
            cadence_key=cadence_key,
            now=now,
        )
    except IntegrityError:
        # No savepoint around the insert (pysqlite mishandles them): the whole transaction goes.
        db.session.rollback()
        raise _refusal_after_conflict(workspace_id, cadence_key) from None
    audit.record(
        workspace_id=workspace_id,
        actor_id=person.id if person is not None else None,
        action="export.execution_admitted",
        subject_type="export_execution",
        subject_id=execution.id,
        details={
            "trigger": str(trigger),
            "cadence_key": cadence_key,
            "allowance_used": used.used + 1,
            "allowance_limit": used.limit,
            "settings_version": settings.version,
        },
    )
    return execution


def _admissible_settings(workspace_id: int, trigger: ExecutionTrigger) -> ExportSettings:
    workspace = db.session.get(Workspace, workspace_id)
    if workspace is None or workspace.status != "live" or workspace.sandbox:
        raise AdmissionRefused("Workspace export is only available to a live workspace outside sandbox mode.")
    settings = db.session.scalar(select(ExportSettings).where(ExportSettings.workspace_id == workspace_id))
    if settings is None:
        raise AdmissionRefused("Workspace export is not set up yet: choose what to export on the settings page first.")
    if settings.status == SettingsStatus.SUSPENDED:
        raise AdmissionRefused(f"Workspace export is suspended by Rhythm staff: {settings.suspended_reason}")
    if settings.status == SettingsStatus.PAUSED and trigger == ExecutionTrigger.CADENCE:
        raise AdmissionRefused("The export cadence is paused, so no export was started on its timetable.")
    if not settings.datasets:
        raise AdmissionRefused("The export settings include no dataset: choose at least one on the settings page.")
    return settings


def _allowance_message(used: Allowance) -> str:
    frees = f" The next one frees up on {used.next_frees_at:%Y-%m-%d at %H:%M} UTC." if used.next_frees_at else ""
    return (
        f"This workspace has used all {used.limit} exports its plan allows in any 30 days"
        f" (cancelled exports, and exports that failed on our side, don't count).{frees}"
    )


def _running_refusal(execution_id: int) -> AdmissionRefused:
    return AdmissionRefused(
        "An export of this workspace is already queued or running; a new one can start once it has finished.",
        running_execution_id=execution_id,
    )


def _refusal_after_conflict(workspace_id: int, cadence_key: str | None) -> AdmissionRefused:
    """The insert met a unique index: another admission got there first. Say which."""
    running = active_execution_id(workspace_id)
    if running is not None:
        return _running_refusal(running)
    if cadence_key is not None:
        return AdmissionRefused(f"The cadence period {cadence_key} was admitted already.")
    return AdmissionRefused("Another export of this workspace was admitted at the same moment; try again.")


def cancel(workspace_id: int, execution_id: int, person: Person) -> None:
    """queued → cancelled, audited in the same transaction. TransitionRefused once it has started."""
    execution = db.session.scalar(
        select(ExportExecution).where(ExportExecution.id == execution_id, ExportExecution.workspace_id == workspace_id)
    )
    if execution is None:
        raise TransitionRefused("This export does not exist in this workspace.")
    export_execution.cancel(execution_id, person.id)
    audit.record(
        workspace_id=workspace_id,
        actor_id=person.id,
        action="export.execution_cancelled",
        subject_type="export_execution",
        subject_id=execution_id,
    )
    db.session.commit()
    log.info("workspace export %s cancelled by person %s", execution_id, person.id)
