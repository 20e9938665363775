"""Whether a workspace may change what it sends to customers' storage: its export settings and
its destinations. Only a live workspace that is not a sandbox may have either (INV-10), and while
Rhythm staff have suspended its export settings both are read-only, with their reason.
"""

from __future__ import annotations

from sqlalchemy import select

from app.domain.errors import ValidationError
from app.extensions import db
from app.models import Workspace
from app.models.export_settings import ExportSettings, SettingsStatus


def export_settings_of(workspace_id: int) -> ExportSettings | None:
    return db.session.scalar(select(ExportSettings).where(ExportSettings.workspace_id == workspace_id))


def ineligibility(workspace_id: int) -> str | None:
    """Why this workspace may not have export settings or destinations (INV-10), or None when it may."""
    workspace = db.session.get(Workspace, workspace_id)
    if workspace is None or workspace.status != "live":
        return "Workspace export is only for live workspaces; this workspace is not live."
    if workspace.sandbox:
        return (
            "Workspace export is not available in a sandbox workspace: a sandbox holds practice data. "
            "Use the live workspace to export."
        )
    return None


def suspension(settings: ExportSettings | None) -> str | None:
    """The sentence shown while staff have suspended the settings, or None."""
    if settings is None or settings.status != SettingsStatus.SUSPENDED:
        return None
    return f"Rhythm staff have suspended workspace export for this workspace: {settings.suspended_reason}"


def refuse_changes(workspace_id: int) -> None:
    """ValidationError when the workspace's export configuration may not be changed now."""
    refusal = ineligibility(workspace_id) or suspension(export_settings_of(workspace_id))
    if refusal:
        raise ValidationError(refusal + " Nothing was changed.", "form")
