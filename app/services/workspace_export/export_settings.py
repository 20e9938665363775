"""Workspace export settings: read them (or the defaults a new form starts from) and save them.

One record per workspace (INV-09), only for a live workspace that is not a sandbox (INV-10).
Staff may suspend the record: it is then read-only for the workspace and saving is refused with
their reason. Saving is guarded by the version the administrator opened, recomputes when the
cadence next admits an execution, and is audited in the same transaction (INV-11).
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.domain.errors import ChangedMeanwhile, DomainError
from app.domain.people.access import RequesterContext
from app.domain.workspace_export.export_cadence import next_cadence_at
from app.domain.workspace_export.export_settings_rules import (
    CheckedSettings,
    SettingsInput,
    active_datasets,
    check_settings,
)
from app.extensions import db, execute_dml
from app.models import Workspace
from app.models.export_settings import DEFAULT_VOLUME_SIZE_MB, Cadence, ExportSettings, SettingsStatus
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.accounts.workspaces import members_by_name
from app.services.destinations.configuration_gate import export_settings_of, refuse_changes
from app.vocabulary import PackageFormat


def get_or_default(workspace_id: int) -> ExportSettings:
    """The workspace's settings, or unsaved defaults for the form (every active dataset, CSV, no cadence)."""
    settings = export_settings_of(workspace_id)
    if settings is not None:
        return settings
    return ExportSettings(
        workspace_id=workspace_id,
        datasets=list(active_datasets()),
        format=PackageFormat.CSV,
        volume_size_mb=DEFAULT_VOLUME_SIZE_MB,
        retention_days=7,
        cadence=Cadence.OFF,
        cadence_time="02:00",
        cadence_weekday=None,
        cadence_day=None,
        next_cadence_at=None,
        notify_person_ids=[],
        status=SettingsStatus.ACTIVE,
        suspended_reason=None,
        version=0,
    )


def workspace_zone(workspace_id: int) -> str:
    return db.session.scalar(select(Workspace.time_zone).where(Workspace.id == workspace_id)) or "UTC"


def save(access: RequesterContext, data: SettingsInput, expected_version: int | None) -> ExportSettings:
    """Create (expected_version None) or change the workspace's settings; nothing is written when refused."""
    workspace_id = access.workspace_id
    refuse_changes(workspace_id)
    member_ids = frozenset(member.id for member in members_by_name(workspace_id))
    zone = workspace_zone(workspace_id)
    checked = check_settings(data, member_ids, zone)
    now = utcnow()
    values = _values(checked, zone, now)
    existing = export_settings_of(workspace_id)
    try:
        if existing is None:
            if expected_version is not None:
                raise _changed_meanwhile()
            settings = ExportSettings(workspace_id=workspace_id, version=1, created_at=now, **values)
            db.session.add(settings)
            db.session.flush()
            action, details = "export_settings.created", {"settings": _audited(values)}
        else:
            if expected_version is None:
                raise _changed_meanwhile()
            before = _audited(_current_values(existing))
            result = execute_dml(
                update(ExportSettings)
                .where(
                    ExportSettings.id == existing.id,
                    ExportSettings.workspace_id == workspace_id,
                    ExportSettings.version == expected_version,
                    ExportSettings.status != SettingsStatus.SUSPENDED,
                )
                .values(version=ExportSettings.version + 1, **values)
                .execution_options(synchronize_session=False)
            )
            if result.rowcount != 1:
                raise _changed_meanwhile()
            settings = existing
            after = _audited(values)
            action = "export_settings.changed"
            details = {
                "changed": {key: {"from": before[key], "to": after[key]} for key in after if before[key] != after[key]}
            }
        audit.record(
            workspace_id=workspace_id,
            actor_id=access.person_id,
            action=action,
            subject_type="export_settings",
            subject_id=settings.id,
            details=details,
        )
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise _changed_meanwhile() from None
    except DomainError:
        db.session.rollback()
        raise
    db.session.refresh(settings)
    return settings


def _changed_meanwhile() -> ChangedMeanwhile:
    """Someone else created or saved the settings after this form was opened."""
    return ChangedMeanwhile("export settings", plural=True)


def _values(checked: CheckedSettings, zone: str, now) -> dict:
    cadence_runs = checked.cadence != Cadence.OFF and checked.status == SettingsStatus.ACTIVE
    return {
        "datasets": checked.datasets,
        "format": checked.format,
        "volume_size_mb": checked.volume_size_mb,
        "retention_days": checked.retention_days,
        "cadence": checked.cadence,
        "cadence_time": checked.cadence_time,
        "cadence_weekday": checked.cadence_weekday,
        "cadence_day": checked.cadence_day,
        "next_cadence_at": next_cadence_at(
            checked.cadence, checked.cadence_time, checked.cadence_weekday, checked.cadence_day, zone, now
        )
        if cadence_runs
        else None,
        "notify_person_ids": checked.notify_person_ids,
        "status": checked.status,
        "updated_at": now,
    }


_AUDITED_FIELDS = (
    "datasets",
    "format",
    "volume_size_mb",
    "retention_days",
    "cadence",
    "cadence_time",
    "cadence_weekday",
    "cadence_day",
    "notify_person_ids",
    "status",
)


def _current_values(settings: ExportSettings) -> dict:
    return {field: getattr(settings, field) for field in _AUDITED_FIELDS}


def _audited(values: dict) -> dict:
    return {field: values[field] for field in _AUDITED_FIELDS}


def snapshot(settings: ExportSettings) -> dict:
    """The copy of the settings an execution keeps (the brief's fixed shape)."""
    return {
        "datasets": list(settings.datasets),
        "format": settings.format,
        "volume_size_bytes": settings.volume_size_mb * 1024 * 1024,
        "retention_days": settings.retention_days,
        "notify_person_ids": list(settings.notify_person_ids),
        "settings_version": settings.version,
    }
