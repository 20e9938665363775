"""What the workspace export settings tests post: the pages' URLs and valid forms to vary."""

from __future__ import annotations

from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditEvent
from app.models.export_destination import ExportDestination
from app.models.export_settings import ExportSettings


def settings_url(workspace) -> str:
    return f"/w/{workspace.id}/export/settings"


def destinations_url(workspace, tail: str = "") -> str:
    return f"/w/{workspace.id}/export/destinations{tail}"


def settings_form(**overrides) -> dict:
    """Valid daily settings of two datasets; an override of None leaves that field out."""
    data = {
        "datasets": ["teams", "shifts"],
        "format": "jsonl",
        "volume_size_mb": "64",
        "retention_days": "14",
        "cadence": "daily",
        "cadence_time": "03:30",
        "cadence_weekday": "",
        "cadence_day": "",
        "notify_person_ids": [],
        "status": "active",
        "version": "",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"


def s3_form(**overrides) -> dict:
    """A valid S3 destination on AWS; an override of None leaves that field out."""
    data = {
        "name": "Warehouse bucket",
        "kind": "s3",
        "bucket": "northwind-exports",
        "region": "eu-west-1",
        "endpoint_url": "",
        "access_key_id": "AKIAIOSFODNN7EXAMPLE",
        "secret": SECRET,
        "path": "rhythm/packages",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def counts() -> tuple[int, int, int]:
    """Settings rows, destination rows and audit events, read fresh."""
    db.session.rollback()
    return (
        db.session.scalar(select(func.count()).select_from(ExportSettings)),
        db.session.scalar(select(func.count()).select_from(ExportDestination)),
        db.session.scalar(select(func.count()).select_from(AuditEvent)),
    )


def audit_events(action_prefix: str) -> list[AuditEvent]:
    db.session.rollback()
    return list(
        db.session.scalars(
            select(AuditEvent).where(AuditEvent.action.startswith(action_prefix)).order_by(AuditEvent.id)
        )
    )
