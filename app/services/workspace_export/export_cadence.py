"""The workspace-export cadence: admitting an execution when a workspace's cadence is due.

The scheduler calls `admit_due_cadences` every minute. Each due settings row is taken with
`FOR UPDATE SKIP LOCKED`, so schedulers on several machines share the rows instead of repeating
them, and handled in its own transaction: the execution of the latest due period is admitted
(trigger cadence, `cadence_key` naming the period, audited) and `next_cadence_at` moves past now,
guarded on the value this scheduler read. The unique index on (workspace, cadence key) is what
makes a period admit one execution, whatever the locks did (SQLite has none).

A period whose admission is refused (the allowance used up, an export still running, the
settings emptied) is skipped, not retried: the refusal is recorded as an audit event
`export.cadence_skipped` with its reason, and logged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import exists, select, update

from app.domain.errors import ValidationError
from app.domain.timing.timetable import due_occurrences, next_occurrence
from app.domain.workspace_export.export_cadence import cadence_key_at, cadence_timetable
from app.extensions import db
from app.models import Workspace
from app.models.export_execution import ExecutionTrigger, ExportExecution
from app.models.export_settings import Cadence, ExportSettings, SettingsStatus
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.work import claims
from app.services.workspace_export.execution_admission import AdmissionRefused, admit_uncommitted
from app.services.workspace_export.execution_work import EXECUTIONS

log = logging.getLogger(__name__)

_JUST_BEFORE = timedelta(microseconds=1)
# Rows handled per call at most; the next call (a minute later) takes the rest.
MAX_PER_CALL = 1000


def admit_due_cadences(now: datetime | None = None, dispatch: bool = True) -> int:
    """Handle every due cadence; returns how many settings rows this scheduler handled."""
    now = now or utcnow()
    handled = 0
    while handled < MAX_PER_CALL:
        admitted_id, found = _handle_one(now)
        if not found:
            return handled
        handled += 1
        if dispatch and admitted_id is not None:
            claims.dispatch(EXECUTIONS, admitted_id, None)
    return handled


def _handle_one(now: datetime) -> tuple[int | None, bool]:
    """Lock one due settings row and handle it in one transaction: (execution admitted, found one)."""
    row = db.session.execute(
        select(
            ExportSettings.id,
            ExportSettings.workspace_id,
            ExportSettings.cadence,
            ExportSettings.cadence_time,
            ExportSettings.cadence_weekday,
            ExportSettings.cadence_day,
            ExportSettings.next_cadence_at,
            Workspace.time_zone,
        )
        .join(Workspace, Workspace.id == ExportSettings.workspace_id)
        .where(
            ExportSettings.status == SettingsStatus.ACTIVE,
            ExportSettings.cadence != Cadence.OFF,
            ExportSettings.next_cadence_at <= now,
        )
        .order_by(ExportSettings.next_cadence_at, ExportSettings.id)
        .limit(1)
        .with_for_update(skip_locked=True, of=ExportSettings)
    ).one_or_none()
    if row is None:
        db.session.rollback()
        return None, False
    try:
        timetable = cadence_timetable(
            row.cadence, row.cadence_time, row.cadence_weekday, row.cadence_day, row.time_zone
        )
    except ValidationError as error:
        # Stored settings the timetable cannot read would be found due on every call: stop the cadence.
        log.error("workspace %s: export cadence stopped, its settings cannot be read: %s", row.workspace_id, error)
        _advance(row.id, row.next_cadence_at, None)
        db.session.commit()
        return None, True
    assert timetable is not None  # the cadence is not off
    due = due_occurrences(timetable, row.next_cadence_at - _JUST_BEFORE, now)
    period = due.latest or row.next_cadence_at
    key = cadence_key_at(row.cadence, period, row.time_zone)
    admitted_id = None
    if not _period_admitted(row.workspace_id, key):
        admitted_id = _admit_period(row.id, row.workspace_id, key, now)
    _advance(row.id, row.next_cadence_at, next_occurrence(timetable, now))
    db.session.commit()
    return admitted_id, True


def _period_admitted(workspace_id: int, key: str) -> bool:
    return bool(
        db.session.scalar(
            select(exists().where(ExportExecution.workspace_id == workspace_id, ExportExecution.cadence_key == key))
        )
    )


def _admit_period(settings_id: int, workspace_id: int, key: str, now: datetime) -> int | None:
    try:
        execution = admit_uncommitted(workspace_id, None, ExecutionTrigger.CADENCE, cadence_key=key, now=now)
    except AdmissionRefused as refusal:
        if _period_admitted(workspace_id, key):
            # Another scheduler admitted this period meanwhile: nothing was skipped.
            return None
        log.warning("workspace %s: export cadence period %s skipped: %s", workspace_id, key, refusal)
        audit.record(
            workspace_id=workspace_id,
            actor_id=None,
            action="export.cadence_skipped",
            subject_type="export_settings",
            subject_id=settings_id,
            reason=str(refusal),
            details={"cadence_key": key, "running_execution_id": refusal.running_execution_id},
        )
        return None
    log.info("workspace %s: export cadence period %s admitted as execution %s", workspace_id, key, execution.id)
    return execution.id


def _advance(settings_id: int, seen: datetime, following: datetime | None) -> None:
    """Move the cadence on, from the instant this scheduler read (the row is locked by it)."""
    db.session.execute(
        update(ExportSettings)
        .where(ExportSettings.id == settings_id, ExportSettings.next_cadence_at == seen)
        .values(next_cadence_at=following)
        .execution_options(synchronize_session=False)
    )
