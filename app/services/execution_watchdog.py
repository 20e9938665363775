"""The workspace-export watchdog: an execution that stopped making progress settles `stalled`.

A running execution is stalled when its lease lapsed (the worker producing it died: nobody
renews it, app/services/leases.py) or when it reported no progress for PACKAGE_STALL_SECONDS
(alive but hung). It settles `failed` with the code `stalled` through the guarded transition
(fenced on the attempt the watchdog saw), its attempts' open uploads are aborted and objects
removed, and an EXECUTION_FAILED notice goes out, so the workspace can export again at once.
A package already made available by the execution is left alone (it is complete and listed).
A stale attempt that is in fact still alive finds its next update refused and stops, removing
its own objects (app/services/package_production.py).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import or_, select

from app.domain import export_execution
from app.domain.errors import TransitionRefused
from app.extensions import db
from app.models.types import utcnow
from app.models.workspace_export import ExecutionStatus, ExportExecution, ExportPackage, NoticeKind
from app.services import export_notices
from app.services.leases import lease_lapsed
from app.services.package_cleanup import remove_attempt_leftovers
from app.services.package_keys import package_prefix
from app.storage import get_storage

log = logging.getLogger(__name__)


def settle_stalled_executions(now: datetime | None = None) -> int:
    """Settle every stalled running execution; returns how many were settled."""
    now = now or utcnow()
    stall_seconds = current_app.config["SETTINGS"].package_stall_seconds
    stalled = db.session.execute(
        select(
            ExportExecution.id,
            ExportExecution.workspace_id,
            ExportExecution.attempt_count,
            ExportExecution.lease_holder,
            ExportExecution.lease_expires_at,
        )
        .where(
            ExportExecution.status == ExecutionStatus.RUNNING,
            or_(
                lease_lapsed(ExportExecution.lease_expires_at, now),
                ExportExecution.progress_at < now - timedelta(seconds=stall_seconds),
            ),
        )
        .order_by(ExportExecution.id)
    ).all()
    db.session.rollback()
    settled = 0
    for row in stalled:
        lapsed = row.lease_expires_at is None or row.lease_expires_at < now
        detail = (
            "The export stopped: the worker producing it went away (it was killed or its machine stopped). "
            "Nothing of it was kept; export again."
            if lapsed
            else f"The export stopped: it made no progress for {stall_seconds // 60} minutes. Nothing of it was "
            "kept; export again."
        )
        try:
            export_execution.settle_stalled(row.id, row.attempt_count, detail)
        except TransitionRefused:
            continue  # it moved on (finished, or a new attempt started) since it was read
        log.warning(
            "workspace export %s settled stalled (holder %s, attempt %s, lease lapsed: %s)",
            row.id,
            row.lease_holder,
            row.attempt_count,
            lapsed,
        )
        settled += 1
        _remove_leftovers(row.id, row.workspace_id, row.attempt_count)
        _notify_failed(row.id, row.workspace_id)
    return settled


def _remove_leftovers(execution_id: int, workspace_id: int, attempts: int) -> None:
    package_prefixes = set(
        db.session.scalars(select(ExportPackage.prefix).where(ExportPackage.execution_id == execution_id))
    )
    db.session.rollback()
    leftovers = [
        a for a in range(1, attempts + 1) if package_prefix(workspace_id, execution_id, a) not in package_prefixes
    ]
    try:
        remove_attempt_leftovers(get_storage(), workspace_id, execution_id, leftovers)
    except Exception:  # settled already; the objects are listed in the log for the operator
        db.session.rollback()
        log.exception("workspace export %s: removing the leftovers of attempts %s failed", execution_id, leftovers)


def _notify_failed(execution_id: int, workspace_id: int) -> None:
    try:
        export_notices.notify(NoticeKind.EXECUTION_FAILED, "execution", execution_id, workspace_id)
    except Exception:  # the periodic retry sends recorded notices
        db.session.rollback()
        log.exception("workspace export %s: the stalled notice could not be sent", execution_id)
