"""Staff suspension of a workspace's export (DESIGN section 8): settings `active | paused →
suspended` with a reason, and `suspended → active`. While suspended the settings are read-only
for the workspace and admission refuses, saying why. Each is one guarded UPDATE; neither commits:
the caller records the audit event in the same transaction.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from app.domain import transitions
from app.domain.people.staff_rules import REASON_LIMIT
from app.extensions import db
from app.models.export_settings import ExportSettings, SettingsStatus
from app.models.types import database_time


def suspend(workspace_id: int, reason: str, now: datetime | None = None) -> None:
    """Suspend the workspace's export; a workspace without settings gets suspended ones."""
    at = database_time(now)
    exists = db.session.scalar(select(ExportSettings.id).where(ExportSettings.workspace_id == workspace_id))
    if exists is None:
        db.session.add(
            ExportSettings(
                workspace_id=workspace_id,
                status=SettingsStatus.SUSPENDED,
                suspended_reason=reason[:REASON_LIMIT],
                created_at=at,
                updated_at=at,
            )
        )
        db.session.flush()
        return
    transitions.apply(
        ExportSettings,
        [
            ExportSettings.workspace_id == workspace_id,
            ExportSettings.status.in_((SettingsStatus.ACTIVE, SettingsStatus.PAUSED)),
        ],
        {
            "status": SettingsStatus.SUSPENDED,
            "suspended_reason": reason[:REASON_LIMIT],
            "version": ExportSettings.version + 1,
            "updated_at": at,
        },
        "This workspace's export is already suspended.",
    )


def resume(workspace_id: int, now: datetime | None = None) -> None:
    transitions.apply(
        ExportSettings,
        [ExportSettings.workspace_id == workspace_id, ExportSettings.status == SettingsStatus.SUSPENDED],
        {
            "status": SettingsStatus.ACTIVE,
            "suspended_reason": None,
            "version": ExportSettings.version + 1,
            "updated_at": database_time(now),
        },
        "This workspace's export is not suspended, so there is nothing to resume.",
    )
